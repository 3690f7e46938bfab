package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// EnvBenchData names the shared benchmark data's folder (build.sh,
// run.sh, tools/score.py, …), which is not part of this repository.
const EnvBenchData = "MNEMO_BENCH_DATA"

// TestAgreesWithScorePy scores one synthetic run with score.py and with
// Evaluate, under each of score.py's options, and requires every metric of
// every subset to agree to 3 decimals (within 0.0005). The queries mix
// binary and graded judgments, numeric categories with and without names,
// scopes, an unjudged query and one missing from the run; the run mixes
// paths and objects and repeats some paths.
func TestAgreesWithScorePy(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("SKIPPED, NOT CHECKED: python3 not found; this test compares Evaluate with the benchmark's tools/score.py")
	}
	data := os.Getenv(EnvBenchData)
	if data == "" {
		t.Skipf("SKIPPED, NOT CHECKED: $%s is not set (the shared benchmark data, not part of this repository); Evaluate is not compared with its tools/score.py", EnvBenchData)
	}
	script, _ := filepath.Abs(filepath.Join(data, "tools", "score.py"))
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("$%s is set, but %s: %v", EnvBenchData, script, err)
	}
	dir := t.TempDir()
	qPath, runPath, runB := filepath.Join(dir, "queries.jsonl"), filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "runB.jsonl")
	writeSynthetic(t, qPath, runPath, runB)

	queries := readFile(t, qPath, ReadQueries)
	run := readFile(t, runPath, ReadRun)

	for _, tc := range []struct {
		name string
		opt  Options
		args []string
	}{
		{"plain", Options{}, nil},
		{"scope", Options{Scope: true}, []string{"--scope"}},
		{"exclude", Options{ExcludeCategory: []string{"5"}}, []string{"--exclude-category", "5"}},
		{"scope and exclude", Options{Scope: true, ExcludeCategory: []string{"5", "2"}}, []string{"--scope", "--exclude-category", "5", "2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := exec.Command(py, append([]string{script, qPath, runPath, "--json"}, tc.args...)...).Output()
			if err != nil {
				t.Fatalf("score.py: %v", err)
			}
			var want struct {
				Missing int                           `json:"missing"`
				Subsets map[string]map[string]float64 `json:"subsets"`
			}
			if err := json.Unmarshal(out, &want); err != nil {
				t.Fatalf("score.py output: %v\n%s", err, out)
			}
			got := Evaluate(queries, run, tc.opt)
			if got.Missing != want.Missing {
				t.Errorf("missing = %d, score.py %d", got.Missing, want.Missing)
			}
			if len(got.Subsets) != len(want.Subsets) {
				t.Errorf("subsets %d, score.py %d: %v", len(got.Subsets), len(want.Subsets), keys(want.Subsets))
			}
			for name, w := range want.Subsets {
				g, ok := got.Subsets[name]
				if !ok {
					t.Errorf("subset %s missing", name)
					continue
				}
				if g.N != int(w["n"]) {
					t.Errorf("%s: n = %d, score.py %v", name, g.N, w["n"])
				}
				for _, m := range Metrics {
					v, _ := g.Get(m)
					if math.Abs(v-w[m]) > 0.0005 {
						t.Errorf("%s %s = %.4f, score.py %.4f", name, m, v, w[m])
					}
				}
			}
		})
	}

	t.Run("compare", func(t *testing.T) {
		out, err := exec.Command(py, script, qPath, runPath, "--compare", runB, "--metric", "nDCG@10").Output()
		if err != nil {
			t.Fatalf("score.py --compare: %v", err)
		}
		var wantDiff, wantP float64
		var n int
		last := strings.TrimSpace(string(out))
		last = last[strings.LastIndex(last, "\n")+1:]
		if _, err := fmt.Sscanf(last, "nDCG@10: A - B = %f  (paired randomisation p = %f, n = %d)", &wantDiff, &wantP, &n); err != nil {
			t.Fatalf("parse %q: %v", last, err)
		}
		a := Evaluate(queries, run, Options{})
		b := Evaluate(queries, readFile(t, runB, ReadRun), Options{})
		diff, p, err := PairedTest(a.Values("nDCG@10"), b.Values("nDCG@10"))
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(diff-wantDiff) > 0.00005 {
			t.Errorf("diff = %.5f, score.py %.4f", diff, wantDiff)
		}
		// Different generators: the p-values agree within sampling error.
		if math.Abs(p-wantP) > 0.03 {
			t.Errorf("p = %.4f, score.py %.4f", p, wantP)
		}
		t.Logf("diff %.4f, p %.4f (score.py p %.4f, n %d)", diff, p, wantP, n)
	})
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func readFile[T any](t *testing.T, path string, read func(r io.Reader) (T, error)) T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := read(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

// writeSynthetic writes 80 judged queries and two runs for them.
func writeSynthetic(t *testing.T, qPath, runPath, runB string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	names := map[int]string{1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"} // 5 has no name
	doc := func(conv int) string { return fmt.Sprintf("conv-%d/d%02d.md", conv, rng.IntN(30)) }
	var qs, ra, rb bytes.Buffer
	for i := range 80 {
		conv := rng.IntN(3)
		q := map[string]any{"id": fmt.Sprintf("q%03d", i), "query": "text", "answer": "ignored"}
		if i%10 == 7 {
			q["id"] = i // a numeric id
		}
		var rel []string
		for range 1 + rng.IntN(4) {
			rel = append(rel, doc(conv))
		}
		if i == 13 {
			rel = nil // unjudged
		}
		q["relevant"] = rel
		if i%3 == 0 && rel != nil {
			g := map[string]int{}
			for _, r := range rel {
				g[r] = 1 + rng.IntN(3)
			}
			g[doc(conv)] = 1 // graded but perhaps not listed as relevant
			q["grades"] = g
		}
		if i%4 != 0 {
			cat := 1 + rng.IntN(5)
			q["category"] = cat
			if n, ok := names[cat]; ok {
				q["category_name"] = n
			}
			q["scope"] = fmt.Sprintf("conv-%d/", conv)
		}
		line, _ := json.Marshal(q)
		qs.Write(append(line, '\n'))
		if i == 42 {
			continue // missing from both runs
		}
		for k, buf := range []*bytes.Buffer{&ra, &rb} {
			good := 0.25 - 0.05*float64(k) // run B finds a little less
			var res []any
			for r := range 25 {
				var d string
				switch p := rng.Float64(); {
				case p < good && len(rel) > 0:
					d = rel[rng.IntN(len(rel))]
				case p < 0.6:
					d = doc(conv)
				default:
					d = doc(rng.IntN(3)) // often out of scope
				}
				if r%2 == 0 {
					res = append(res, d)
				} else {
					res = append(res, map[string]any{"path": d, "score": 1})
				}
			}
			line, _ := json.Marshal(map[string]any{"id": q["id"], "results": res})
			buf.Write(append(line, '\n'))
		}
	}
	for p, b := range map[string]*bytes.Buffer{qPath: &qs, runPath: &ra, runB: &rb} {
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
