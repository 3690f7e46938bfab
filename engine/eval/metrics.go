// Package eval scores ranked search results against judged queries: recall,
// hit rate, nDCG and MRR per query, their means overall and per category,
// latency percentiles, and a paired randomisation test between two runs.
//
// The definitions are those of the benchmark's reference scorer, tools/score.py
// in the shared benchmark data ($MNEMO_BENCH_DATA, not part of this
// repository), so a number
// printed by `mnemo eval` can be put beside the benchmark's reference table:
//
//	recall@k = |relevant in top k| / |relevant|                 (k = 1, 5, 10, 20)
//	hit@k    = 1 if any relevant memory is in the top k         (k = 3, 10)
//	nDCG@10  = Σ_{r<10} gain(d_r)/log2(r+2) / IDCG, where gain is the query's
//	           "grades"[d] when it has grades, else 1 for relevant memories,
//	           and IDCG comes from the ideal order of all judged memories
//	MRR@10   = 1/rank of the first relevant memory in the top 10, else 0
//
// Every function is pure; reading files and running the engine is the
// caller's business (cmd/mnemo/eval.go).
package eval

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// Metrics names every metric Scores holds, in score.py's order. A name is
// what Scores.Get accepts and the key under which JSON prints the value.
var Metrics = []string{"R@1", "R@5", "R@10", "R@20", "nDCG@10", "MRR@10", "hit@3", "hit@10"}

// Summary names the metrics a one-line summary shows, as score.py prints them.
var Summary = []string{"R@1", "R@5", "R@10", "nDCG@10", "MRR@10", "hit@3"}

// Scores are one query's metrics, or their means over a set of queries.
type Scores struct {
	R1     float64 `json:"R@1"`
	R5     float64 `json:"R@5"`
	R10    float64 `json:"R@10"`
	R20    float64 `json:"R@20"`
	NDCG10 float64 `json:"nDCG@10"`
	MRR10  float64 `json:"MRR@10"`
	Hit3   float64 `json:"hit@3"`
	Hit10  float64 `json:"hit@10"`
}

// field maps a metric name to its field in s.
func (s *Scores) field(metric string) *float64 {
	switch metric {
	case "R@1":
		return &s.R1
	case "R@5":
		return &s.R5
	case "R@10":
		return &s.R10
	case "R@20":
		return &s.R20
	case "nDCG@10":
		return &s.NDCG10
	case "MRR@10":
		return &s.MRR10
	case "hit@3":
		return &s.Hit3
	case "hit@10":
		return &s.Hit10
	}
	return nil
}

// Get returns the metric called name (one of Metrics); ok is false for an
// unknown name.
func (s Scores) Get(name string) (v float64, ok bool) {
	if f := s.field(name); f != nil {
		return *f, true
	}
	return 0, false
}

// CheckMetric returns an error naming the valid metrics when name is not one.
func CheckMetric(name string) error {
	if !slices.Contains(Metrics, name) {
		return fmt.Errorf("unknown metric %q (want one of %v)", name, Metrics)
	}
	return nil
}

// add adds o to s, field by field.
func (s *Scores) add(o Scores) {
	for _, m := range Metrics {
		*s.field(m) += *o.field(m)
	}
}

// div divides every field by n.
func (s *Scores) div(n float64) {
	for _, m := range Metrics {
		*s.field(m) /= n
	}
}

// Score computes one query's metrics from its judgments and the memories
// the system returned, best first. Repeats of a memory after its first
// place are ignored, as score.py ignores them. A query without relevant
// memories scores 0 everywhere rather than dividing by zero.
func Score(q Query, ranked []string) Scores {
	rel := make(map[string]bool, len(q.Relevant))
	for _, r := range q.Relevant {
		rel[r] = true
	}
	var s Scores
	if len(rel) == 0 {
		return s
	}
	ranked = unique(ranked)
	inTop := func(k int) int {
		n := 0
		for _, d := range ranked[:min(k, len(ranked))] {
			if rel[d] {
				n++
			}
		}
		return n
	}
	recall := func(k int) float64 { return float64(inTop(k)) / float64(len(rel)) }
	hit := func(k int) float64 {
		if inTop(k) > 0 {
			return 1
		}
		return 0
	}
	s.R1, s.R5, s.R10, s.R20 = recall(1), recall(5), recall(10), recall(20)
	s.Hit3, s.Hit10 = hit(3), hit(10)
	for r, d := range ranked[:min(10, len(ranked))] {
		if rel[d] {
			s.MRR10 = 1 / float64(r+1)
			break
		}
	}
	s.NDCG10 = ndcg10(q, ranked, rel)
	return s
}

// unique drops every repeat of a memory after its first place.
func unique(ranked []string) []string {
	seen := make(map[string]bool, len(ranked))
	out := ranked[:0:0]
	for _, d := range ranked {
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

// ndcg10 is nDCG@10 with the query's grades, or gain 1 per relevant memory
// when it has none. Memories graded but not listed as relevant still count,
// as they do in score.py.
func ndcg10(q Query, ranked []string, rel map[string]bool) float64 {
	gain := func(d string) float64 {
		if len(q.Grades) > 0 {
			return q.Grades[d]
		}
		if rel[d] {
			return 1
		}
		return 0
	}
	var dcg float64
	for r, d := range ranked[:min(10, len(ranked))] {
		dcg += gain(d) / math.Log2(float64(r+2))
	}
	var ideal []float64
	if len(q.Grades) > 0 {
		for _, g := range q.Grades {
			ideal = append(ideal, g)
		}
	} else {
		for range rel {
			ideal = append(ideal, 1)
		}
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(ideal)))
	var idcg float64
	for r, g := range ideal[:min(10, len(ideal))] {
		idcg += g / math.Log2(float64(r+2))
	}
	if idcg == 0 {
		return 0
	}
	return dcg / idcg
}
