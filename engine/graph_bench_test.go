package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"mnemo/engine/enginetest"
	"mnemo/graph"
)

// The concept graph's figures (docs/design.md, "The concept graph"):
//
//	go test ./engine -run '^$' -bench 'GraphSync' -benchtime 3x
//	go test ./engine -run '^$' -bench 'GraphQueries' -benchtime 200x
//
// on a generated vault of graphBenchFiles memories linking to
// graphBenchConcepts concepts, Zipf-distributed (s = graphBenchZipf), 5 to
// 15 links per memory, among about 200 words of prose in three sections;
// and on testdata/vault.
const (
	graphBenchFiles    = 5000
	graphBenchConcepts = 2000
	graphBenchZipf     = 1.07
)

var benchWords = strings.Fields(`project meeting decision database migration schedule budget customer
	release deploy server client latency cache index search query vector memory agent model training
	data pipeline review design document team sprint backlog ticket incident outage postmortem metric`)

// writeLinkedVault writes the generated vault into dir.
func writeLinkedVault(tb testing.TB, dir string) {
	tb.Helper()
	r := rand.New(rand.NewPCG(11, 13))
	z := rand.NewZipf(r, graphBenchZipf, 1, graphBenchConcepts-1)
	for i := range graphBenchFiles {
		var b strings.Builder
		fmt.Fprintf(&b, "# Note %d\n\n", i)
		links := 5 + r.IntN(11)
		for s := range 3 {
			if s > 0 {
				fmt.Fprintf(&b, "\n\n## Part %d\n\n", s)
			}
			for w := range 65 {
				if w%(65/(links/3+1)+1) == 7 && links > 0 {
					fmt.Fprintf(&b, "[[Topic %d]] ", z.Uint64())
					links--
				}
				b.WriteString(benchWords[r.IntN(len(benchWords))])
				b.WriteByte(' ')
			}
		}
		for ; links > 0; links-- {
			fmt.Fprintf(&b, " [[Topic %d]]", z.Uint64())
		}
		p := filepath.Join(dir, fmt.Sprintf("d%02d/n%05d.md", i%50, i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

func openBench(tb testing.TB, mem string, off bool) *Engine {
	tb.Helper()
	e, err := Open(context.Background(), Config{MemoryDir: mem, IndexDir: filepath.Join(tb.TempDir(), "idx")})
	if err != nil {
		tb.Fatal(err)
	}
	e.gs.off = off
	tb.Cleanup(func() { e.Close() })
	return e
}

// BenchmarkGraphSync times a full sync of the generated vault and of
// testdata/vault with the graph fed and without it. The two alternate
// within each iteration, so that a machine shared with other work slows
// both alike; wall and CPU seconds are reported for each.
func BenchmarkGraphSync(b *testing.B) {
	gen := filepath.Join(b.TempDir(), "gen")
	writeLinkedVault(b, gen)
	for _, v := range []struct{ name, dir string }{{"generated5000", gen}, {"testdata", "../testdata/vault"}} {
		b.Run(v.name, func(b *testing.B) {
			on, off := openBench(b, v.dir, false), openBench(b, v.dir, true)
			var wall, cpu [2]time.Duration
			for b.Loop() {
				for i, e := range []*Engine{on, off} {
					t0, c0 := time.Now(), cpuTime()
					if _, err := e.Sync(context.Background(), true); err != nil {
						b.Fatal(err)
					}
					wall[i] += time.Since(t0)
					cpu[i] += cpuTime() - c0
				}
			}
			n := time.Duration(b.N)
			b.ReportMetric((wall[0] / n).Seconds(), "graph-s/sync")
			b.ReportMetric((wall[1] / n).Seconds(), "nograph-s/sync")
			b.ReportMetric((cpu[0] / n).Seconds(), "graph-cpu-s/sync")
			b.ReportMetric((cpu[1] / n).Seconds(), "nograph-cpu-s/sync")
		})
	}
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	d, _ := enginetest.ProcessCPU()
	return d
}

// BenchmarkGraphQueries reports, on the generated vault: BuildContext
// p50/p99 for the most connected concept (depth 2, 20 entities), Louvain
// time, FindSimilarConcepts cold and warm, and the graph's memory: Go heap
// held by the graph, and bytes of its postings in the state store.
func BenchmarkGraphQueries(b *testing.B) {
	gen := filepath.Join(b.TempDir(), "gen")
	writeLinkedVault(b, gen)
	e := openBench(b, gen, false)
	ctx := context.Background()
	if _, err := e.Sync(ctx, false); err != nil {
		b.Fatal(err)
	}
	cs, _ := e.Concepts(ctx)
	top := cs[0]
	b.Logf("%d concepts, %d links; most connected %s: %d links in %d files", len(cs), e.gs.g.Links(), top.Name, top.Mentions, top.Files)

	if _, err := e.BuildContext(ctx, ContextQuery{Concept: top.Name}); err != nil { // communities computed here
		b.Fatal(err)
	}
	var lat []time.Duration
	c0 := cpuTime()
	for b.Loop() {
		t0 := time.Now()
		if _, err := e.BuildContext(ctx, ContextQuery{Concept: top.Name}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.ReportMetric(ms((cpuTime()-c0)/time.Duration(b.N)), "context-cpu-ms")
	slices.Sort(lat)
	b.ReportMetric(ms(lat[len(lat)/2]), "context-p50-ms")
	b.ReportMetric(ms(lat[min(len(lat)-1, len(lat)*99/100)]), "context-p99-ms")

	t0, c0 := time.Now(), cpuTime()
	comm := graph.Louvain(e.gs.g.Network(), 1)
	b.ReportMetric(ms(time.Since(t0)), "louvain-ms")
	b.ReportMetric(ms(cpuTime()-c0), "louvain-cpu-ms")
	b.ReportMetric(float64(comm.Len()), "communities")

	t0, c0 = time.Now(), cpuTime()
	if _, err := e.FindSimilarConcepts(ctx, top.Name, 10); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(ms(time.Since(t0)), "similar-cold-ms")
	b.ReportMetric(ms(cpuTime()-c0), "similar-cold-cpu-ms")
	t0 = time.Now()
	e.FindSimilarConcepts(ctx, top.Name, 10)
	b.ReportMetric(ms(time.Since(t0)), "similar-warm-ms")

	t0, c0 = time.Now(), cpuTime()
	if _, err := e.Visualize(ctx, top.Name, 2, 30); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(ms(time.Since(t0)), "visualize-ms")
	b.ReportMetric(ms(cpuTime()-c0), "visualize-cpu-ms")

	// Heap held by a graph: build a copy from the engine's mentions.
	paths := e.gs.g.Paths()
	mentions := make([][]graph.Mention, len(paths))
	for i, p := range paths {
		mentions[i] = e.gs.g.FileMentions(p)
	}
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	g := graph.New()
	for i, p := range paths {
		g.Set(p, mentions[i])
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	runtime.KeepAlive(g)
	b.ReportMetric(float64(m1.HeapAlloc-m0.HeapAlloc)/(1<<20), "graph-heap-MiB")

	var stored int
	e.st.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketGraph).ForEach(func(k, v []byte) error { stored += len(k) + len(v); return nil })
	})
	b.ReportMetric(float64(stored)/(1<<20), "graph-stored-MiB")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
