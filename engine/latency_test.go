package engine_test

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"mnemo/engine"
)

// TestLatency measures search latency on a real corpus: p50 and p99 of
// Semantic and Hybrid (and FullText) over task-style questions taken from
// the corpus, as perf_side.py asks them, without snippets so the figure is
// the ranking's. It needs a corpus and so runs only on request:
//
//	MNEMO_LATENCY_MEMORY=/tmp/mnemo-bench/corpora/tldr MNEMO_LATENCY_INDEX=/tmp/idx \
//	  go test ./engine -run TestLatency -v
//
// The index is synced first if it is not there (the sync is not timed).
func TestLatency(t *testing.T) {
	mem, idx := os.Getenv("MNEMO_LATENCY_MEMORY"), os.Getenv("MNEMO_LATENCY_INDEX")
	if mem == "" || idx == "" {
		t.Skip("SKIPPED: set MNEMO_LATENCY_MEMORY and MNEMO_LATENCY_INDEX to measure search latency on a corpus")
	}
	ctx := context.Background()
	cfg := engine.Config{MemoryDir: mem, IndexDir: idx}
	if _, err := os.Stat(filepath.Join(idx, "state.db")); err != nil {
		e, err := engine.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Sync(ctx, false); err != nil {
			t.Fatal(err)
		}
		e.Close()
	}
	t0 := time.Now()
	e, err := engine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	t.Logf("open: %v", time.Since(t0))
	qs := taskQuestions(t, mem, 300)
	for _, mode := range []engine.Mode{engine.Semantic, engine.Hybrid, engine.FullText} {
		for _, q := range qs[:20] { // warm up
			e.Search(ctx, engine.Query{Text: q, Mode: mode, NoSnippets: true})
		}
		var ms []float64
		for _, q := range qs {
			t0 := time.Now()
			if _, err := e.Search(ctx, engine.Query{Text: q, Mode: mode, NoSnippets: true}); err != nil && !strings.Contains(err.Error(), "no informative term") {
				t.Fatalf("%s %q: %v", mode, q, err)
			}
			ms = append(ms, float64(time.Since(t0).Microseconds())/1000)
		}
		sort.Float64s(ms)
		t.Logf("%-8s n=%d p50 %.2f ms  p99 %.2f ms", mode, len(ms), pct(ms, 50), pct(ms, 99))
	}
}

func pct(sorted []float64, p float64) float64 {
	i := int(p/100*float64(len(sorted)-1) + 0.5)
	return sorted[min(i, len(sorted)-1)]
}

// taskQuestions takes up to n lines like "- Extract a file from an archive:"
// from the corpus's markdown, in a fixed pseudo-random order.
func taskQuestions(t *testing.T, dir string, n int) []string {
	task := regexp.MustCompile(`(?m)^- (.{12,90}):\s*$`)
	var qs []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") || !strings.Contains(p, "/pages/") || len(qs) > 20*n {
			return nil
		}
		b, _ := os.ReadFile(p)
		for _, m := range task.FindAllStringSubmatch(string(b), -1) {
			qs = append(qs, m[1])
		}
		return nil
	})
	if len(qs) == 0 {
		t.Fatalf("no task lines in %s", dir)
	}
	slices.Sort(qs)
	r := rand.New(rand.NewPCG(7, 7))
	r.Shuffle(len(qs), func(i, j int) { qs[i], qs[j] = qs[j], qs[i] })
	return qs[:min(n, len(qs))]
}
