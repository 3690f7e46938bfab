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
// taken as given; callers normalise them (markdown.NormalizeConcept).
// Queries only read a Graph and may run concurrently with each other; Set
// and Remove must not run beside anything (the engine guards it with its
// read-write lock).
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
//
// Concepts and files are numbered internally (ids are reused after a
// removal), so that the hot loop of a query — every concept of every file
// that mentions a concept — indexes slices instead of hashing names.
type Graph struct {
	cids   map[string]int32  // concept → id
	names  []string          // concept id → name; "" when free
	posts  []map[int32]int32 // concept id → file id → index into the file's mentions
	counts []int             // concept id → links to it over all files
	cfree  []int32

	fids   map[string]int32 // path → file id
	paths  []string         // file id → path; "" when free
	fments [][]Mention      // file id → its mentions, sorted by concept
	fcids  [][]int32        // file id → the concept ids of fments, in the same order
	ffree  []int32

	links   int    // links over all files
	version uint64 // bumped by every change

	aliasTable // other names of a concept (alias.go)
}

// New returns an empty graph.
func New() *Graph {
	return &Graph{cids: map[string]int32{}, fids: map[string]int32{}, aliasTable: newAliasTable()}
}

// Set makes ms the mentions of the file at path, replacing whatever it
// mentioned before: the one way a file's links enter or change. Mentions
// with an empty concept or a count below 1 are dropped; a mention of an
// alias counts for the concept it names (SetNames); the same concept
// twice is merged. No mentions removes the file's mentions.
func (g *Graph) Set(path string, ms []Mention) {
	g.removeMentions(path)
	raw := make([]Mention, 0, len(ms))
	for _, m := range ms {
		if m.Concept == "" || m.Count < 1 {
			continue
		}
		raw = append(raw, Mention{Concept: m.Concept, Count: m.Count, Sections: slices.Clone(m.Sections)})
	}
	if len(raw) == 0 {
		delete(g.raw, path)
		return
	}
	// By name, so that mentions an alias merges come together in the same
	// order however they were given (a file's text, or the store's keys).
	slices.SortStableFunc(raw, func(a, b Mention) int { return strings.Compare(a.Concept, b.Concept) })
	g.raw[path] = raw
	g.place(path, raw)
}

