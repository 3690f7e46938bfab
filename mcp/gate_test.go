package mcp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"mnemo/engine"
)

// waitQueued polls, bounded, until n callers wait in g's queue (nothing
// signals that). g.waiting counts a caller before it reaches the
// semaphore's queue, so the order of the queue is only settled once that
// many goroutines are parked in semaphore.Acquire's select, which they
// enter after taking their place.
func waitQueued(t *testing.T, g *gate, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for g.waiting.Load() != n || parkedInAcquire() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d counted and %d parked in the queue after 10 s, want %d", g.waiting.Load(), parkedInAcquire(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// parkedInAcquire counts the goroutines blocked in semaphore.Acquire.
func parkedInAcquire() int64 {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var n int64
	for _, g := range strings.Split(string(buf), "\n\n") {
		head, _, _ := strings.Cut(g, "\n")
		if strings.Contains(head, "[select") && strings.Contains(g, "semaphore.(*Weighted).Acquire") {
			n++
		}
	}
	return n
}

// TestGateFIFO: waiters get their turn in the order they came.
func TestGateFIFO(t *testing.T) {
	g := newGate(1, time.Minute)
	leave, err := g.enter(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	order := make(chan int, 5)
	for i := range 5 {
		go func() {
			l, err := g.enter(context.Background())
			if err != nil {
				t.Error(err)
				order <- -1
				return
			}
			order <- i
			l()
		}()
		waitQueued(t, g, int64(i+1))
	}
	leave()
	for want := range 5 {
		if got := <-order; got != want {
			t.Fatalf("turn %d went to waiter %d", want, got)
		}
	}
}

// TestGateBusy: past the queue timeout a waiter gets ErrBusy with a message
// that says to retry; a caller that gives up first gets its own error.
func TestGateBusy(t *testing.T) {
	g := newGate(2, 20*time.Millisecond)
	for range 2 {
		if _, err := g.enter(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	_, err := g.enter(context.Background())
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "retry") {
		t.Fatalf("third search: %v, want ErrBusy saying retry", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.enter(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled caller: %v, want context.Canceled", err)
	}
}

// TestSearchBusyIsToolError: a search that finds the gate full answers
// with a one-line tool error, not a hang and not an empty result.
func TestSearchBusyIsToolError(t *testing.T) {
	s := &server{opts: Options{}, searches: newGate(1, 10*time.Millisecond)}
	leave, err := s.searches.enter(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer leave()
	_, err = s.search(context.Background(), &engine.Query{Text: "anything", Page: 1, PageSize: 10})
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("search with the gate full: %v, want ErrBusy", err)
	}
	if res := errorResult(err); !res.IsError {
		t.Fatal("busy is not an isError result")
	}
}

// TestWritesBypassTheGate: writes never queue behind searches. With every
// search turn taken (and the queue timeout far away), WriteMemory and
// EditMemory still answer, and the memory is searchable right after.
func TestWritesBypassTheGate(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "mem"), 0o755); err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Open(context.Background(), engine.Config{MemoryDir: filepath.Join(dir, "mem"), IndexDir: filepath.Join(dir, "idx")})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	s := &server{eng: eng, opts: Options{}, searches: newGate(1, time.Hour)}
	leave, err := s.searches.enter(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer leave()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ref, err := s.writeTool().run(ctx, &writeIn{Title: "Gate", Content: "the narwhal surfaces"})
	if err != nil {
		t.Fatalf("WriteMemory with every search turn taken: %v", err)
	}
	if _, err := s.editTool().run(ctx, &editIn{Identifier: ref.Path, Operation: "append", Content: "and the walrus too"}); err != nil {
		t.Fatalf("EditMemory with every search turn taken: %v", err)
	}
	for _, w := range []string{"narwhal", "walrus"} {
		p, err := eng.Search(ctx, engine.Query{Text: w, Mode: engine.FullText})
		if err != nil || len(p.Results) != 1 || p.Results[0].Path != ref.Path {
			t.Errorf("%s right after the write: %v, %v; want %s", w, p.Results, err, ref.Path)
		}
	}
}
