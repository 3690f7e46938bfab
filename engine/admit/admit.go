// Package admit is the process's admission control for searches: a
// bounded number run at once, the others wait their turn in arrival order
// for a while, and then are refused with ErrBusy instead of answered ever
// later.
//
// A search is CPU work, so more of them at once only makes each slower;
// and a server that queues without end answers nobody in time. The gate
// belongs to the process, not to one front end: the corpora take it from
// their configuration and pass it in their Search, so a search arriving
// over MCP, the CLI's socket or the web page waits in the same queue.
package admit

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
)

// DefaultQueueTimeout is how long a search waits for its turn by default
// before "busy, retry": long enough to ride out a burst, short enough that
// an agent retries rather than hangs.
const DefaultQueueTimeout = 5 * time.Second

// DefaultMax is the default number of searches at once: one per core.
func DefaultMax() int { return runtime.GOMAXPROCS(0) }

// ErrBusy is the error of a search that waited in the queue longer than
// the gate's timeout: the server is overloaded, and says so instead of
// answering ever later.
var ErrBusy = errors.New("server busy")

// Gate lets a bounded number of searches run at once; the others wait in
// a first-come, first-served queue (semaphore.Weighted serves waiters in
// order) for at most the gate's timeout. A nil *Gate admits every search
// at once: what tests and one-shot commands, which run one search, use.
type Gate struct {
	sem     *semaphore.Weighted
	max     int
	timeout time.Duration
	waiting atomic.Int64
}

// New returns a gate for max searches at once whose queue waits at most
// timeout; max ≤ 0 means DefaultMax() and timeout ≤ 0 DefaultQueueTimeout.
func New(max int, timeout time.Duration) *Gate {
	if max <= 0 {
		max = DefaultMax()
	}
	if timeout <= 0 {
		timeout = DefaultQueueTimeout
	}
	return &Gate{sem: semaphore.NewWeighted(int64(max)), max: max, timeout: timeout}
}

// Max is the number of searches the gate lets run at once; 0 for a nil
// gate, which bounds none.
func (g *Gate) Max() int {
	if g == nil {
		return 0
	}
	return g.max
}

// Queued is the number of searches waiting for a turn now.
func (g *Gate) Queued() int {
	if g == nil {
		return 0
	}
	return int(g.waiting.Load())
}

// Enter waits for a turn and returns the function that ends it. A caller
// that waits longer than the timeout gets ErrBusy; one whose ctx ends
// first gets ctx's error. On a nil gate it returns at once.
func (g *Gate) Enter(ctx context.Context) (leave func(), err error) {
	if g == nil {
		return func() {}, nil
	}
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

// Do runs search once g lets it in and ends its turn when search returns;
// a search refused a turn gets Enter's error and does not run.
func Do[T any](ctx context.Context, g *Gate, search func() (T, error)) (T, error) {
	leave, err := g.Enter(ctx)
	if err != nil {
		var zero T
		return zero, err
	}
	defer leave()
	return search()
}
