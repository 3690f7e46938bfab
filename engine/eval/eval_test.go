package eval

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestReadQueries(t *testing.T) {
	in := `{"id": "conv-26/q001", "query": "When?", "scope": "conv-26/", "as_of": "2023-10-22T09:55:00Z", "category": 2, "category_name": "temporal", "answer": "7 May", "relevant": ["conv-26/a.md"]}

{"id": 7, "query": "graded", "relevant": ["a.md"], "grades": {"a.md": 3}, "source_query_number": 7}
{"id": "x", "query": "string category", "category": "howto", "relevant": []}
`
	qs, err := ReadQueries(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Query{
		{ID: "conv-26/q001", Text: "When?", Relevant: []string{"conv-26/a.md"}, Category: "2", CategoryName: "temporal", Scope: "conv-26/", AsOf: "2023-10-22T09:55:00Z"},
		{ID: "7", Text: "graded", Relevant: []string{"a.md"}, Grades: map[string]float64{"a.md": 3}},
		{ID: "x", Text: "string category", Relevant: []string{}, Category: "howto"},
	}
	if !reflect.DeepEqual(qs, want) {
		t.Errorf("ReadQueries =\n%+v\nwant\n%+v", qs, want)
	}
	if g := []string{qs[0].Group(), qs[1].Group(), qs[2].Group()}; !reflect.DeepEqual(g, []string{"cat:temporal", "", "cat:howto"}) {
		t.Errorf("groups = %q", g)
	}

	for _, bad := range []string{
		`{"query": "no id", "relevant": ["a"]}`,
		`{"id": ["a"], "query": "x"}`,
		`{"id": "a", "category": {"x": 1}}`,
		`{"id": "a", "relevant": "a.md"}`,
		`not json`,
	} {
		if _, err := ReadQueries(strings.NewReader("\n" + bad + "\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("ReadQueries(%s) error = %v, want one naming line 2", bad, err)
		}
	}
}

func TestReadRun(t *testing.T) {
	in := `{"id": "q1", "results": ["a.md", "b.md", "a.md"]}
{"id": 2, "totalCount": 2, "results": [{"path": "c.md", "score": 0.9}, {"path": "d.md"}]}
{"id": "q3", "error": "no terms", "results": []}
{"id": "q1", "results": ["e.md"]}
`
	run, err := ReadRun(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := Run{"q1": {"e.md"}, "2": {"c.md", "d.md"}, "q3": {}}
	if !reflect.DeepEqual(run, want) {
		t.Errorf("ReadRun = %v, want %v", run, want)
	}
	for _, bad := range []string{`{"results": []}`, `{"id": "a", "results": [3]}`, `{"id": "a", "results": "a.md"}`} {
		if _, err := ReadRun(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("ReadRun(%s) error = %v, want one naming line 1", bad, err)
		}
	}
}

func TestEvaluate(t *testing.T) {
	qs := []Query{
		{ID: "1", Relevant: []string{"c1/a"}, Category: "1", CategoryName: "multi-hop", Scope: "c1/"},
		{ID: "2", Relevant: []string{"c1/b"}, Category: "1", CategoryName: "multi-hop", Scope: "c1/"},
		{ID: "3", Relevant: []string{"c2/a"}, Category: "5", Scope: "c2/"},
		{ID: "4", Relevant: nil, Category: "1"}, // unjudged: never scored
		{ID: "5", Relevant: []string{"x"}},      // missing from the run
	}
	run := Run{
		"1": {"c2/z", "c1/a"}, // rank 2, rank 1 once c2/z is out of scope
		"2": {"c1/b"},
		"3": {"c2/a"},
	}
	t.Run("all", func(t *testing.T) {
		r := Evaluate(qs, run, Options{})
		if r.Missing != 1 || len(r.PerQuery) != 4 {
			t.Fatalf("missing %d, scored %d; want 1, 4", r.Missing, len(r.PerQuery))
		}
		all := r.Subsets["all"]
		if all.N != 4 || math.Abs(all.MRR10-(0.5+1+1+0)/4) > 1e-12 || math.Abs(all.R1-0.5) > 1e-12 {
			t.Errorf("all = %+v", all)
		}
		if mh := r.Subsets["cat:multi-hop"]; mh.N != 2 || math.Abs(mh.MRR10-0.75) > 1e-12 {
			t.Errorf("cat:multi-hop = %+v", mh)
		}
		if c5 := r.Subsets["cat:5"]; c5.N != 1 || c5.R1 != 1 {
			t.Errorf("cat:5 = %+v", c5)
		}
		if len(r.Subsets) != 3 {
			t.Errorf("subsets %v, want all, cat:multi-hop, cat:5", r.Subsets)
		}
		if got := r.Values("MRR@10"); !reflect.DeepEqual(got, []float64{0.5, 1, 1, 0}) {
			t.Errorf("Values(MRR@10) = %v", got)
		}
	})
	t.Run("scope and exclusion", func(t *testing.T) {
		r := Evaluate(qs, run, Options{Scope: true, ExcludeCategory: []string{"5"}})
		all := r.Subsets["all"]
		if all.N != 3 || math.Abs(all.MRR10-2.0/3) > 1e-12 {
			t.Errorf("all = %+v, want n 3 and MRR 2/3", all)
		}
		if _, ok := r.Subsets["cat:5"]; ok {
			t.Error("excluded category still reported")
		}
	})
	t.Run("numbers compare by value", func(t *testing.T) {
		r := Evaluate(qs, run, Options{ExcludeCategory: []string{"5.0", "1"}})
		if n := r.Subsets["all"].N; n != 1 {
			t.Errorf("n = %d, want 1 (only the uncategorised query)", n)
		}
	})
	t.Run("nothing selected", func(t *testing.T) {
		r := Evaluate(nil, run, Options{})
		if all, ok := r.Subsets["all"]; !ok || all.N != 0 {
			t.Errorf("all = %+v, %v", all, ok)
		}
	})
}

func TestPairedTest(t *testing.T) {
	t.Run("identical runs", func(t *testing.T) {
		a := []float64{0.1, 0.5, 1, 0}
		diff, p, err := PairedTest(a, a)
		if err != nil || diff != 0 || p != 1 {
			t.Errorf("= %v, %v, %v; want 0, 1, nil", diff, p, err)
		}
	})
	t.Run("one side always better", func(t *testing.T) {
		a, b := make([]float64, 30), make([]float64, 30)
		for i := range a {
			a[i] = 1
		}
		diff, p, _ := PairedTest(a, b)
		if diff != 1 || p > 2.0/(Draws+1) {
			t.Errorf("= %v, %v; want 1 and p near 1/%d", diff, p, Draws+1)
		}
	})
	t.Run("matches exact enumeration", func(t *testing.T) {
		// With 10 pairs, all 1,024 sign patterns can be counted: the sampled p
		// must lie within sampling error (sd ≈ 0.005) of the exact one.
		a := []float64{0.9, 0.1, 0.6, 0.7, 0.3, 0.8, 0.5, 0.4, 0.9, 1}
		b := []float64{0.5, 0.3, 0.6, 0.2, 0.4, 0.5, 0.2, 0.6, 0.4, 0.7}
		d := make([]float64, len(a))
		var obs float64
		for i := range a {
			d[i] = a[i] - b[i]
			obs += d[i]
		}
		obs = math.Abs(obs)
		hits := 0
		for mask := range 1 << len(d) {
			var s float64
			for i, x := range d {
				if mask&(1<<i) != 0 {
					x = -x
				}
				s += x
			}
			if math.Abs(s) >= obs-1e-12 {
				hits++
			}
		}
		exact := float64(hits) / float64(int(1)<<len(d))
		diff, p, _ := PairedTest(a, b)
		if math.Abs(diff-obs/10) > 1e-12 {
			t.Errorf("diff = %v, want %v", diff, obs/10)
		}
		if math.Abs(p-exact) > 0.02 {
			t.Errorf("p = %.4f, exact %.4f", p, exact)
		}
		if _, p2, _ := PairedTest(a, b); p2 != p {
			t.Errorf("p not reproducible: %v then %v", p, p2)
		}
	})
	t.Run("unequal lengths", func(t *testing.T) {
		if _, _, err := PairedTest([]float64{1}, nil); err == nil {
			t.Error("no error")
		}
	})
	t.Run("empty", func(t *testing.T) {
		if diff, p, err := PairedTest(nil, nil); diff != 0 || p != 1 || err != nil {
			t.Errorf("= %v, %v, %v", diff, p, err)
		}
	})
}

func TestPercentile(t *testing.T) {
	s := []float64{1, 2, 3, 4}
	for _, tt := range []struct{ p, want float64 }{{0, 1}, {50, 2.5}, {95, 3.85}, {99, 3.97}, {100, 4}} {
		if got := Percentile(s, tt.p); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("Percentile(%v) = %v, want %v", tt.p, got, tt.want)
		}
	}
	if got := Percentile([]float64{7}, 99); got != 7 {
		t.Errorf("one value: %v", got)
	}
	if got := Percentile(nil, 50); got != 0 {
		t.Errorf("empty: %v", got)
	}
}

func TestSummarise(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	l := Summarise([]time.Duration{ms(4), ms(1), ms(3), ms(2)})
	want := Latency{N: 4, P50: 2.5, P95: 3.85, P99: 3.97, Mean: 2.5, Max: 4}
	if math.Abs(l.P95-want.P95) > 1e-9 || math.Abs(l.P99-want.P99) > 1e-9 {
		t.Errorf("Summarise = %+v, want %+v", l, want)
	}
	l.P95, l.P99 = want.P95, want.P99
	if l != want {
		t.Errorf("Summarise = %+v, want %+v", l, want)
	}
	if (Summarise(nil) != Latency{}) {
		t.Error("empty input should give the zero Latency")
	}
}
