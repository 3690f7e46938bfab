package transcript

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
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

// benchHistoryFiles lists the transcripts of one kind under the fake $HOME
// that MNEMO_BENCH_HISTORY names (a history written by the sessions scale
// generator, gen_history.py): Claude Code's under .claude/projects (no
// subagents), Codex's under .codex/sessions.
func benchHistoryFiles(tb testing.TB, kind Kind) ([]string, int64) {
	tb.Helper()
	home := os.Getenv("MNEMO_BENCH_HISTORY")
	if home == "" {
		tb.Skip("MNEMO_BENCH_HISTORY not set (a $HOME written by gen_history.py)")
	}
	root := filepath.Join(home, ".claude", "projects")
	if kind == Codex {
		root = filepath.Join(home, ".codex", "sessions")
	}
	var out []string
	var size int64
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") && filepath.Base(filepath.Dir(p)) != "subagents" {
			if fi, err := d.Info(); err == nil {
				out = append(out, p)
				size += fi.Size()
			}
		}
		return nil
	})
	if len(out) == 0 {
		tb.Skipf("no %s transcripts under %s", kind, root)
	}
	return out, size
}

// BenchmarkReadHistory reads every Claude Code and Codex transcript of a
// generated history from the start, redaction left out: the CPU the
// readers themselves spend per line and per byte on a first sync.
func BenchmarkReadHistory(b *testing.B) {
	for _, kind := range []Kind{ClaudeCode, Codex} {
		b.Run(string(kind), func(b *testing.B) {
			files, size := benchHistoryFiles(b, kind)
			ctx := context.Background()
			src := Source{Kind: kind}
			b.SetBytes(size)
			lines, msgs := 0, 0
			cpu0 := cpuTime()
			for b.Loop() {
				lines, msgs = 0, 0
				for _, p := range files {
					res, err := readWith(ctx, src, p, Cursor{}, Options{}, Handler{}, noRedact)
					if err != nil {
						b.Fatal(err)
					}
					if !res.Coverage.Balanced() {
						b.Fatalf("%s: coverage %+v does not balance", p, res.Coverage)
					}
					lines += res.Coverage.Lines
					msgs += res.Messages
				}
			}
			cpu := cpuTime() - cpu0
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N)/float64(lines), "cpu-µs/line")
			b.ReportMetric(float64(size)/(1<<20)/(cpu.Seconds()/float64(b.N)), "cpu-MiB/s")
			b.ReportMetric(float64(lines), "lines/op")
			b.ReportMetric(float64(msgs), "messages/op")
		})
	}
}

