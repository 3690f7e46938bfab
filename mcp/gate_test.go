package mcp

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"mnemo/engine"
)

// waitQueued polls, bounded, until n callers wait (nothing signals that).
func waitQueued(t *testing.T, g *gate, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for g.waiting.Load() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d waiting after 10 s, want %d", g.waiting.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
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
