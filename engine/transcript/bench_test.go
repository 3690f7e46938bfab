package transcript

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// writeBigClaude writes a Claude Code transcript of about mb MiB: turns of
// prose, tool calls with large outputs, thinking, one rewind, and a few
// pasted images, the shapes a long working session accumulates.
func writeBigClaude(tb testing.TB, path string, mb int) (messages int, last string) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	prose := strings.Repeat("We traced the retry budget through the billing client and the webhook worker; ", 12)
	toolOut := strings.Repeat("src/billing/client.go:42: retries := cfg.Retries // 3\n", 400) // ~22 KB
	image := strings.Repeat("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk", 4000)
	parent := ""
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	line := func(kind, uuid string, content any, msgID string) {
		rec := map[string]any{"type": kind, "uuid": uuid, "parentUuid": nil, "sessionId": "big", "cwd": "/home/dev/big",
			"isSidechain": false, "timestamp": t0.Add(time.Duration(messages) * time.Second).Format(time.RFC3339Nano)}
		if parent != "" {
			rec["parentUuid"] = parent
		}
		m := map[string]any{"role": kind, "content": content}
		if msgID != "" {
			m["id"] = msgID
		}
		rec["message"] = m
		b, _ := json.Marshal(rec)
		w.Write(b)
		w.WriteByte('\n')
		parent = uuid
	}
	var size int64
	for i := 0; size < int64(mb)<<20; i++ {
		u := "u" + strconv.Itoa(i)
		content := any(fmt.Sprintf("Turn %d: %s", i, prose))
		if i%500 == 7 {
			content = []any{map[string]any{"type": "text", "text": "see screenshot"},
				map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": image}}}
		}
		line("user", u, content, "")
		messages++
		line("assistant", u+"t", []any{map[string]any{"type": "thinking", "thinking": prose}}, "msg"+u)
		line("assistant", u+"x", []any{map[string]any{"type": "tool_use", "id": "t" + u, "name": "Bash", "input": map[string]any{"command": "rg retries"}}}, "msg"+u)
		line("user", u+"r", []any{map[string]any{"type": "tool_result", "tool_use_id": "t" + u, "content": toolOut}}, "")
		line("assistant", u+"a", []any{map[string]any{"type": "text", "text": fmt.Sprintf("Answer %d: %s", i, prose)}}, "msg"+u+"b")
		messages++
		if i == 1000 { // a rewind: two messages off the branch, then back to u1000a
			fork := parent
			line("user", "rw-u", "abandoned question", "")
			line("assistant", "rw-a", []any{map[string]any{"type": "text", "text": "abandoned answer"}}, "msgrw")
			parent = fork
		}
		if fi, err := f.Stat(); err == nil && i%64 == 0 {
			size = fi.Size() + int64(w.Buffered())
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	return messages, parent
}

// BenchmarkReadLargeClaude reads one generated Claude Code transcript of
// MNEMO_TRANSCRIPT_MB MiB (e.g. 200) from scratch, then after an append, and
// reports throughput and the peak heap in use while reading, to show that a
// 200 MB transcript is streamed, not loaded. Skipped unless the variable is set.
func BenchmarkReadLargeClaude(b *testing.B) {
	mb, _ := strconv.Atoi(os.Getenv("MNEMO_TRANSCRIPT_MB"))
	if mb <= 0 {
		b.Skip("MNEMO_TRANSCRIPT_MB not set (e.g. 200)")
	}
	dir := b.TempDir()
	path := filepath.Join(dir, "big.jsonl")
	want, leaf := writeBigClaude(b, path, mb)
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	src := Source{Kind: ClaudeCode}
	Redact("warm up")
	var peak uint64
	var ms runtime.MemStats
	sample := func() {
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
	}
	var res Result
	b.SetBytes(fi.Size())
	cpu0 := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		runtime.GC()
		n := 0
		res, err = Read(context.Background(), src, path, Cursor{}, Options{}, Handler{Message: func(Message) error {
			if n++; n%2000 == 0 {
				sample()
			}
			return nil
		}})
		if err != nil {
			b.Fatal(err)
		}
		if res.Messages != want {
			b.Fatalf("%d messages, want %d", res.Messages, want)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N)/1000, "cpu-s/read")
	// An append of one turn: only the new lines are read.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	last := res.Cursor
	fmt.Fprintf(f, `{"type":"user","uuid":"tail-u","parentUuid":%q,"sessionId":"big","timestamp":"2026-03-09T00:00:00Z","message":{"role":"user","content":"one more question"}}`+"\n", leaf)
	f.Close()
	start := time.Now()
	res2, err := Read(context.Background(), src, path, last, Options{}, Handler{})
	if err != nil {
		b.Fatal(err)
	}
	appendMs := float64(time.Since(start).Microseconds()) / 1000
	if res2.Messages != 1 || res2.Reset {
		b.Fatalf("append: %d messages, reset %v", res2.Messages, res2.Reset)
	}
	b.ReportMetric(float64(fi.Size())/(1<<20), "file-MiB")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(want), "messages")
	b.ReportMetric(appendMs, "append-read-ms")
	b.ReportMetric(float64(len(res.Cursor.State)), "cursor-bytes")
}
