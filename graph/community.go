package graph

import (
	"math/rand/v2"
	"slices"
	"strings"

	gg "gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/community"
	"gonum.org/v1/gonum/graph/iterator"
	"gonum.org/v1/gonum/graph/simple"
)

// Network is a snapshot of the co-occurrence graph for community
// detection: concepts are nodes, and two concepts are joined by an edge
// weighted by the number of files that mention both. It is built from the
// postings in one pass over the files (a file of k concepts adds k(k-1)/2
// increments, counted here and thrown away after, never stored), so a
// caller can take it under its lock and run Louvain outside it.
type Network struct {
	Version uint64   // the graph's version when the snapshot was taken
	names   []string // node id → concept, sorted
	edges   map[[2]int32]float64
}

// Network takes the snapshot.
func (g *Graph) Network() *Network {
	names := make([]string, 0, len(g.postings))
	for c := range g.postings {
		names = append(names, c)
	}
	slices.Sort(names)
	id := make(map[string]int32, len(names))
	for i, n := range names {
		id[n] = int32(i)
	}
	edges := map[[2]int32]float64{}
	for _, ms := range g.files {
		for i := range ms {
			a := id[ms[i].Concept]
			for j := i + 1; j < len(ms); j++ {
				b := id[ms[j].Concept]
				edges[[2]int32{min(a, b), max(a, b)}]++
			}
		}
	}
	return &Network{Version: g.version, names: names, edges: edges}
}

// Communities is a partition of the concepts into communities.
type Communities struct {
	Version uint64 // of the graph it was computed from
	of      map[string]int
	members [][]string // community id → concepts, sorted
}

// Of is the community of concept.
func (c *Communities) Of(concept string) (int, bool) {
	id, ok := c.of[concept]
	return id, ok
}

// Members lists the concepts of community id, sorted; it must not be changed.
func (c *Communities) Members(id int) []string {
	if id < 0 || id >= len(c.members) {
		return nil
	}
	return c.members[id]
}

// Len is the number of communities.
func (c *Communities) Len() int { return len(c.members) }

// louvainSeed fixes gonum's random node order, so that the same graph
// always gives the same communities.
const louvainSeed = 0x6d6e656d6f // "mnemo"

// Louvain partitions the network by modularity with the Louvain method
// (gonum's community.Modularize) at resolution gamma (1 is classic
// modularity; higher gives more, smaller communities). The result depends
// only on the network: nodes are numbered in name order, neighbours are
// visited in id order and the random source is seeded with a constant, so
// the same graph always gives the same communities with the same ids (ids
// go by size, largest first, then by first member's name).
func Louvain(n *Network, gamma float64) *Communities {
	c := &Communities{Version: n.Version, of: make(map[string]int, len(n.names))}
	if len(n.names) == 0 {
		return c
	}
	g := simple.NewWeightedUndirectedGraph(0, 0)
	for i := range n.names {
		g.AddNode(simple.Node(i))
	}
	adj := make([][]gg.Node, len(n.names))
	for e, w := range n.edges {
		g.SetWeightedEdge(g.NewWeightedEdge(simple.Node(e[0]), simple.Node(e[1]), w))
		adj[e[0]] = append(adj[e[0]], simple.Node(e[1]))
		adj[e[1]] = append(adj[e[1]], simple.Node(e[0]))
	}
	for _, a := range adj {
		slices.SortFunc(a, func(x, y gg.Node) int { return int(x.ID() - y.ID()) })
	}
	r := community.Modularize(ordered{g, adj}, gamma, rand.NewPCG(louvainSeed, louvainSeed))
	for _, comm := range r.Communities() {
		names := make([]string, len(comm))
		for i, node := range comm {
			names[i] = n.names[node.ID()]
		}
		slices.Sort(names)
		c.members = append(c.members, names)
	}
	slices.SortFunc(c.members, func(a, b []string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a[0], b[0])
	})
	for id, names := range c.members {
		for _, name := range names {
			c.of[name] = id
		}
	}
	return c
}

// ordered is a gonum graph whose neighbours come in id order. gonum's
// simple graphs keep them in maps, and Louvain's first level reads them in
// that (random) order, which would let ties fall differently run to run.
type ordered struct {
	*simple.WeightedUndirectedGraph
	adj [][]gg.Node
}

func (o ordered) From(id int64) gg.Nodes { return iterator.NewOrderedNodes(o.adj[id]) }
