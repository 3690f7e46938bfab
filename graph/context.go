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
// first: weighted score, then co-occurrence, then name. It reads only the files that mention concept and
// what they mention: the cost is the number of links in those files.
func (g *Graph) Related(concept string, w Weight) []Relation {
	cid, ok := g.cids[concept]
	if !ok {
		return []Relation{}
	}
	accs := g.related(cid, g.weights(w))
	g.sortAccs(accs)
	out := make([]Relation, len(accs))
	for i := range accs {
		out[i] = g.relation(&accs[i], 1)
	}
	return out
}

// fileWeights memoises a Weight by file id for one query, which visits the
// same files again and again as it walks out.
type fileWeights struct {
	w   Weight
	g   *Graph
	v   []float64
	set []bool
}

func (g *Graph) weights(w Weight) *fileWeights {
	fw := &fileWeights{w: w, g: g}
	if w != nil {
		fw.v, fw.set = make([]float64, len(g.paths)), make([]bool, len(g.paths))
	}
	return fw
}

func (fw *fileWeights) of(fid int32) float64 {
	if fw.w == nil {
		return 1
	}
	if !fw.set[fid] {
		fw.v[fid], fw.set[fid] = fw.w(fw.g.paths[fid]), true
	}
	return fw.v[fid]
}

// acc is a relation being counted: compact, so that a query can weigh
// thousands of candidates and build a Relation only for those it keeps.
type acc struct {
	cid, via int32
	n        int
	weight   float64
	top      [MaxRelationFiles]weighted // heaviest files so far, in order
	ntop     int
}

// related counts the relations of concept cid, in no particular order.
func (g *Graph) related(cid int32, fw *fileWeights) []acc {
	slot := make([]int32, len(g.names)) // concept id → 1 + its index in accs
	var accs []acc
	for fid := range g.posts[cid] {
		f := weighted{g.paths[fid], fw.of(fid)}
		for _, c := range g.fcids[fid] {
			if c == cid {
				continue
			}
			k := slot[c]
			if k == 0 {
				accs = append(accs, acc{cid: c, via: cid})
				k = int32(len(accs))
				slot[c] = k
			}
			a := &accs[k-1]
			a.n++
			a.weight += f.w
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
	return accs
}

// heavier orders relations heaviest first: weighted score, then
// co-occurrence, then name, so that equal graphs give equal answers.
func (g *Graph) heavier(a, b *acc) int {
	if c := cmp.Compare(b.weight, a.weight); c != 0 {
		return c
	}
	if c := cmp.Compare(b.n, a.n); c != 0 {
		return c
	}
	return strings.Compare(g.names[a.cid], g.names[b.cid])
}

func (g *Graph) sortAccs(accs []acc) {
	slices.SortFunc(accs, func(a, b acc) int { return g.heavier(&a, &b) })
}

func (g *Graph) relation(a *acc, depth int) Relation {
	files := make([]string, a.ntop)
	for j := range a.ntop {
		files[j] = a.top[j].path
	}
	return Relation{Name: g.names[a.cid], CoOccurrence: a.n, Weighted: a.weight, Files: files, Via: g.names[a.via], Depth: depth}
}

type weighted struct {
	path string
	w    float64
}

// before orders files heaviest first, then by path.
func (x weighted) before(y weighted) bool {
	return x.w > y.w || x.w == y.w && x.path < y.path
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
	fw := g.weights(opt.Weight)
	cid := g.cids[concept]
	seen := make([]bool, len(g.names))
	seen[cid] = true
	direct := g.related(cid, fw)
	g.sortAccs(direct)
	frontier := direct[:min(len(direct), opt.MaxEntities)]
	for i := range frontier {
		seen[frontier[i].cid] = true
		c.Direct = append(c.Direct, g.relation(&frontier[i], 1))
	}
	for depth := 2; depth <= opt.Depth && len(frontier) > 0 && len(c.Expanded) < opt.MaxEntities; depth++ {
		slot := make([]int32, len(g.names)) // concept id → 1 + its index in level
		var level []acc
		for _, f := range frontier {
			for _, a := range g.related(f.cid, fw) {
				if seen[a.cid] {
					continue
				}
				switch k := slot[a.cid]; {
				case k == 0:
					level = append(level, a)
					slot[a.cid] = int32(len(level))
				case g.heavier(&a, &level[k-1]) < 0 || g.heavier(&a, &level[k-1]) == 0 && g.names[a.via] < g.names[level[k-1].via]:
					level[k-1] = a
				}
			}
		}
		g.sortAccs(level)
		level = level[:min(len(level), opt.MaxEntities-len(c.Expanded))]
		for i := range level {
			seen[level[i].cid] = true
			c.Expanded = append(c.Expanded, g.relation(&level[i], depth))
		}
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
			members = append(members, Concept{Name: name, Mentions: g.counts[g.cids[name]]})
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
