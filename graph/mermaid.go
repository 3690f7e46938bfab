package graph

import (
	"fmt"
	"slices"
	"strings"
)

// Edge joins two concepts of a Picture; Count is their co-occurrence.
type Edge struct {
	From, To string
	Count    int
}

// Picture is a concept's neighbourhood as nodes and edges, for drawing.
type Picture struct {
	Concept string
	Nodes   []string // Concept first, then in the order they were reached
	Edges   []Edge   // the walk's links, then the strongest others (EdgesPerNode), sorted
	// Hidden counts the co-occurrences between drawn concepts left out to
	// keep the drawing readable.
	Hidden int
}

// EdgesPerNode bounds a Picture's edges: at most this many per node. A
// neighbourhood is densely linked, nearly every pair of its concepts
// sharing a memory, and drawing every pair is a drawing of solid ink
// (docs/benchmarks.md, "Visualize"); two per node is the tree the walk
// followed, which joins every node to the centre, plus about one cross
// link per node, the strongest ones.
const EdgesPerNode = 2

// Picture takes concept and walks out level by level to depth, adding
// each level's heaviest relations until there are maxNodes nodes, then
// draws the link each node was reached through and, up to EdgesPerNode
// edges per node in all, the strongest other co-occurrences between drawn
// nodes (most shared files first). ok is false if no file mentions
// concept.
func (g *Graph) Picture(concept string, depth, maxNodes int, w Weight) (p Picture, ok bool) {
	if !g.Has(concept) {
		return Picture{}, false
	}
	nodes, in, tree := g.pictureNodes(g.cids[concept], max(depth, 1), max(maxNodes, 1), w)
	p = Picture{Concept: concept}
	for _, n := range nodes {
		p.Nodes = append(p.Nodes, g.names[n])
	}
	p.Edges, p.Hidden = g.pictureEdges(nodes, in, tree)
	return p, true
}

// edgeKey names an edge by its two concept ids, the lesser name first.
type edgeKey struct{ a, b int32 }

func (g *Graph) edgeKey(a, b int32) edgeKey {
	if g.names[a] > g.names[b] {
		a, b = b, a
	}
	return edgeKey{a, b}
}

// pictureNodes walks out from cid level by level, taking each level's
// heaviest relations while there is room: the nodes in the order they
// were reached, which concepts are in, and the link each was reached by.
func (g *Graph) pictureNodes(cid int32, depth, maxNodes int, w Weight) (nodes []int32, in []bool, tree map[edgeKey]bool) {
	in = make([]bool, len(g.names))
	in[cid] = true
	nodes = []int32{cid}
	frontier := []int32{cid}
	tree = map[edgeKey]bool{}
	fw := g.weights(w)
	for d := 1; d <= depth && len(frontier) > 0 && len(nodes) < maxNodes; d++ {
		slot := make([]int32, len(g.names))
		var level []acc
		for _, f := range frontier {
			for _, a := range g.related(f, fw) {
				if in[a.cid] {
					continue
				}
				if k := slot[a.cid]; k == 0 {
					level = append(level, a)
					slot[a.cid] = int32(len(level))
				} else if g.heavier(&a, &level[k-1]) < 0 {
					level[k-1] = a
				}
			}
		}
		g.sortAccs(level)
		frontier = frontier[:0:0]
		for _, a := range level[:min(len(level), maxNodes-len(nodes))] {
			in[a.cid] = true
			nodes = append(nodes, a.cid)
			frontier = append(frontier, a.cid)
			tree[g.edgeKey(a.cid, a.via)] = true
		}
	}
	return nodes, in, tree
}

// pictureEdges chooses the edges to draw between nodes: the walk's links
// first, then the other co-occurrences, most shared files first, while the
// budget of EdgesPerNode a node lasts; hidden counts the rest.
func (g *Graph) pictureEdges(nodes []int32, in []bool, tree map[edgeKey]bool) (edges []Edge, hidden int) {
	var all []Edge
	ones := g.weights(nil)
	for _, n := range nodes {
		for _, a := range g.related(n, ones) {
			if in[a.cid] && g.names[n] < g.names[a.cid] {
				all = append(all, Edge{From: g.names[n], To: g.names[a.cid], Count: a.n})
			}
		}
	}
	isTree := func(e Edge) bool { return tree[g.edgeKey(g.cids[e.From], g.cids[e.To])] }
	slices.SortFunc(all, func(a, b Edge) int {
		if ta, tb := isTree(a), isTree(b); ta != tb {
			if ta {
				return -1
			}
			return 1
		}
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return compareEdges(a, b)
	})
	edges = all[:min(len(all), max(EdgesPerNode*len(nodes), len(tree)))]
	slices.SortFunc(edges, compareEdges)
	return edges, len(all) - len(edges)
}

func compareEdges(a, b Edge) int {
	if c := strings.Compare(a.From, b.From); c != 0 {
		return c
	}
	return strings.Compare(a.To, b.To)
}

// Mermaid renders the picture as a Mermaid flowchart. Node ids are n0,
// n1, … (Concept is n0), never derived from names, and every label is
// quoted with Mermaid's entity codes for the characters that could end or
// change it, so any concept name renders: quotes, brackets, pipes, "<>",
// "#", "&", backticks, semicolons. Edges are labelled with their
// co-occurrence count; the concept's node is styled as the centre.
func (p Picture) Mermaid() string {
	var b strings.Builder
	b.WriteString("graph LR\n")
	id := make(map[string]int, len(p.Nodes))
	for i, n := range p.Nodes {
		id[n] = i
		fmt.Fprintf(&b, "  n%d[\"%s\"]\n", i, mermaidLabel(n))
	}
	for _, e := range p.Edges {
		fmt.Fprintf(&b, "  n%d ---|%d| n%d\n", id[e.From], e.Count, id[e.To])
	}
	if len(p.Nodes) > 0 {
		b.WriteString("  style n0 stroke-width:3px\n")
	}
	if p.Hidden > 0 {
		fmt.Fprintf(&b, "  %%%% %d more co-occurrences between these concepts are not drawn (at most %d edges a concept)\n", p.Hidden, EdgesPerNode)
	}
	return b.String()
}

// mermaidEntities are what a quoted Mermaid label cannot hold as itself.
// '#' goes first so the entities' own '#' are not escaped again.
var mermaidEntities = strings.NewReplacer(
	"#", "#35;",
	`"`, "#quot;",
	"<", "#lt;",
	">", "#gt;",
	"&", "#amp;",
	"`", "#96;",
	"[", "#91;",
	"]", "#93;",
	"|", "#124;",
	"{", "#123;",
	"}", "#125;",
	";", "#59;",
	"\n", " ",
	"\r", " ",
)

func mermaidLabel(s string) string { return mermaidEntities.Replace(s) }
