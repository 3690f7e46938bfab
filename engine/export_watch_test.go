package engine

import (
	"sync"
	"time"
)

// Batches lets a test wait on the watcher's batches instead of polling:
// pass Done as (or call it from) WatchOptions.OnBatch, which runs after a
// batch's results are searchable, and Await re-checks a condition after
// each batch.
type Batches struct {
	mu   sync.Mutex
	next chan struct{} // closed, and replaced, by the next batch
}

// NewBatches returns a Batches with no batch seen yet.
func NewBatches() *Batches { return &Batches{next: make(chan struct{})} }

// Done records a batch and wakes every Await.
func (b *Batches) Done(Report) {
	b.mu.Lock()
	close(b.next)
	b.next = make(chan struct{})
	b.mu.Unlock()
}

// Await reports whether cond holds, checking it now and after each batch
// until limit passes.
func (b *Batches) Await(limit time.Duration, cond func() bool) bool {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		b.mu.Lock()
		next := b.next // taken before cond, so a batch during cond is not missed
		b.mu.Unlock()
		if cond() {
			return true
		}
		select {
		case <-next:
		case <-timer.C:
			return false
		}
	}
}
