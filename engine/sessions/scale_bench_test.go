package sessions_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"mnemo/engine/rank"
	"mnemo/engine/sessions"
)

// BenchmarkSessionsIndex runs queries against an index already built (a
// read-only open, as a CLI query's), to profile a query at scale without
// syncing:
//
//	MNEMO_SESSIONS_INDEX=/tmp/scale/idx MNEMO_SESSIONS_QUERIES=/tmp/scale/home/.bench/queries.jsonl \
//	  go test ./engine/sessions -run '^$' -bench BenchmarkSessionsIndex -benchtime 1x -cpuprofile cpu.out
//
// MNEMO_SESSIONS_MODE picks the mode (default hybrid).
func BenchmarkSessionsIndex(b *testing.B) {
	dir, qpath := os.Getenv("MNEMO_SESSIONS_INDEX"), os.Getenv("MNEMO_SESSIONS_QUERIES")
	if dir == "" || qpath == "" {
		b.Skip("set MNEMO_SESSIONS_INDEX and MNEMO_SESSIONS_QUERIES")
	}
	ctx := context.Background()
	qs := readQueries(b, qpath, rank.Mode(os.Getenv("MNEMO_SESSIONS_MODE")))
	s, err := sessions.Open(ctx, sessions.Config{IndexDir: dir, ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.LoadVectors(); err != nil { // as serve does when it starts
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		lat := make([]time.Duration, 0, len(qs))
		cpu := make([]time.Duration, 0, len(qs))
		for _, q := range qs {
			t, c := time.Now(), cpuTime()
			if _, err := s.Search(ctx, q); err != nil && !errors.Is(err, rank.ErrNoTerms) {
				b.Fatalf("%q: %v", q.Text, err)
			}
			lat = append(lat, time.Since(t))
			cpu = append(cpu, cpuTime()-c)
		}
		if os.Getenv("MNEMO_SESSIONS_SLOWEST") != "" {
			idx := make([]int, len(qs))
			for i := range idx {
				idx[i] = i
			}
			slices.SortFunc(idx, func(a, b int) int { return int(cpu[b] - cpu[a]) })
			for _, i := range idx[:10] {
				b.Logf("%6.1f ms CPU  %q", float64(cpu[i].Microseconds())/1000, qs[i].Text)
			}
		}
		var total time.Duration
		for _, c := range cpu {
			total += c
		}
		b.ReportMetric(float64(total.Microseconds())/1000/float64(len(cpu)), "cpu-mean-ms")
		slices.Sort(lat)
		slices.Sort(cpu)
		p := func(xs []time.Duration, x float64) float64 {
			return float64(xs[int(x*float64(len(xs)-1))].Microseconds()) / 1000
		}
		b.ReportMetric(p(lat, 0.5), "p50-ms")
		b.ReportMetric(p(lat, 0.99), "p99-ms")
		b.ReportMetric(p(cpu, 0.5), "cpu-p50-ms")
		b.ReportMetric(p(cpu, 0.99), "cpu-p99-ms")
	}
}

func readQueries(b *testing.B, path string, mode rank.Mode) []sessions.Query {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var qs []sessions.Query
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var q struct{ Query string }
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			b.Fatal(err)
		}
		// As the scale benchmark's MCP client asks (lat.mjs): ten
		// sessions of up to ten hits.
		qs = append(qs, sessions.Query{Text: q.Query, Mode: mode, Limit: 10, MaxHits: 10})
	}
	return qs
}

// BenchmarkSessionsOpen opens an index already built and reports what the
// open costs: its time, the live heap after it (after a collection), and
// the same once a first hybrid query has loaded the vectors (a read-only
// open loads them then):
//
//	MNEMO_SESSIONS_INDEX=/tmp/m1m-copy/idx go test ./engine/sessions -run '^$' -bench BenchmarkSessionsOpen -benchtime 1x
//
// MNEMO_SESSIONS_WRITER=1 opens it as a writer (which loads the vectors at
// open and may write: give it a copy).
func BenchmarkSessionsOpen(b *testing.B) {
	dir := os.Getenv("MNEMO_SESSIONS_INDEX")
	if dir == "" {
		b.Skip("set MNEMO_SESSIONS_INDEX")
	}
	ctx := context.Background()
	writer := os.Getenv("MNEMO_SESSIONS_WRITER") != ""
	for range b.N {
		t := time.Now()
		s, err := sessions.Open(ctx, sessions.Config{IndexDir: dir, ReadOnly: !writer})
		if err != nil {
			b.Fatal(err)
		}
		opened := time.Since(t)
		open := liveHeap()
		b.ReportMetric(rssKB("RssFile")/1e3, "file-open-MB")
		if _, err := s.Search(ctx, sessions.Query{Text: "database migration"}); err != nil {
			b.Fatal(err)
		}
		searched := liveHeap()
		b.ReportMetric(rssKB("RssFile")/1e3, "file-searched-MB")
		b.ReportMetric(rssKB("RssAnon")/1e3, "anon-searched-MB")
		b.ReportMetric(float64(opened.Milliseconds()), "open-ms")
		b.ReportMetric(open/1e6, "heap-open-MB")
		b.ReportMetric(searched/1e6, "heap-searched-MB")
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// liveHeap is the heap in use after a collection.
func liveHeap() float64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc)
}

// rssKB is a field of /proc/self/status in kB (0 where there is none).
func rssKB(field string) float64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return n
		}
	}
	return 0
}

// BenchmarkSessionsSync syncs the history under MNEMO_SESSIONS_HOME into a
// new index and nothing else, to profile a sync at scale (the scale
// histories of docs/benchmarks.md):
//
//	MNEMO_SESSIONS_HOME=/tmp/scale/home go test ./engine/sessions -run '^$' -bench BenchmarkSessionsSync \
//	  -benchtime 1x -cpuprofile cpu.out
//
// It reports messages per second of wall time, the sync's CPU seconds,
// and the process's peak RSS (which includes the test binary's).
func BenchmarkSessionsSync(b *testing.B) {
	home := os.Getenv("MNEMO_SESSIONS_HOME")
	if home == "" {
		b.Skip("set MNEMO_SESSIONS_HOME to a history to sync")
	}
	srcs := homeSources(home)
	for range b.N {
		s, rep, wall, cpu := syncFresh(b, srcs)
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(rep.Messages)/wall.Seconds(), "msg/s")
		b.ReportMetric(cpu.Seconds(), "sync-cpu-s")
		b.ReportMetric(float64(peakRSS())/(1<<20), "peakRSS-MiB")
	}
}
