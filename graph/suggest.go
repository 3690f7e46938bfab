package graph

import (
	"slices"
	"strings"
)

// Nearest suggests up to n known concepts for a name no file mentions:
// those that contain it or that it contains first, then those a few edits
// away (Levenshtein distance at most a third of the name, and at least 2),
// closest first, most mentioned first among equals.
func (g *Graph) Nearest(name string, n int) []string {
	type cand struct {
		name     string
		dist     int
		mentions int
	}
	limit := max(2, len([]rune(name))/3)
	var cs []cand
	for c, id := range g.cids {
		d := -1
		switch {
		case name == "":
		case strings.Contains(c, name) || strings.Contains(name, c):
			d = 0
		default:
			if k := levenshtein(name, c, limit); k <= limit {
				d = k
			}
		}
		if d >= 0 {
			cs = append(cs, cand{c, d, g.counts[id]})
		}
	}
	slices.SortFunc(cs, func(a, b cand) int {
		if a.dist != b.dist {
			return a.dist - b.dist
		}
		if a.mentions != b.mentions {
			return b.mentions - a.mentions
		}
		return strings.Compare(a.name, b.name)
	})
	out := []string{}
	for _, c := range cs[:min(len(cs), n)] {
		out = append(out, c.name)
	}
	return out
}

// levenshtein is the edit distance between a and b in runes, or limit+1
// as soon as it is known to exceed limit.
func levenshtein(a, b string, limit int) int {
	ra, rb := []rune(a), []rune(b)
	if d := len(ra) - len(rb); d > limit || -d > limit {
		return limit + 1
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			best = min(best, cur[j])
		}
		if best > limit {
			return limit + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
