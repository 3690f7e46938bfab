package eval

import (
	"math"
	"strings"
	"testing"
)

func TestScore(t *testing.T) {
	l2 := math.Log2
	tests := []struct {
		name   string
		q      Query
		ranked []string
		want   Scores
	}{
		{
			// Relevant at ranks 2 and 4.
			// nDCG = (1/log2 3 + 1/log2 5) / (1 + 1/log2 3) = 1.06161 / 1.63093 = 0.65092
			"binary, two relevant",
			Query{Relevant: []string{"a", "b"}},
			[]string{"x", "a", "y", "b"},
			Scores{R1: 0, R5: 1, R10: 1, R20: 1, NDCG10: (1/l2(3) + 1/l2(5)) / (1 + 1/l2(3)), MRR10: 0.5, Hit3: 1, Hit10: 1},
		},
		{
			// Gains 1 (b) and 3 (a) at ranks 1 and 2; ideal order 3, 2, 1.
			// nDCG = (1 + 3/log2 3) / (3 + 2/log2 3 + 1/2) = 2.89279 / 4.76186 = 0.60749
			"graded",
			Query{Relevant: []string{"a", "b", "c"}, Grades: map[string]float64{"a": 3, "b": 1, "c": 2}},
			[]string{"b", "a", "z"},
			Scores{R1: 1.0 / 3, R5: 2.0 / 3, R10: 2.0 / 3, R20: 2.0 / 3, NDCG10: (1 + 3/l2(3)) / (3 + 2/l2(3) + 0.5), MRR10: 1, Hit3: 1, Hit10: 1},
		},
		{
			// b is graded but not listed as relevant: it earns gain, not recall.
			// nDCG = 1 / (2 + 1/log2 3) = 0.38009
			"graded beyond relevant",
			Query{Relevant: []string{"a"}, Grades: map[string]float64{"a": 2, "b": 1}},
			[]string{"b"},
			Scores{NDCG10: 1 / (2 + 1/l2(3))},
		},
		{
			"nothing found", Query{Relevant: []string{"a"}}, []string{"x", "y"}, Scores{},
		},
		{
			"empty result list", Query{Relevant: []string{"a"}}, nil, Scores{},
		},
		{
			"no relevant memories", Query{}, []string{"a"}, Scores{},
		},
		{
			// The repeat of x does not push b to rank 3.
			"repeats ignored",
			Query{Relevant: []string{"b"}},
			[]string{"x", "x", "b"},
			Scores{R5: 1, R10: 1, R20: 1, NDCG10: 1 / l2(3), MRR10: 0.5, Hit3: 1, Hit10: 1},
		},
		{
			// Rank 11 counts for recall@20 only.
			"beyond the top ten",
			Query{Relevant: []string{"a", "a"}}, // a repeated judgment counts once
			append(strings.Split("0 1 2 3 4 5 6 7 8 9", " "), "a"),
			Scores{R20: 1},
		},
		{
			"first place",
			Query{Relevant: []string{"a", "b", "c", "d"}},
			[]string{"a"},
			Scores{R1: 0.25, R5: 0.25, R10: 0.25, R20: 0.25, NDCG10: 1 / (1 + 1/l2(3) + 1/l2(4) + 1/l2(5)), MRR10: 1, Hit3: 1, Hit10: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Score(tt.q, tt.ranked)
			for _, m := range Metrics {
				g, _ := got.Get(m)
				w, _ := tt.want.Get(m)
				if math.Abs(g-w) > 1e-12 {
					t.Errorf("%s = %.6f, want %.6f", m, g, w)
				}
			}
		})
	}
}

func TestGetAndCheckMetric(t *testing.T) {
	s := Scores{NDCG10: 0.5, Hit10: 1}
	if v, ok := s.Get("nDCG@10"); !ok || v != 0.5 {
		t.Errorf("Get(nDCG@10) = %v, %v", v, ok)
	}
	if _, ok := s.Get("ndcg"); ok {
		t.Error("Get accepted an unknown metric")
	}
	for _, m := range Metrics {
		if err := CheckMetric(m); err != nil {
			t.Errorf("CheckMetric(%s): %v", m, err)
		}
	}
	if err := CheckMetric("P@10"); err == nil || !strings.Contains(err.Error(), "nDCG@10") {
		t.Errorf("CheckMetric(P@10) = %v, want an error listing the metrics", err)
	}
}
