package graph

import (
	"cmp"
	"slices"
	"strings"
)

// Weight gives a file's weight in a weighted co-occurrence: the engine
// passes its recency decay, so that what recent files say counts more.
// nil weighs every file 1.
type Weight func(path string) float64

// Relation is a concept related to another by the files that mention both.
type Relation struct {
	Name string `json:"name"`
	// CoOccurrence is the number of files that mention both concepts.
	CoOccurrence int `json:"coOccurrenceCount"`
	// Weighted is the sum of those files' weights.
	Weighted float64 `json:"weightedScore"`
	// Files are up to MaxRelationFiles of those files, heaviest first.
	Files []string `json:"files"`
	// Via is the concept this one is related to: the one asked about for a
	// direct relation, a concept nearer to it for an expanded one.
	Via string `json:"via"`
	// Depth is 1 for a direct relation, 2 for a relation of one, and so on.
	Depth int `json:"depth"`
}

// MaxRelationFiles is how many files a Relation names.
const MaxRelationFiles = 3

// Related lists the concepts that share a file with concept, heaviest
// first (see byWeight). It reads only the files that mention concept and
// what they mention: the cost is the number of links in those files.
func (g *Graph) Related(concept string, w Weight) []Relation {
	type acc struct {
		rel  Relation
		top  [MaxRelationFiles]weighted // heaviest files so far, in order
		ntop int
	}
	by := map[string]*acc{}
	for path := range g.postings[concept] {
		fw := 1.0
		if w != nil {
			fw = w(path)
		}
		f := weighted{path, fw}
		for _, m := range g.files[path] {
			if m.Concept == concept {
				continue
			}
			a := by[m.Concept]
			if a == nil {
				a = &acc{rel: Relation{Name: m.Concept, Via: concept, Depth: 1}}
				by[m.Concept] = a
			}
			a.rel.CoOccurrence++
			a.rel.Weighted += fw
			// keep the MaxRelationFiles heaviest: insertion into a tiny sorted array
			i := a.ntop
			for i > 0 && f.before(a.top[i-1]) {
				i--
			}
			if i < MaxRelationFiles {
				copy(a.top[i+1:], a.top[i:])
				a.top[i] = f
				a.ntop = min(a.ntop+1, MaxRelationFiles)
			}
		}
	}
	out := make([]Relation, 0, len(by))
	for _, a := range by {
		a.rel.Files = make([]string, a.ntop)
		for i := range a.ntop {
			a.rel.Files[i] = a.top[i].path
		}
		out = append(out, a.rel)
	}
	slices.SortFunc(out, byWeight)
	return out
}

type weighted struct {
	path string
	w    float64
}

// before orders files heaviest first, then by path.
func (x weighted) before(y weighted) bool {
	return x.w > y.w || x.w == y.w && x.path < y.path
}

// byWeight orders relations heaviest first: weighted score, then
// co-occurrence, then name, so that equal graphs give equal answers.
func byWeight(a, b Relation) int {
	if c := cmp.Compare(b.Weighted, a.Weighted); c != 0 {
		return c
	}
	if c := cmp.Compare(b.CoOccurrence, a.CoOccurrence); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}

// ContextOptions shape a Context.
type ContextOptions struct {
	Depth       int    // how far to walk, ≥ 1; 1 gives direct relations only
	MaxEntities int    // at most this many direct relations, and as many expanded ones; ≥ 1
	Weight      Weight // file weights; nil weighs every file 1
	// Communities, if set, names each concept's community for the
	// siblings; see Louvain.
	Communities *Communities
}

// Context is what surrounds one concept.
type Context struct {
	Concept  string     `json:"concept"`
	Direct   []Relation `json:"directRelations"`
	Expanded []Relation `json:"expandedRelations"`
	// Siblings are other concepts of the concept's community, most
	// mentioned first, at most MaxEntities; none without Communities.
	Siblings []string `json:"communitySiblings"`
}

// Context walks out from concept: its direct relations, heaviest first,
// then level by level (up to Depth) the relations of the previous level's
// concepts that are not yet in the answer, each reached through its
// heaviest link. Only the MaxEntities heaviest of a level are walked on
// from, so the cost of a query is bounded by MaxEntities × Depth, not by
// the size of the graph. ok is false if no file mentions concept.
func (g *Graph) Context(concept string, opt ContextOptions) (c Context, ok bool) {
	if !g.Has(concept) {
		return Context{}, false
	}
	opt.Depth = max(opt.Depth, 1)
	opt.MaxEntities = max(opt.MaxEntities, 1)
	c = Context{Concept: concept, Direct: []Relation{}, Expanded: []Relation{}, Siblings: []string{}}
	direct := g.Related(concept, opt.Weight)
	c.Direct = direct[:min(len(direct), opt.MaxEntities)]
	seen := map[string]bool{concept: true}
	for _, r := range c.Direct {
		seen[r.Name] = true
	}
	frontier := c.Direct
	for depth := 2; depth <= opt.Depth && len(frontier) > 0 && len(c.Expanded) < opt.MaxEntities; depth++ {
		best := map[string]Relation{}
		for _, f := range frontier {
			for _, r := range g.Related(f.Name, opt.Weight) {
				if seen[r.Name] {
					continue
				}
				r.Depth = depth
				if b, ok := best[r.Name]; !ok || byWeight(r, b) < 0 {
					best[r.Name] = r
				}
			}
		}
		level := make([]Relation, 0, len(best))
		for _, r := range best {
			level = append(level, r)
		}
		slices.SortFunc(level, byWeight)
		level = level[:min(len(level), opt.MaxEntities-len(c.Expanded))]
		for _, r := range level {
			seen[r.Name] = true
		}
		c.Expanded = append(c.Expanded, level...)
		frontier = level
	}
	if opt.Communities != nil {
		c.Siblings = g.siblings(concept, opt.Communities, opt.MaxEntities)
	}
	return c, true
}

// siblings are the other members of concept's community, most mentioned
// first, at most n.
func (g *Graph) siblings(concept string, cs *Communities, n int) []string {
	id, ok := cs.Of(concept)
	if !ok {
		return []string{}
	}
	var members []Concept
	for _, name := range cs.Members(id) {
		if name != concept && g.Has(name) {
			members = append(members, Concept{Name: name, Mentions: g.counts[name]})
		}
	}
	slices.SortFunc(members, func(a, b Concept) int {
		if a.Mentions != b.Mentions {
			return b.Mentions - a.Mentions
		}
		return strings.Compare(a.Name, b.Name)
	})
	out := []string{}
	for _, m := range members[:min(len(members), n)] {
		out = append(out, m.Name)
	}
	return out
}
