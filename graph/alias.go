package graph

import (
	"maps"
	"slices"
	"strings"
)

// A memory can be known by several names: Obsidian's frontmatter aliases
// and Logseq's alias:: property say that [[AI]] and [[Artificial
// Intelligence]] are one note. The graph keeps every file's links as the
// file wrote them (raw) and counts each under the concept it resolves to,
// so a file that gains or loses an alias moves exactly the links that
// name it, whichever files they are in, and a graph updated edit by edit
// still equals one built from scratch.

// aliasTable is the alias table and the links as written.
type aliasTable struct {
	raw     map[string][]Mention         // path → its mentions as written
	decl    map[string]declared          // path → the names it declares
	byAlias map[string]map[string]string // alias → declaring path → the concept it names there
	aliasOf map[string]string            // alias → the concept it resolves to
}

type declared struct {
	concept string
	aliases []string // sorted, unique, none equal to concept
}

func newAliasTable() aliasTable {
	return aliasTable{raw: map[string][]Mention{}, decl: map[string]declared{}, byAlias: map[string]map[string]string{}, aliasOf: map[string]string{}}
}

// resolve is the concept a link to name counts for: the concept an alias
// names, else name itself. One step only: an alias of an alias is not
// followed, so no declaration can make a loop.
func (n *aliasTable) resolve(name string) string {
	if c, ok := n.aliasOf[name]; ok {
		return c
	}
	return name
}

// Resolve is the concept a link to name counts for (name itself unless
// some file declares it an alias).
func (g *Graph) Resolve(name string) string { return g.resolve(name) }

// Aliases lists the aliases that resolve to concept, sorted.
func (g *Graph) Aliases(concept string) []string {
	var out []string
	for a, c := range g.aliasOf {
		if c == concept {
			out = append(out, a)
		}
	}
	slices.Sort(out)
	return out
}

// SetNames declares that the file at path stands for concept and that each
// of aliases names it too, replacing what the file declared before (no
// aliases declares nothing). When two files declare the same alias, the
// one with the first path wins, so the outcome does not depend on the
// order files were read in.
func (g *Graph) SetNames(path, concept string, aliases []string) {
	clean := make([]string, 0, len(aliases))
	for _, a := range aliases {
		if a != "" && a != concept {
			clean = append(clean, a)
		}
	}
	slices.Sort(clean)
	clean = slices.Compact(clean)
	old := g.decl[path]
	if len(clean) == 0 && len(old.aliases) == 0 || old.concept == concept && slices.Equal(old.aliases, clean) {
		return
	}
	for _, a := range old.aliases {
		delete(g.byAlias[a], path)
		if len(g.byAlias[a]) == 0 {
			delete(g.byAlias, a)
		}
	}
	if len(clean) == 0 {
		delete(g.decl, path)
	} else {
		g.decl[path] = declared{concept: concept, aliases: clean}
	}
	for _, a := range clean {
		if g.byAlias[a] == nil {
			g.byAlias[a] = map[string]string{}
		}
		g.byAlias[a][path] = concept
	}
	touched := append(slices.Clone(old.aliases), clean...)
	slices.Sort(touched)
	for _, a := range slices.Compact(touched) {
		g.reresolve(a)
	}
	g.version++
}

// reresolve recomputes what alias resolves to and, if that changed, moves
// the links written to it.
func (g *Graph) reresolve(alias string) {
	before := g.resolve(alias)
	after := alias
	if decl := g.byAlias[alias]; len(decl) > 0 {
		first := slices.Min(slices.Collect(maps.Keys(decl)))
		after = decl[first]
	}
	if after == before {
		return
	}
	if after == alias {
		delete(g.aliasOf, alias)
	} else {
		g.aliasOf[alias] = after
	}
	// The files that wrote [[alias]] are among those counted for before.
	var moved []string
	if cid, ok := g.cids[before]; ok {
		for fid := range g.posts[cid] {
			path := g.paths[fid]
			if slices.ContainsFunc(g.raw[path], func(m Mention) bool { return m.Concept == alias }) {
				moved = append(moved, path)
			}
		}
	}
	slices.Sort(moved)
	for _, path := range moved {
		raw := g.raw[path]
		g.removeMentions(path)
		g.place(path, raw)
	}
}

func (n *aliasTable) equal(m *aliasTable) bool {
	if !maps.Equal(n.aliasOf, m.aliasOf) || len(n.decl) != len(m.decl) {
		return false
	}
	for p, d := range n.decl {
		e, ok := m.decl[p]
		if !ok || d.concept != e.concept || strings.Join(d.aliases, "\x00") != strings.Join(e.aliases, "\x00") {
			return false
		}
	}
	return true
}

// FileLinks is what the file at path links to as written, before aliases
// are resolved (what the engine stores), sorted as given; nil if nothing.
func (g *Graph) FileLinks(path string) []Mention {
	raw := g.raw[path]
	if raw == nil {
		return nil
	}
	out := make([]Mention, len(raw))
	for i, m := range raw {
		out[i] = Mention{Concept: m.Concept, Count: m.Count, Sections: slices.Clone(m.Sections)}
	}
	return out
}

// Declaring lists the files that declare alias as one of their names,
// sorted.
func (g *Graph) Declaring(alias string) []string {
	return slices.Sorted(maps.Keys(g.byAlias[alias]))
}
