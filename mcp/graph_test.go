package mcp_test

import (
	"slices"
	"strings"
	"testing"

	"mnemo/engine"
	"mnemo/mcp"
)

func names(rs []engine.Relation) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Name)
	}
	return out
}

// TestGraphTools drives the four graph tools over MCP on the sample vault
// and checks that a write, an edit, a move and a delete through the write
// tools show in them at once.
func TestGraphTools(t *testing.T) {
	e := newEnv(t, true, nil, mcp.Options{})
	c := ok[engine.ConceptContext](e, "BuildContext", map[string]any{"conceptName": "Recency Decay"})
	if c.Concept != "recency-decay" || len(c.DirectRelations) == 0 || len(c.DirectRelations) > 20 {
		t.Fatalf("BuildContext(recency decay) = %+v", c)
	}
	for _, r := range append(c.DirectRelations, c.ExpandedRelations...) {
		if r.CoOccurrenceCount < 1 || len(r.Files) == 0 || len(r.Files) > 3 || !strings.HasPrefix(r.Files[0], "memory://") || r.WeightedScore <= 0 {
			t.Errorf("bad relation %+v", r)
		}
	}
	if msg := e.fails("BuildContext", map[string]any{"conceptName": "recency-decy"}); !strings.Contains(msg, "recency-decay") {
		t.Errorf("unknown concept error %q does not suggest recency-decay", msg)
	}
	e.fails("BuildContext", map[string]any{"conceptName": "bbolt", "depth": 5})
	e.fails("BuildContext", map[string]any{"conceptName": ""})

	w := ok[ref](e, "WriteMemory", map[string]any{"title": "Zebra notes", "content": "[[Zebra Stripes]] relate to [[bbolt]] somehow."})
	c = ok[engine.ConceptContext](e, "BuildContext", map[string]any{"conceptName": "zebra_stripes", "depth": 1})
	if !slices.Equal(names(c.DirectRelations), []string{"bbolt"}) || c.DirectRelations[0].Files[0] != w.URI {
		t.Fatalf("after WriteMemory: %+v", c.DirectRelations)
	}
	ok[ref](e, "EditMemory", map[string]any{"identifier": w.URI, "operation": "append", "content": "\n\nAlso [[Savanna]]."})
	fc := ok[engine.FileConcepts](e, "ExtractConceptsFromFile", map[string]any{"identifier": w.URI})
	var got []string
	for _, c := range fc.Concepts {
		got = append(got, c.Name)
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"bbolt", "savanna", "zebra-stripes"}) {
		t.Errorf("after EditMemory: concepts %v", got)
	}
	mv := ok[map[string]any](e, "MoveMemory", map[string]any{"identifier": w.URI, "destination": "animals/zebra"})
	c = ok[engine.ConceptContext](e, "BuildContext", map[string]any{"conceptName": "savanna", "depth": 1})
	if len(c.DirectRelations) != 2 || c.DirectRelations[0].Files[0] != mv["uri"] {
		t.Errorf("after MoveMemory (%v): %+v", mv["uri"], c.DirectRelations)
	}
	ok[map[string]any](e, "DeleteMemory", map[string]any{"identifier": mv["uri"], "confirm": true})
	e.fails("BuildContext", map[string]any{"conceptName": "savanna"})

	d := ok[engine.Diagram](e, "Visualize", map[string]any{"conceptName": "bbolt", "maxNodes": 5})
	if d.Nodes != 5 || !strings.HasPrefix(d.Mermaid, "graph LR\n  n0[\"bbolt\"]") {
		t.Errorf("Visualize = %+v", d)
	}
	s := ok[engine.Similar](e, "FindSimilarConcepts", map[string]any{"conceptName": "bleve", "maxResults": 5})
	if len(s.Similar) != 5 || s.Similar[0].Similarity < s.Similar[4].Similarity || s.Similar[0].Similarity > 1 {
		t.Errorf("FindSimilarConcepts = %+v", s)
	}
	st := ok[map[string]any](e, "MemoryStatus", nil)
	if st["concepts"].(float64) < 10 || st["mentions"].(float64) < st["concepts"].(float64) || st["communities"].(float64) < 1 {
		t.Errorf("MemoryStatus graph counts: %v %v %v", st["concepts"], st["mentions"], st["communities"])
	}
}