// place enters a file's mentions as written, each under the concept it
// resolves to.
func (g *Graph) place(path string, raw []Mention) {
	clean := make([]Mention, len(raw))
	for i, m := range raw {
		clean[i] = Mention{Concept: g.resolve(m.Concept), Count: m.Count, Sections: slices.Clone(m.Sections)}
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
	fid := g.fileID(path)
	g.fments[fid] = merged
	ids := make([]int32, len(merged))
	for i, m := range merged {
		cid := g.conceptID(m.Concept)
		ids[i] = cid
		g.posts[cid][fid] = int32(i)
		g.counts[cid] += m.Count
		g.links += m.Count
	}
	g.fcids[fid] = ids
	g.version++
}

func (g *Graph) fileID(path string) int32 {
	var id int32
	if n := len(g.ffree); n > 0 {
		id, g.ffree = g.ffree[n-1], g.ffree[:n-1]
	} else {
		id = int32(len(g.paths))
		g.paths, g.fments, g.fcids = append(g.paths, ""), append(g.fments, nil), append(g.fcids, nil)
	}
	g.fids[path], g.paths[id] = id, path
	return id
}

func (g *Graph) conceptID(name string) int32 {
	if id, ok := g.cids[name]; ok {
		return id
	}
	var id int32
	if n := len(g.cfree); n > 0 {
		id, g.cfree = g.cfree[n-1], g.cfree[:n-1]
	} else {
		id = int32(len(g.names))
		g.names, g.posts, g.counts = append(g.names, ""), append(g.posts, nil), append(g.counts, 0)
	}
	g.cids[name], g.names[id], g.posts[id], g.counts[id] = id, name, map[int32]int32{}, 0
	return id
}

// Remove forgets the file at path: every mention it made and the names it
// declared. A concept no file mentions any more leaves the graph.
func (g *Graph) Remove(path string) {
	g.removeMentions(path)
	delete(g.raw, path)
	g.SetNames(path, "", nil)
}

// removeMentions takes the file's mentions out of the postings.
func (g *Graph) removeMentions(path string) {
	fid, ok := g.fids[path]
	if !ok {
		return
	}
	for i, cid := range g.fcids[fid] {
		m := g.fments[fid][i]
		p := g.posts[cid]
		delete(p, fid)
		g.counts[cid] -= m.Count
		g.links -= m.Count
		if len(p) == 0 {
			delete(g.cids, g.names[cid])
			g.names[cid], g.posts[cid], g.counts[cid] = "", nil, 0
			g.cfree = append(g.cfree, cid)
		}
	}
	delete(g.fids, path)
	g.paths[fid], g.fments[fid], g.fcids[fid] = "", nil, nil
	g.ffree = append(g.ffree, fid)
	g.version++
}

// Version changes whenever the graph does, so that what is derived from
// it (communities, concept vectors) knows when to recompute.
func (g *Graph) Version() uint64 { return g.version }

// Len is the number of concepts.
func (g *Graph) Len() int { return len(g.cids) }

// Links is the number of WikiLinks over all files.
func (g *Graph) Links() int { return g.links }

// Files is the number of files that link to at least one concept.
func (g *Graph) Files() int { return len(g.fids) }

// Has reports whether any file mentions concept.
func (g *Graph) Has(concept string) bool { _, ok := g.cids[concept]; return ok }

// Concept is one concept with its totals.
type Concept struct {
	Name     string `json:"name"`
	Mentions int    `json:"mentions"` // links to it over all files
	Files    int    `json:"files"`    // files that link to it
}

// Concepts lists every concept, most mentioned first (ties by name).
func (g *Graph) Concepts() []Concept {
	out := make([]Concept, 0, len(g.cids))
	for name, id := range g.cids {
		out = append(out, Concept{Name: name, Mentions: g.counts[id], Files: len(g.posts[id])})
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
	fid, ok := g.fids[path]
	if !ok {
		return nil
	}
	ms := g.fments[fid]
	out := make([]Mention, len(ms))
	for i, m := range ms {
		out[i] = Mention{Concept: m.Concept, Count: m.Count, Sections: slices.Clone(m.Sections)}
	}
	return out
}

// Postings lists the files that mention concept, sorted by path.
func (g *Graph) Postings(concept string) []Posting {
	cid, ok := g.cids[concept]
	if !ok {
		return []Posting{}
	}
	out := make([]Posting, 0, len(g.posts[cid]))
	for fid, i := range g.posts[cid] {
		m := g.fments[fid][i]
		out = append(out, Posting{Path: g.paths[fid], Count: m.Count, Sections: slices.Clone(m.Sections)})
	}
	slices.SortFunc(out, func(a, b Posting) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// Paths is every file that mentions something, sorted.
func (g *Graph) Paths() []string {
	out := make([]string, 0, len(g.fids))
	for p := range g.fids {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// Equal reports whether g and h hold the same mentions for the same files:
// what a graph updated edit by edit must share with one built from scratch.
func (g *Graph) Equal(h *Graph) bool {
	if len(g.fids) != len(h.fids) || len(g.cids) != len(h.cids) || g.links != h.links {
		return false
	}
	for path, fid := range g.fids {
		hid, ok := h.fids[path]
		if !ok {
			return false
		}
		ms, hs := g.fments[fid], h.fments[hid]
		if len(hs) != len(ms) {
			return false
		}
		for i := range ms {
			if ms[i].Concept != hs[i].Concept || ms[i].Count != hs[i].Count || !slices.Equal(ms[i].Sections, hs[i].Sections) {
				return false
			}
		}
	}
	for name, id := range g.cids {
		hid, ok := h.cids[name]
		if !ok || h.counts[hid] != g.counts[id] || len(h.posts[hid]) != len(g.posts[id]) {
			return false
		}
	}
	return g.aliasTable.equal(&h.aliasTable)
}
