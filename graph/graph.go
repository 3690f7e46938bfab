// Package graph is the concept graph of a memory folder: the concepts its
// files link to with [[WikiLinks]], where each is mentioned (file, count,
// section headings), and the questions an agent asks of them — what
// surrounds a concept (Context), a picture of it (Mermaid), which
// concepts form a community (Louvain).
//
// The graph holds postings only: concept → the files that mention it, and
// file → the concepts it mentions. Two concepts are related when a file
// mentions both, and how often (coOccurrenceCount, the number of such
// files) is computed from the postings when asked. No pair of concepts is
// ever stored, so a file with 300 links costs 300 entries, not 45,000, and
// an edit that removes a link leaves nothing stale behind: Set replaces
// everything a file said.
//
// The package is pure: no file I/O, no clock, no environment. Names are
// taken as given; callers normalise them (markdown.NormalizeConcept). A
// Graph is not safe for concurrent use; the engine guards it.
package graph

import (
	"slices"
	"strings"
)

// Mention is how one file links to one concept: Count links in all, under
// the section headings in Sections.
type Mention struct {
	Concept  string   `json:"concept"`
	Count    int      `json:"count"`
	Sections []string `json:"sections,omitempty"`
}

// Posting is one file that mentions a concept.
type Posting struct {
	Path     string   `json:"path"`
	Count    int      `json:"count"`
	Sections []string `json:"sections,omitempty"`
}

// Graph is the concept graph. The zero value is not usable; call New.
type Graph struct {
	files    map[string][]Mention      // path → its mentions, sorted by concept
	postings map[string]map[string]int // concept → path → index into files[path]
	counts   map[string]int            // concept → links to it over all files
	links    int                       // links over all files
	version  uint64                    // bumped by every change
}

// New returns an empty graph.
func New() *Graph {
	return &Graph{files: map[string][]Mention{}, postings: map[string]map[string]int{}, counts: map[string]int{}}
}

// Set makes ms the mentions of the file at path, replacing whatever it
// mentioned before: the one way a file's links enter or change. Mentions
// with an empty concept or a count below 1 are dropped; the same concept
// twice is merged. No mentions removes the file.
func (g *Graph) Set(path string, ms []Mention) {
	g.Remove(path)
	clean := make([]Mention, 0, len(ms))
	for _, m := range ms {
		if m.Concept == "" || m.Count < 1 {
			continue
		}
		clean = append(clean, Mention{Concept: m.Concept, Count: m.Count, Sections: slices.Clone(m.Sections)})
	}
	if len(clean) == 0 {
		return
	}
	slices.SortStableFunc(clean, func(a, b Mention) int { return strings.Compare(a.Concept, b.Concept) })
	merged := clean[:1]
	for _, m := range clean[1:] {
		last := &merged[len(merged)-1]
		if m.Concept != last.Concept {
			merged = append(merged, m)
			continue
		}
		last.Count += m.Count
		for _, s := range m.Sections {
			if !slices.Contains(last.Sections, s) {
				last.Sections = append(last.Sections, s)
			}
		}
	}
	merged = slices.Clip(merged)
	g.files[path] = merged
	for i, m := range merged {
		p := g.postings[m.Concept]
		if p == nil {
			p = map[string]int{}
			g.postings[m.Concept] = p
		}
		p[path] = i
		g.counts[m.Concept] += m.Count
		g.links += m.Count
	}
	g.version++
}

// Remove forgets the file at path and every mention it made; a concept no
// file mentions any more leaves the graph.
func (g *Graph) Remove(path string) {
	old, ok := g.files[path]
	if !ok {
		return
	}
	for _, m := range old {
		p := g.postings[m.Concept]
		delete(p, path)
		if len(p) == 0 {
			delete(g.postings, m.Concept)
			delete(g.counts, m.Concept)
		} else {
			g.counts[m.Concept] -= m.Count
		}
		g.links -= m.Count
	}
	delete(g.files, path)
	g.version++
}

// Version changes whenever the graph does, so that what is derived from
// it (communities, concept vectors) knows when to recompute.
func (g *Graph) Version() uint64 { return g.version }

// Len is the number of concepts.
func (g *Graph) Len() int { return len(g.postings) }

// Links is the number of WikiLinks over all files.
func (g *Graph) Links() int { return g.links }

// Files is the number of files that link to at least one concept.
func (g *Graph) Files() int { return len(g.files) }

// Has reports whether any file mentions concept.
func (g *Graph) Has(concept string) bool { _, ok := g.postings[concept]; return ok }

// Concept is one concept with its totals.
type Concept struct {
	Name     string `json:"name"`
	Mentions int    `json:"mentions"` // links to it over all files
	Files    int    `json:"files"`    // files that link to it
}

// Concepts lists every concept, most mentioned first (ties by name).
func (g *Graph) Concepts() []Concept {
	out := make([]Concept, 0, len(g.postings))
	for name, p := range g.postings {
		out = append(out, Concept{Name: name, Mentions: g.counts[name], Files: len(p)})
	}
	slices.SortFunc(out, func(a, b Concept) int {
		if a.Mentions != b.Mentions {
			return b.Mentions - a.Mentions
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// FileMentions is what the file at path mentions, sorted by concept; nil
// if it mentions nothing. The slice is a copy.
func (g *Graph) FileMentions(path string) []Mention {
	ms := g.files[path]
	if ms == nil {
		return nil
	}
	out := make([]Mention, len(ms))
	for i, m := range ms {
		out[i] = Mention{Concept: m.Concept, Count: m.Count, Sections: slices.Clone(m.Sections)}
	}
	return out
}

// Postings lists the files that mention concept, sorted by path.
func (g *Graph) Postings(concept string) []Posting {
	p := g.postings[concept]
	out := make([]Posting, 0, len(p))
	for path, i := range p {
		m := g.files[path][i]
		out = append(out, Posting{Path: path, Count: m.Count, Sections: slices.Clone(m.Sections)})
	}
	slices.SortFunc(out, func(a, b Posting) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// Paths is every file that mentions something, sorted.
func (g *Graph) Paths() []string {
	out := make([]string, 0, len(g.files))
	for p := range g.files {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// Equal reports whether g and h hold the same mentions for the same files:
// what a graph updated edit by edit must share with one built from scratch.
func (g *Graph) Equal(h *Graph) bool {
	if len(g.files) != len(h.files) || len(g.postings) != len(h.postings) || g.links != h.links {
		return false
	}
	for path, ms := range g.files {
		hs, ok := h.files[path]
		if !ok || len(hs) != len(ms) {
			return false
		}
		for i := range ms {
			if ms[i].Concept != hs[i].Concept || ms[i].Count != hs[i].Count || !slices.Equal(ms[i].Sections, hs[i].Sections) {
				return false
			}
		}
	}
	for c, n := range g.counts {
		if h.counts[c] != n || len(h.postings[c]) != len(g.postings[c]) {
			return false
		}
	}
	return true
}
