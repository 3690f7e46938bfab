package graph

import (
	"slices"
	"strings"
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
	names := make([]string, 0, len(g.cids))
	for c := range g.cids {
		names = append(names, c)
	}
	slices.Sort(names)
	node := make([]int32, len(g.names)) // concept id → node id (name order)
	for i, n := range names {
		node[g.cids[n]] = int32(i)
	}
	edges := map[[2]int32]float64{}
	for _, ids := range g.fcids {
		for i := range ids {
			a := node[ids[i]]
			for j := i + 1; j < len(ids); j++ {
				b := node[ids[j]]
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

// Louvain partitions the network by modularity with the Louvain method
// (Blondel et al. 2008) at resolution gamma: 1 is classic modularity,
// higher gives more, smaller communities. Each level moves nodes, one at a
// time in id order, to the neighbouring community that raises modularity
// most (a tie keeps it where it is, else goes to the first neighbour's
// community in id order), until a pass moves nothing;
// then the communities become the nodes of the next level. Nothing is
// random, so the same graph always gives the same communities, with ids
// by size (largest first, then by first member's name).
//
// It keeps each level in arrays rather than maps: the edge weights are
// looked up for every move, and gonum's community.Modularize, which keeps
// them in maps, spent most of its time there (docs/design.md compares the
// two).
func Louvain(n *Network, gamma float64) *Communities {
	c := &Communities{Version: n.Version, of: make(map[string]int, len(n.names))}
	if len(n.names) == 0 {
		return c
	}
	if gamma <= 0 {
		gamma = 1
	}
	lv := newLevel(len(n.names), n.edges)
	member := make([]int32, len(n.names)) // original node → node of the current level
	for i := range member {
		member[i] = int32(i)
	}
	for {
		comm, moved := lv.move(gamma)
		if !moved {
			break
		}
		k := renumber(comm)
		for i, m := range member {
			member[i] = comm[m]
		}
		if k == len(comm) {
			break
		}
		lv = lv.aggregate(comm, k)
	}
	byComm := map[int32][]string{}
	for i, m := range member {
		byComm[m] = append(byComm[m], n.names[i])
	}
	for _, names := range byComm {
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

// level is one level of Louvain's graph in compressed sparse rows: the
// neighbours of node i are adj[off[i]:off[i+1]], in id order, with weights
// w; self is the weight of edges inside node i (the communities of the
// level below), deg its weighted degree, m the total edge weight.
type level struct {
	off  []int32
	adj  []int32
	w    []float64
	self []float64
	deg  []float64
	m    float64
}

func newLevel(n int, edges map[[2]int32]float64) *level {
	type e struct {
		to int32
		w  float64
	}
	lists := make([][]e, n)
	for k, w := range edges {
		lists[k[0]] = append(lists[k[0]], e{k[1], w})
		lists[k[1]] = append(lists[k[1]], e{k[0], w})
	}
	lv := &level{off: make([]int32, n+1), self: make([]float64, n), deg: make([]float64, n)}
	for i, l := range lists {
		slices.SortFunc(l, func(a, b e) int { return int(a.to - b.to) })
		for _, x := range l {
			lv.adj = append(lv.adj, x.to)
			lv.w = append(lv.w, x.w)
			lv.deg[i] += x.w
		}
		lv.off[i+1] = int32(len(lv.adj))
	}
	for _, d := range lv.deg {
		lv.m += d
	}
	lv.m /= 2
	return lv
}

// maxPasses bounds the moving passes of one level; each pass that moves a
// node raises modularity, so this is a guard, not a tuning knob.
const maxPasses = 100

// move runs the local moving phase: comm[i] is node i's community (a node
// id) and moved says whether any node left its own.
func (lv *level) move(gamma float64) (comm []int32, moved bool) {
	n := len(lv.deg)
	comm = make([]int32, n)
	tot := make([]float64, n)
	for i := range comm {
		comm[i] = int32(i)
		tot[i] = lv.deg[i]
	}
	if lv.m == 0 {
		return comm, false
	}
	wc := make([]float64, n)    // weight from the node being moved to each community
	var seen []int32            // communities with wc set
	scale := gamma / (2 * lv.m) // tot·k_i·scale is the expected weight
	for range maxPasses {
		changed := false
		for i := range n {
			ki := lv.deg[i]
			if ki == 0 {
				continue
			}
			own := comm[i]
			tot[own] -= ki
			seen = append(seen[:0], own)
			for p := lv.off[i]; p < lv.off[i+1]; p++ {
				c := comm[lv.adj[p]]
				if wc[c] == 0 && c != own {
					seen = append(seen, c)
				}
				wc[c] += lv.w[p]
			}
			best, bestGain := own, wc[own]-tot[own]*ki*scale
			for _, c := range seen[1:] {
				gain := wc[c] - tot[c]*ki*scale
				if gain > bestGain+1e-12 { // a tie keeps the node where it is, else the first found
					best, bestGain = c, gain
				}
			}
			for _, c := range seen {
				wc[c] = 0
			}
			tot[best] += ki
			if best != own {
				comm[i] = best
				changed, moved = true, true
			}
		}
		if !changed {
			break
		}
	}
	return comm, moved
}

// renumber maps community ids to 0…k−1 in order of first appearance and
// returns k.
func renumber(comm []int32) int {
	ids := make(map[int32]int32, len(comm))
	for i, c := range comm {
		id, ok := ids[c]
		if !ok {
			id = int32(len(ids))
			ids[c] = id
		}
		comm[i] = id
	}
	return len(ids)
}

// aggregate makes the next level: one node per community, edges summed.
func (lv *level) aggregate(comm []int32, k int) *level {
	edges := map[[2]int32]float64{}
	self := make([]float64, k)
	for i := range comm {
		ci := comm[i]
		self[ci] += lv.self[i]
		for p := lv.off[i]; p < lv.off[i+1]; p++ {
			cj := comm[lv.adj[p]]
			switch {
			case ci == cj:
				self[ci] += lv.w[p] / 2 // seen from both ends
			case ci < cj:
				edges[[2]int32{ci, cj}] += lv.w[p]
			}
		}
	}
	next := newLevel(k, edges)
	for i := range k {
		next.self[i] = self[i]
		next.deg[i] += 2 * self[i]
		next.m += self[i]
	}
	return next
}
