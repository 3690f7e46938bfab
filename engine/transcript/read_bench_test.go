package transcript

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// benchClaudeFiles lists the Claude Code transcripts the read benchmarks
// run over: the real ones committed under testdata, or, when
// MNEMO_BENCH_CLAUDE names a folder (a history written by the sessions
// scale generator, say), every transcript below it.
func benchClaudeFiles(tb testing.TB) []string {
	tb.Helper()
	root := filepath.Join("..", "..", "testdata", "transcripts", "claude-code")
	if d := os.Getenv("MNEMO_BENCH_CLAUDE"); d != "" {
		root = d
	}
	var out []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") && filepath.Base(filepath.Dir(p)) != "subagents" {
			out = append(out, p)
		}
		return nil
	})
	if len(out) == 0 {
		tb.Fatalf("no Claude Code transcripts under %s", root)
	}
	return out
}

// BenchmarkReadClaudeCode reads every benchmark transcript from the start,
// redaction included, as a first sync does: the cost per byte of the
// Claude Code reader.
func BenchmarkReadClaudeCode(b *testing.B) {
	files := benchClaudeFiles(b)
	var size int64
	for _, p := range files {
		fi, err := os.Stat(p)
		if err != nil {
			b.Fatal(err)
		}
		size += fi.Size()
	}
	Redact("warm up")
	ctx := context.Background()
	src := Source{Kind: ClaudeCode}
	b.SetBytes(size)
	msgs := 0
	cpu0 := cpuTime()
	for b.Loop() {
		msgs = 0
		for _, p := range files {
			res, err := Read(ctx, src, p, Cursor{}, Options{}, Handler{})
			if err != nil {
				b.Fatal(err)
			}
			msgs += res.Messages
		}
	}
	reportCPU(b, cpu0)
	b.ReportMetric(float64(msgs), "messages/op")
}

// reportCPU reports the process's CPU time per op since cpu0: on a shared
// machine the figure to trust, wall time counting the waits for a core.
func reportCPU(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// benchMessages is the prose the benchmark transcripts deliver, unredacted:
// whole messages, and the same cut into lines (many short messages, as a
// chat-heavy history has).
func benchMessages(b *testing.B) (whole, short []string) {
	b.Helper()
	ctx := context.Background()
	for _, p := range benchClaudeFiles(b) {
		h := Handler{Message: func(m Message) error {
			whole = append(whole, m.Text)
			for _, l := range strings.Split(m.Text, "\n") {
				if l = strings.TrimSpace(l); l != "" {
					short = append(short, l)
				}
			}
			return nil
		}}
		if _, err := readWith(ctx, Source{Kind: ClaudeCode}, p, Cursor{}, Options{}, h, noRedact); err != nil {
			b.Fatal(err)
		}
	}
	return whole, short
}

// BenchmarkRedactTranscripts redacts the benchmark transcripts' prose, one op being
// every message once.
func BenchmarkRedactTranscripts(b *testing.B) {
	whole, short := benchMessages(b)
	Redact("warm up")
	for _, c := range []struct {
		name string
		msgs []string
	}{{"messages", whole}, {"lines", short}} {
		b.Run(c.name, func(b *testing.B) {
			n := 0
			for _, m := range c.msgs {
				n += len(m)
			}
			b.SetBytes(int64(n))
			cpu0 := cpuTime()
			for b.Loop() {
				for _, m := range c.msgs {
					Redact(m)
				}
			}
			reportCPU(b, cpu0)
			b.ReportMetric(float64(len(c.msgs)), "messages/op")
		})
	}
}
