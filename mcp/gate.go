package mcp

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
)

// Defaults for the search gate: as many searches at once as there are
// cores (a search is CPU work: more at once only makes each slower), and
// a wait in the queue of at most five seconds before "busy, retry".
const DefaultSearchQueueTimeout = 5 * time.Second

// DefaultMaxSearches is the default Options.MaxSearches: one per core.
func DefaultMaxSearches() int { return runtime.GOMAXPROCS(0) }

// ErrBusy is the error of a search that waited in the queue longer than
// Options.SearchQueueTimeout: the server is overloaded, and says so
// instead of answering ever later.
var ErrBusy = errors.New("server busy")

// gate lets a bounded number of searches run at once; the others wait in
// a first-come, first-served queue (semaphore.Weighted serves waiters in
// order) for at most timeout.
type gate struct {
	sem     *semaphore.Weighted
	max     int
	timeout time.Duration
	waiting atomic.Int64
}

func newGate(max int, timeout time.Duration) *gate {
	return &gate{sem: semaphore.NewWeighted(int64(max)), max: max, timeout: timeout}
}

// enter waits for a turn and returns the function that ends it. A caller
// that waits longer than the timeout gets ErrBusy; one whose ctx ends
// first gets ctx's error.
func (g *gate) enter(ctx context.Context) (leave func(), err error) {
	if g.sem.TryAcquire(1) {
		return func() { g.sem.Release(1) }, nil
	}
	n := g.waiting.Add(1)
	defer g.waiting.Add(-1)
	wctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	if err := g.sem.Acquire(wctx, 1); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: %d searches running and %d queued; this one waited %s without a turn — retry in a moment", ErrBusy, g.max, n, g.timeout)
	}
	return func() { g.sem.Release(1) }, nil
}
