package sessions_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"sync"
	"testing"
	"time"

	"mnemo/engine/sessions"
	"mnemo/engine/transcript"
)

// BenchmarkSessionsLong syncs the same number of Claude Code messages
// written as one long session and as sessions of 100 messages, so the cost
// of a message can be compared whatever the length of its session: ns/msg
// (wall and CPU), allocs/msg and the peak live heap of the sync.
//
//	go test ./engine/sessions -run '^$' -bench BenchmarkSessionsLong -benchtime 1x -count 3
//
// MNEMO_SESSIONS_LONG=N adds one session of N messages and N/100 of 100.
func BenchmarkSessionsLong(b *testing.B) {
	cases := []struct{ sessions, per int }{{1, 10_000}, {100, 100}, {1, 50_000}, {500, 100}}
	if n := envInt("MNEMO_SESSIONS_LONG", 0); n > 0 {
		cases = append(cases, struct{ sessions, per int }{1, n}, struct{ sessions, per int }{n / 100, 100})
	}
	for _, c := range cases {
		b.Run(fmt.Sprintf("%dx%d", c.sessions, c.per), func(b *testing.B) {
			home := b.TempDir()
			dir := filepath.Join(home, ".claude", "projects", "-home-dev-long")
			for i := range c.sessions {
				if err := writeProseSession(dir, i, c.per); err != nil {
					b.Fatal(err)
				}
			}
			ctx := context.Background()
			src := transcript.Source{Kind: transcript.ClaudeCode, Root: filepath.Join(home, ".claude", "projects")}
			srcs := []sessions.Source{sessions.TranscriptSource(src, transcript.Options{})}
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				s, err := sessions.Open(ctx, sessions.Config{IndexDir: b.TempDir(), Sources: srcs})
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				peak := watchHeap()
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				b.StartTimer()
				t0, c0 := time.Now(), cpuTime()
				rep, err := s.Sync(ctx, false)
				d, cpu := time.Since(t0), cpuTime()-c0
				b.StopTimer()
				runtime.ReadMemStats(&m1)
				heap := peak()
				if err != nil {
					b.Fatal(err)
				}
				if want := c.sessions * c.per; rep.Messages != want {
					b.Fatalf("indexed %d messages, want %d", rep.Messages, want)
				}
				n := float64(rep.Messages)
				b.ReportMetric(float64(d.Nanoseconds())/n, "ns/msg")
				// The process's CPU time: on a shared machine the steadier figure.
				b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/msg")
				b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/n, "allocs/msg")
				b.ReportMetric(float64(heap)/(1<<20), "peak-heap-MiB")
				s.Close()
				b.StartTimer()
			}
		})
	}
}

// watchHeap samples the live heap (as the last collection found it) until
// the returned function is called, which gives the highest sample.
// MNEMO_SESSIONS_LONG_HEAP names a file that gets the heap profile of the
// highest sample.
func watchHeap() func() uint64 {
	done := make(chan struct{})
	var wg sync.WaitGroup
	var top uint64
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > top {
				top = v
				if p := os.Getenv("MNEMO_SESSIONS_LONG_HEAP"); p != "" && v > 64<<20 {
					if f, err := os.Create(p); err == nil {
						pprof.WriteHeapProfile(f)
						f.Close()
					}
				}
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		return top
	}
}

// writeProseSession writes session i as a Claude Code transcript of n
// prose messages, user and assistant in turn, with random uuids as Claude
// Code writes them.
func writeProseSession(dir string, i, n int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(uint64(i), 3))
	uuid := func() string {
		return fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", rng.Uint32(), rng.IntN(1<<16), rng.IntN(1<<12), rng.IntN(1<<12), rng.Uint64()&(1<<48-1))
	}
	session := uuid()
	f, err := os.Create(filepath.Join(dir, session+".jsonl"))
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	words := newVocabulary(rng)
	t := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Hour)
	var parent any
	for k := range n {
		id := uuid()
		rec := map[string]any{"uuid": id, "parentUuid": parent, "sessionId": session, "cwd": "/home/dev/long",
			"timestamp": t.Format(time.RFC3339Nano), "isSidechain": false}
		if k%2 == 0 {
			rec["type"] = "user"
			rec["message"] = map[string]any{"role": "user", "content": "About the " + pick(rng, synthTopics) + ": " + words.sentence(10+rng.IntN(20)) + "?"}
		} else {
			rec["type"] = "assistant"
			rec["message"] = map[string]any{"id": "msg_" + id, "role": "assistant",
				"content": []any{map[string]any{"type": "text", "text": words.sentence(20+rng.IntN(40)) + "."}}}
		}
		line, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		w.Write(append(line, '\n'))
		parent = id
		t = t.Add(7 * time.Second)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
