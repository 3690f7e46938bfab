package engine_test

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"mnemo/engine"
)

// BenchmarkFreshness measures issue 3's write→searchable latency through the
// watcher on a real corpus: the folder MNEMO_BENCH_DIR (e.g.
// /tmp/mnemo-bench/corpora/tldr) is copied to a temporary folder and indexed,
// Watch starts with the default debounce (150 ms), and 1,000 distinct files
// are edited — a unique word appended — at random intervals of 0–40 ms (an
// agent writing about 50 memories a second). An edit's latency runs from its
// write to the end of the watcher batch that indexed it, the moment its
// results are swapped in (OnBatch is called after that); every edit is then
// checked to be searchable, once, under its own path. Reports p50, p99 and
// max in ms. Run with -run '^$' -bench Freshness -benchtime 1x.
func BenchmarkFreshness(b *testing.B) {
	src := os.Getenv("MNEMO_BENCH_DIR")
	if src == "" {
		b.Skip("set MNEMO_BENCH_DIR to a folder of markdown (e.g. /tmp/mnemo-bench/corpora/tldr) to run this benchmark")
	}
	const edits = 1000
	root := b.TempDir()
	dir := filepath.Join(root, "memory")
	copyCorpus(b, src, dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e, err := engine.Open(ctx, engine.Config{MemoryDir: dir, IndexDir: filepath.Join(root, "index")})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	t0 := time.Now()
	rep, err := e.Sync(ctx, false)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("indexed %d memories in %s", len(rep.Added), time.Since(t0).Round(time.Millisecond))

	var mu sync.Mutex
	wrote := map[string]time.Time{} // path → when its edit was written
	var lat, batch []time.Duration
	var sizes []int
	started := make(chan struct{})
	first := true
	done := make(chan error, 1)
	go func() {
		done <- e.Watch(ctx, engine.WatchOptions{OnBatch: func(r engine.Report) {
			now := time.Now()
			mu.Lock()
			defer mu.Unlock()
			if first {
				first = false
				close(started)
				return
			}
			n := 0
			for _, p := range slices.Concat(r.Updated, r.Added) {
				if w, ok := wrote[p]; ok {
					lat = append(lat, now.Sub(w))
					delete(wrote, p)
					n++
				}
			}
			if n > 0 {
				batch = append(batch, r.Total)
				sizes = append(sizes, n)
			}
		}})
	}()
	<-started

	var all []string
	for p := range listMarkdown(b, dir) {
		all = append(all, p)
	}
	slices.Sort(all)
	rng := rand.New(rand.NewPCG(3, 1))
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	targets := all[:edits]
	token := func(i int) string { // letters only, no vowels, no s or y: no analyzer changes it
		const cons = "bcdfghjklmnpqrtvwxz"
		t := []byte("qxw")
		for range 4 {
			t = append(t, cons[i%len(cons)])
			i /= len(cons)
		}
		return string(t)
	}
	for b.Loop() {
		for i, p := range targets {
			f, err := os.OpenFile(filepath.Join(dir, filepath.FromSlash(p)), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				b.Fatal(err)
			}
			mu.Lock()
			wrote[p] = time.Now()
			mu.Unlock()
			fmt.Fprintf(f, "\n\nfreshness %s\n", token(i))
			f.Close()
			time.Sleep(time.Duration(rng.IntN(41)) * time.Millisecond)
		}
		deadline := time.Now().Add(time.Minute)
		for {
			mu.Lock()
			left := len(wrote)
			mu.Unlock()
			if left == 0 {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("%d edits not indexed a minute after the last write", left)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	wrong := 0
	for i, p := range targets {
		pg, err := e.Search(context.Background(), engine.Query{Text: token(i), Mode: engine.FullText, NoSnippets: true})
		if err != nil {
			b.Fatal(err)
		}
		if len(pg.Results) != 1 || pg.Results[0].Path != p {
			wrong++
			if wrong <= 5 {
				b.Errorf("%s (in %s) → %+v", token(i), p, pg.Results)
			}
		}
	}
	if wrong > 0 {
		b.Fatalf("%d of %d edits not found exactly once under their path", wrong, edits)
	}
	pct := func(d []time.Duration, p float64) float64 {
		d = slices.Clone(d)
		slices.Sort(d)
		return float64(d[min(len(d)-1, int(p*float64(len(d))))]) / float64(time.Millisecond)
	}
	slices.Sort(sizes)
	b.Logf("%d edits in %d batches (median %d, max %d edits a batch); batch time p50 %.0f ms, p99 %.0f ms",
		len(lat), len(batch), sizes[len(sizes)/2], sizes[len(sizes)-1], pct(batch, 0.5), pct(batch, 0.99))
	b.ReportMetric(pct(lat, 0.50), "p50-ms")
	b.ReportMetric(pct(lat, 0.99), "p99-ms")
	b.ReportMetric(pct(lat, 1), "max-ms")
}

// copyCorpus copies the regular files under src (hidden folders included,
// as a user's folder has them) to dst.
func copyCorpus(tb testing.TB, src, dst string) {
	tb.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		tb.Fatalf("copy %s: %v", src, err)
	}
}

// listMarkdown lists the memories a sync indexes: .md files outside hidden folders.
func listMarkdown(tb testing.TB, dir string) map[string]bool {
	tb.Helper()
	out := map[string]bool{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && p != dir && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".md") && !strings.HasPrefix(d.Name(), ".") {
			rel, _ := filepath.Rel(dir, p)
			out[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	return out
}
