package rank

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"
)

// item is a candidate's stand-in for a memory or a message.
type item struct {
	key        string
	dated, upd time.Time
}

func (i item) Key() string        { return i.key }
func (i item) Dated() time.Time   { return i.dated }
func (i item) Updated() time.Time { return i.upd }

func TestPlanCutAndWantsMore(t *testing.T) {
	f := Fuser{method: WeightedSum, wText: 1, wVec: 0.5}
	cands := func(fused ...float64) []Candidate[item] {
		var cs []Candidate[item]
		for _, x := range fused {
			cs = append(cs, Candidate[item]{Fused: x, SemRank: 1})
		}
		return cs
	}
	tests := []struct {
		name      string
		plan      Plan
		cands     []Candidate[item]
		complete  bool
		bound     float64
		cut       float64
		wantsMore bool
	}{
		{"too few candidates: anything may count", Plan{Mode: Semantic, Need: 3, Floor: 0.3, Strength: 0.02}, cands(0.9, 0.8), false, 0.7, 0, true},
		{"bound below the page", Plan{Mode: Semantic, Need: 2, Floor: 0.3, Strength: 0.02}, cands(0.9, 0.8, 0.5), false, 0.7, 0.8 * 0.98, false},
		{"bound within decay of the page", Plan{Mode: Semantic, Need: 2, Floor: 0.3, Strength: 0.02}, cands(0.9, 0.8), false, 0.79, 0.8 * 0.98, true},
		{"complete", Plan{Mode: Semantic, Need: 5, Floor: 0.3}, cands(0.9), true, -1, 0, false},
		{"bound below the floor", Plan{Mode: Semantic, Need: 5, Floor: 0.3}, cands(0.9), false, 0.29, 0, false},
		{"hybrid: text fills the page above 1/3", Plan{Mode: Hybrid, Fuser: f, Need: 2, Floor: 0.3}, cands(0.9, 0.5), false, 1, 0.5, false},
		{"hybrid: page below what meaning alone can reach", Plan{Mode: Hybrid, Fuser: f, Need: 2, Floor: 0.3}, cands(0.9, 0.2), false, 1, 0.2, true},
		{"min score", Plan{Mode: Semantic, Need: 1, Floor: 0.3, MinScore: 0.5}, cands(0.9), false, 0.6, 0.9, true},
		{"recency counts everything above the floor", Plan{Mode: Semantic, Need: 1, Floor: 0.3, Sort: ByRecency}, cands(0.9, 0.95), false, 0.31, math.Inf(-1), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Cut(tc.plan, slices.Clone(tc.cands)); math.Abs(got-tc.cut) > 1e-12 && got != tc.cut {
				t.Errorf("cut = %v, want %v", got, tc.cut)
			}
			if got := WantsMore(tc.plan, slices.Clone(tc.cands), tc.complete, tc.bound); got != tc.wantsMore {
				t.Errorf("wantsMore = %v, want %v", got, tc.wantsMore)
			}
		})
	}
}

// evidence lists the candidates' keys with their evidence, in order.
func evidence(cs []Candidate[item]) []string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s text %.2f/%d matched %d sem %.2f/%d chunk %d", c.Rec.key, c.Text, c.TextRank, c.Matched, c.Sem, c.SemRank, c.Chunk))
	}
	return out
}

// found looks items up among keys: the others are gone or out of scope.
func found(keys ...string) func(string) (item, bool) {
	return func(id string) (item, bool) {
		if slices.Contains(keys, id) {
			return item{key: id}, true
		}
		return item{}, false
	}
}

func TestTextCandidates(t *testing.T) {
	hits := []TextHit{{"a", 2, 1}, {"gone", 8, 2}, {"b", 4, 2}, {"c", 1, 1}}
	tests := []struct {
		name string
		item func(string) (item, bool)
		want []string
	}{
		{"divided by the best in scope, not the best hit", found("a", "b", "c"), []string{
			"a text 0.50/1 matched 1 sem 0.00/0 chunk 0",
			"b text 1.00/1 matched 2 sem 0.00/0 chunk 0",
			"c text 0.25/1 matched 1 sem 0.00/0 chunk 0",
		}},
		{"a narrower scope", found("a", "c"), []string{
			"a text 1.00/1 matched 1 sem 0.00/0 chunk 0",
			"c text 0.50/1 matched 1 sem 0.00/0 chunk 0",
		}},
		{"nothing in scope", found(), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := evidence(TextCandidates(hits, tc.item)); !slices.Equal(got, tc.want) {
				t.Errorf("got\n %q\nwant\n %q", got, tc.want)
			}
		})
	}
}

func TestJoin(t *testing.T) {
	text := TextCandidates([]TextHit{{"a", 2, 1}, {"b", 4, 2}}, found("a", "b"))
	near := map[string]VecHit{"a": {"a", 2, 0.1}, "b": {"b", 0, -0.2}, "c": {"c", 1, 0.9}}
	nearest := func(id string) (VecHit, bool) { h, ok := near[id]; return h, ok }
	hits := []VecHit{{"c", 1, 1.25}, {"a", 0, 0.8}, {"out", 0, 0.7}, {"d", 3, 0.5}, {"e", 0, 0.29}}
	tests := []struct {
		name    string
		nearest func(string) (VecHit, bool)
		floor   float64
		item    func(string) (item, bool)
		want    []string
	}{
		{"text first, then meaning alone above the floor", nearest, 0.3, found("a", "b", "c", "d", "e"), []string{
			"a text 0.50/1 matched 1 sem 0.10/1 chunk 2", // its own nearest chunk, however low
			"b text 1.00/1 matched 2 sem 0.00/0 chunk 0", // dissimilar: no semantic evidence
			"c text 0.00/0 matched 0 sem 1.00/1 chunk 1", // clipped at 1
			"d text 0.00/0 matched 0 sem 0.50/1 chunk 3",
		}},
		{"a lower floor", nearest, 0.2, found("a", "b", "c", "d", "e"), []string{
			"a text 0.50/1 matched 1 sem 0.10/1 chunk 2",
			"b text 1.00/1 matched 2 sem 0.00/0 chunk 0",
			"c text 0.00/0 matched 0 sem 1.00/1 chunk 1",
			"d text 0.00/0 matched 0 sem 0.50/1 chunk 3",
			"e text 0.00/0 matched 0 sem 0.29/1 chunk 0",
		}},
		{"out of scope", nearest, 0.3, found("a", "b", "d"), []string{
			"a text 0.50/1 matched 1 sem 0.10/1 chunk 2",
			"b text 1.00/1 matched 2 sem 0.00/0 chunk 0",
			"d text 0.00/0 matched 0 sem 0.50/1 chunk 3",
		}},
		{"no query vector", nil, 0.3, found("a", "b", "c", "d", "e"), []string{
			"a text 0.50/1 matched 1 sem 0.00/0 chunk 0",
			"b text 1.00/1 matched 2 sem 0.00/0 chunk 0",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Join(slices.Clone(text), tc.nearest, hits, tc.floor, tc.item)
			if g := evidence(got); !slices.Equal(g, tc.want) {
				t.Errorf("got\n %q\nwant\n %q", g, tc.want)
			}
		})
	}
	if evidence(text)[0] != "a text 0.50/1 matched 1 sem 0.00/0 chunk 0" {
		t.Errorf("Join changed the text candidates it was given: %q", evidence(text))
	}
}