// writeProseClaude writes a Claude Code transcript of n prose lines, user
// and assistant in turn, with random uuids as Claude Code writes them: the
// shape of one never-ending chat.
func writeProseClaude(tb testing.TB, path string, n int) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(7, 3))
	uuid := func() string {
		return fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", rng.Uint32(), rng.IntN(1<<16), rng.IntN(1<<12), rng.IntN(1<<12), rng.Uint64()&(1<<48-1))
	}
	words := strings.Fields("the retry budget billing client webhook worker queue index cursor branch rewind session reader tree line record parent prompt reply answer")
	sentence := func(k int) string {
		var sb strings.Builder
		for i := range k {
			if i > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(words[rng.IntN(len(words))])
		}
		return sb.String()
	}
	session := uuid()
	t := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	var parent any
	for k := range n {
		id := uuid()
		rec := map[string]any{"uuid": id, "parentUuid": parent, "sessionId": session, "cwd": "/home/dev/long",
			"timestamp": t.Format(time.RFC3339Nano), "isSidechain": false}
		if k%2 == 0 {
			rec["type"] = "user"
			rec["message"] = map[string]any{"role": "user", "content": sentence(10+rng.IntN(20)) + "?"}
		} else {
			rec["type"] = "assistant"
			rec["message"] = map[string]any{"id": "msg_" + id, "role": "assistant",
				"content": []any{map[string]any{"type": "text", "text": sentence(20+rng.IntN(40)) + "."}}}
		}
		b, _ := json.Marshal(rec)
		w.Write(append(b, '\n'))
		parent = id
		t = t.Add(7 * time.Second)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkReadLongClaude reads one prose-only Claude Code session of
// MNEMO_TRANSCRIPT_LINES lines (e.g. 200000) from scratch, redaction left
// out, and reports the peak of the live heap (as the collections found it)
// above the heap before the read: what the reader holds on the heap for a
// session of that length (its tree's arena is outside the heap:
// TestTreeFirstPassBytes counts both). MNEMO_TRANSCRIPT_HEAP names a file that gets the
// heap profile of the highest sample.
func BenchmarkReadLongClaude(b *testing.B) {
	n, _ := strconv.Atoi(os.Getenv("MNEMO_TRANSCRIPT_LINES"))
	if n <= 0 {
		b.Skip("MNEMO_TRANSCRIPT_LINES not set (e.g. 200000)")
	}
	path := filepath.Join(b.TempDir(), "long.jsonl")
	writeProseClaude(b, path, n)
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	live := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	b.SetBytes(fi.Size())
	var growth uint64
	cpu0 := cpuTime()
	for b.Loop() {
		runtime.GC()
		base, top := live(), uint64(0)
		k := 0
		res, err := readWith(context.Background(), Source{Kind: ClaudeCode}, path, Cursor{}, Options{}, Handler{Message: func(Message) error {
			if k++; k%1000 == 0 {
				if v := live(); v > top {
					top = v
					if p := os.Getenv("MNEMO_TRANSCRIPT_HEAP"); p != "" {
						// The heap profile of the highest sample.
						if f, err := os.Create(p); err == nil {
							pprof.WriteHeapProfile(f)
							f.Close()
						}
					}
				}
			}
			return nil
		}}, noRedact)
		if err != nil {
			b.Fatal(err)
		}
		if res.Messages != n {
			b.Fatalf("%d messages, want %d", res.Messages, n)
		}
		growth = max(growth, top-min(top, base))
	}
	cpu := cpuTime() - cpu0
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N)/float64(n), "cpu-µs/line")
	b.ReportMetric(float64(growth)/(1<<20), "live-heap-growth-MiB")
}

// BenchmarkDecodeLines decodes the lines of the benchmark transcripts (the
// committed fixtures, or up to 64 MiB of a generated history's when
// MNEMO_BENCH_HISTORY is set), held in memory, with the fast path and with
// encoding/json: the decoders alone, without the reading or the tree.
func BenchmarkDecodeLines(b *testing.B) {
	for _, c := range []struct {
		kind   Kind
		agent  string
		decode map[string]func([]byte, *strIntern) bool
	}{
		{ClaudeCode, ".claude", map[string]func([]byte, *strIntern) bool{
			"jscan":         func(l []byte, in *strIntern) bool { _, err := decodeClaude(l, in); return err == nil },
			"encoding-json": func(l []byte, _ *strIntern) bool { _, err := decodeClaudeJSON(l); return err == nil },
		}},
		{Codex, ".codex", map[string]func([]byte, *strIntern) bool{
			"jscan":         func(l []byte, in *strIntern) bool { _, _, _, ok := codexParse(l, in); return ok },
			"encoding-json": func(l []byte, _ *strIntern) bool { _, _, _, ok := codexParseJSON(l); return ok },
		}},
	} {
		root := historyDir(c.agent)
		if root == "" {
			root = filepath.Join("testdata", strings.TrimPrefix(c.agent, "."))
		}
		var lines [][]byte
		size := 0
		for _, p := range jsonlFiles(b, root) {
			eachLine(b, p, func(l []byte) {
				if size < 64<<20 {
					lines = append(lines, bytes.Clone(l))
					size += len(l)
				}
			})
		}
		for _, name := range []string{"jscan", "encoding-json"} {
			b.Run(string(c.kind)+"/"+name, func(b *testing.B) {
				decode := c.decode[name]
				b.SetBytes(int64(size))
				cpu0 := cpuTime()
				for b.Loop() {
					var in strIntern
					for _, l := range lines {
						decode(l, &in)
					}
				}
				cpu := float64((cpuTime() - cpu0).Nanoseconds()) / float64(b.N)
				b.ReportMetric(cpu/float64(len(lines)), "cpu-ns/line")
				b.ReportMetric(float64(size)/(1<<20)/(cpu/1e9), "cpu-MiB/s")
			})
		}
	}
}
