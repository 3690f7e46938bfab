package web

import (
	"context"
	"net/http"

	"mnemo/engine"
)

// graphNode and graphEdge are a concept's neighbourhood as the page draws
// it: nodes sized by mentions and coloured by community, edges weighted by
// co-occurrence.
type graphNode struct {
	ID        string `json:"id"`
	Mentions  int    `json:"mentions"`
	Community int    `json:"community"`
	Depth     int    `json:"depth"`
}

type graphEdge struct {
	Source string `json:"source"`
	Target string `json:"target"`
	Weight int    `json:"weight"`
}

type graphPage struct {
	Concept string      `json:"concept"`
	Nodes   []graphNode `json:"nodes"`
	Edges   []graphEdge `json:"edges"`
}

// graph is the neighbourhood of a concept, from BuildContext: the concept,
// the concepts it co-occurs with (depth 1) and theirs (depth 2), each edge
// from the concept a relation was reached through.
func (s *Server) graph(ctx context.Context, c *Corpora, r *http.Request) (any, error) {
	a := &args{r: r}
	depth, max := a.num("depth"), a.num("max")
	if a.err != nil {
		return nil, a.err
	}
	if depth == 0 {
		depth = 2
	}
	if max == 0 {
		max = 40
	}
	cc, err := c.Memories.BuildContext(ctx, engine.ContextQuery{Concept: a.str("concept"), Depth: min(depth, 4), MaxEntities: min(max, 100)})
	if err != nil {
		return nil, err
	}
	mentions := map[string]int{}
	all, err := c.Memories.Concepts(ctx)
	if err := optional(err); err != nil {
		return nil, err
	}
	for _, ci := range all {
		mentions[ci.Name] = ci.Mentions
	}
	out := graphPage{Concept: cc.Concept, Nodes: []graphNode{{ID: cc.Concept, Mentions: mentions[cc.Concept], Community: cc.CommunityID}}, Edges: []graphEdge{}}
	seen := map[string]bool{cc.Concept: true}
	for _, rel := range append(append([]engine.Relation{}, cc.DirectRelations...), cc.ExpandedRelations...) {
		if !seen[rel.Name] {
			seen[rel.Name] = true
			out.Nodes = append(out.Nodes, graphNode{ID: rel.Name, Mentions: mentions[rel.Name], Community: rel.CommunityID, Depth: max1(rel.Depth)})
		}
		via := rel.Via
		if via == "" {
			via = cc.Concept
		}
		out.Edges = append(out.Edges, graphEdge{Source: via, Target: rel.Name, Weight: rel.CoOccurrenceCount})
	}
	return out, nil
}

func max1(n int) int { return max(n, 1) }
