package rank

import (
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
