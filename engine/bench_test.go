package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/metrics"
	"slices"
	"testing"
	"time"

	"mnemo/decay"
	"mnemo/engine"
)

// benchDocs is the size of the synthetic vault the search benchmarks use.
const benchDocs = 2000

// writeSynthetic writes n deterministic memories into dir, spread over a
// few folders and tags, with created dates over the two years before now0.
func writeSynthetic(tb testing.TB, dir string, n int) {
	tb.Helper()
	folders := []string{"decisions", "notes", "notes/meetings", "projects/alpha", "projects/beta", "people"}
	tags := []string{"db", "api", "ops", "team", "plan"}
	for i := range n {
		rel := fmt.Sprintf("%s/m%05d.md", folders[i%len(folders)], i)
		created := now0.AddDate(0, 0, -(i*7)%730).Format(time.DateOnly)
		body := "# Summary\n\n" + synthetic(uint64(i), 120) + "\n\n## Details\n\n" + synthetic(uint64(i)+1e6, 160)
		content := memo(fmt.Sprintf("Memory %d %s", i, wordList[i%len(wordList)]), created, []string{tags[i%len(tags)]}, body)
		full := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// benchQueries are what the search benchmarks cycle through.
var benchQueries = []string{
	"database migration schedule",
	"customer billing invoice",
	"kubernetes container registry",
	"incident postmortem outage",
	"hiring interview onboarding",
	"coffee weather mountain",
	"release rollout feature flag",
	"security audit compliance",
}

func benchSearch(b *testing.B, mode engine.Mode) {
	dir := b.TempDir()
	mem := filepath.Join(dir, "mem")
	writeSynthetic(b, mem, benchDocs)
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{MemoryDir: mem, IndexDir: filepath.Join(dir, "idx"), Decay: decay.Default()})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	if _, err := e.Sync(ctx, false); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		q := engine.Query{Text: benchQueries[i%len(benchQueries)], Mode: mode, Now: now0}
		if _, err := e.Search(ctx, q); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkSearchFullText(b *testing.B) { benchSearch(b, engine.FullText) }
func BenchmarkSearchSemantic(b *testing.B) { benchSearch(b, engine.Semantic) }
func BenchmarkSearchHybrid(b *testing.B)   { benchSearch(b, engine.Hybrid) }

// BenchmarkSync indexes a 500-memory vault from scratch per iteration and
// reports throughput in docs/s.
func BenchmarkSync(b *testing.B) {
	const n = 500
	dir := b.TempDir()
	mem := filepath.Join(dir, "mem")
	writeSynthetic(b, mem, n)
	ctx := context.Background()
	it := 0
	for b.Loop() {
		b.StopTimer()
		e, err := engine.Open(ctx, engine.Config{MemoryDir: mem, IndexDir: filepath.Join(dir, fmt.Sprintf("idx%d", it))})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		rep, err := e.Sync(ctx, false)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if len(rep.Added) != n {
			b.Fatalf("Added %d, want %d", len(rep.Added), n)
		}
		e.Close()
		os.RemoveAll(filepath.Join(dir, fmt.Sprintf("idx%d", it)))
		it++
		b.StartTimer()
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "docs/s")
}

// BenchmarkBenchCorpus measures hybrid search latency on a real folder of
// markdown named by MNEMO_BENCH_DIR (e.g. /tmp/mnemo-bench/corpora/tldr).
// The folder is indexed once, outside the timing; each iteration is one
// query, and p50/p99 latencies are reported in milliseconds.
func BenchmarkBenchCorpus(b *testing.B) {
	dir := os.Getenv("MNEMO_BENCH_DIR")
	if dir == "" {
		b.Skip("set MNEMO_BENCH_DIR to a folder of markdown (e.g. /tmp/mnemo-bench/corpora/tldr) to run this benchmark")
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		b.Fatalf("MNEMO_BENCH_DIR=%s is not a folder", dir)
	}
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{MemoryDir: dir, IndexDir: b.TempDir(), Decay: decay.Default()})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	rep, err := e.Sync(ctx, false)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("indexed %d memories from %s in %v", len(rep.Added), dir, rep.Total.Round(time.Millisecond))
	queries := []string{
		"list files in a directory",
		"compress a folder into an archive",
		"show running processes",
		"git undo last commit",
		"download a file over http",
		"change file permissions",
		"search text in files recursively",
		"network interface configuration",
		"convert video format",
		"install a package",
	}
	var lat []time.Duration
	i := 0
	for b.Loop() {
		q := engine.Query{Text: queries[i%len(queries)], Mode: engine.Hybrid, Now: now0}
		t0 := time.Now()
		if _, err := e.Search(ctx, q); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
		i++
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) / float64(time.Millisecond)
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

// BenchmarkSyncCorpus indexes the folder of markdown named by
// MNEMO_BENCH_DIR (e.g. /tmp/mnemo-bench/corpora/tldr) from scratch per
// iteration; run it with -cpuprofile to see where a full sync spends its
// time. It reports throughput in docs/s, and per sync the collector's
// cycles and its share of the CPU (the runtime's own estimate), which
// stay readable while others load the machine and wall time does not.
func BenchmarkSyncCorpus(b *testing.B) {
	dir := os.Getenv("MNEMO_BENCH_DIR")
	if dir == "" {
		b.Skip("set MNEMO_BENCH_DIR to a folder of markdown (e.g. /tmp/mnemo-bench/corpora/tldr) to run this benchmark")
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		b.Fatalf("MNEMO_BENCH_DIR=%s is not a folder", dir)
	}
	ctx := context.Background()
	docs, syncs := 0, 0
	gc := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/cpu/classes/gc/total:cpu-seconds"}}
	var cycles uint64
	var gcCPU float64
	for b.Loop() {
		b.StopTimer()
		idx := b.TempDir()
		e, err := engine.Open(ctx, engine.Config{MemoryDir: dir, IndexDir: idx})
		if err != nil {
			b.Fatal(err)
		}
		metrics.Read(gc)
		c0, s0 := gc[0].Value.Uint64(), gc[1].Value.Float64()
		b.StartTimer()
		rep, err := e.Sync(ctx, true)
		b.StopTimer()
		metrics.Read(gc)
		cycles, gcCPU, syncs = cycles+gc[0].Value.Uint64()-c0, gcCPU+gc[1].Value.Float64()-s0, syncs+1
		if err != nil {
			b.Fatal(err)
		}
		if len(rep.Added) == 0 {
			b.Fatalf("sync of %s added nothing", dir)
		}
		docs += len(rep.Added)
		if err := e.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(docs)/b.Elapsed().Seconds(), "docs/s")
	b.ReportMetric(float64(cycles)/float64(syncs), "gc-cycles/op")
	b.ReportMetric(gcCPU/float64(syncs), "gc-cpu-s/op")
}
