package admit

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"
)

// waitQueued polls, bounded, until n callers wait in g's queue (nothing
// signals that). g.waiting counts a caller before it reaches the
// semaphore's queue, so the order of the queue is only settled once that
// many goroutines are parked in semaphore.Acquire's select, which they
// enter after taking their place.
func waitQueued(t *testing.T, g *Gate, n int64) {
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
	g := New(1, time.Minute)
	leave, err := g.Enter(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	order := make(chan int, 5)
	for i := range 5 {
		go func() {
			l, err := g.Enter(context.Background())
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
	if g.Queued() != 5 {
		t.Errorf("Queued() = %d with five waiting", g.Queued())
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
	g := New(2, 20*time.Millisecond)
	for range 2 {
		if _, err := g.Enter(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	_, err := g.Enter(context.Background())
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "retry") {
		t.Fatalf("third search: %v, want ErrBusy saying retry", err)
	}
	const want = "server busy: 2 searches running and 1 queued; this one waited 20ms without a turn — retry in a moment"
	if err.Error() != want {
		t.Errorf("busy error:\n%s\nwant\n%s", err, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.Enter(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled caller: %v, want context.Canceled", err)
	}
}

// TestGateDefaults: zero settings take the defaults, and a nil gate admits
// every caller at once.
func TestGateDefaults(t *testing.T) {
	g := New(0, 0)
	if g.Max() != DefaultMax() || g.timeout != DefaultQueueTimeout {
		t.Errorf("New(0, 0): max %d, timeout %s; want %d, %s", g.Max(), g.timeout, DefaultMax(), DefaultQueueTimeout)
	}
	var none *Gate
	for range 3 {
		leave, err := none.Enter(context.Background())
		if err != nil {
			t.Fatalf("nil gate: %v", err)
		}
		defer leave()
	}
	if none.Max() != 0 || none.Queued() != 0 {
		t.Errorf("nil gate: Max %d, Queued %d; want 0, 0", none.Max(), none.Queued())
	}
}

// TestDo: a search runs holding a turn and gives it back when it returns,
// with its answer or its error; one refused a turn does not run.
func TestDo(t *testing.T) {
	errSearch := errors.New("search failed")
	tests := []struct {
		name    string
		gate    func(*testing.T) *Gate
		err     error // the search's own
		ran     bool
		wantErr error
	}{
		{"nil gate", func(*testing.T) *Gate { return nil }, nil, true, nil},
		{"a free turn", func(*testing.T) *Gate { return New(1, time.Minute) }, nil, true, nil},
		{"the search's error", func(*testing.T) *Gate { return New(1, time.Minute) }, errSearch, true, errSearch},
		{"no turn", func(t *testing.T) *Gate {
			g := New(1, 10*time.Millisecond)
			if _, err := g.Enter(context.Background()); err != nil {
				t.Fatal(err)
			}
			return g
		}, nil, false, ErrBusy},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.gate(t)
			ran := false
			got, err := Do(context.Background(), g, func() (int, error) {
				ran = true
				if g != nil && g.sem.TryAcquire(1) {
					g.sem.Release(1)
					t.Error("the search ran without holding a turn")
				}
				return 7, tc.err
			})
			if ran != tc.ran || !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("ran %v, error %v; want ran %v, error %v", ran, err, tc.ran, tc.wantErr)
			}
			if tc.ran && got != 7 {
				t.Errorf("answer %d, want the search's 7", got)
			}
			if tc.ran && g != nil {
				if !g.sem.TryAcquire(1) {
					t.Fatal("the turn was not given back")
				}
				g.sem.Release(1)
			}
		})
	}
}
