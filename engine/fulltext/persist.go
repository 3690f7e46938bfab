package fulltext

import (
	"fmt"
	"sync"
	"time"
)

// Persisting the full-text index off the write path.
//
// Waiting inside a Bleve batch for Bleve's persister (a segment written and
// fsynced, then its root file) is the largest part of a write's latency
// under load, and it sits behind whatever the persister and merger are busy
// with. So the memory index is opened with LazyBatches: a batch returns as
// soon as its documents are searchable, and durability comes from pending
// marks in the corpus's state store. One state-store transaction writes a
// batch's records and marks its paths pending before the batch reaches
// Bleve, and a mark stays until Bleve reports the batch persisted. A crash
// at any point leaves a mark on every path Bleve's files may disagree on;
// the next open drops those paths from both indexes and the next sync
// indexes them again from their sources, which a write made durable
// before it answered. Marks of persisted batches are cleared by the next
// batch's transaction, so clearing costs no fsync of its own; a completed
// sync and a close wait for Bleve and clear what is left.

// Tracker follows which full-text batches Bleve has persisted, and so
// which pending marks may go. Safe for concurrent use.
type Tracker struct {
	mu        sync.Mutex
	seq       uint64            // the last batch handed out a number
	persisted uint64            // every batch up to this one is on disk
	unsaved   map[string]uint64 // path → last batch that changed it, not yet on disk
	clearable map[string]bool   // paths whose marks may go
	changed   chan struct{}     // closed and replaced whenever persisted moves
}

// NewTracker returns a tracker with no batch numbered yet.
func NewTracker() *Tracker {
	return &Tracker{unsaved: map[string]uint64{}, clearable: map[string]bool{}, changed: make(chan struct{})}
}

// Begin numbers the next batch, which changes paths, and returns the
// marks that may be cleared in the same transaction that marks paths: those
// of persisted batches, less paths, which are marked again.
func (p *Tracker) Begin(paths []string) (seq uint64, clear []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seq++
	for _, path := range paths {
		p.unsaved[path] = p.seq
		delete(p.clearable, path)
	}
	return p.seq, p.takeClearable()
}

// Cleared returns the marks that may be cleared now (for a transaction
// that marks nothing). If that transaction fails, the marks simply stay:
// a mark too many costs a re-sync of one file at the next open, never a
// wrong answer.
func (p *Tracker) Cleared() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.takeClearable()
}

// Abandon gives up batch seq, which never reached Bleve: its paths' marks
// must stay (until a later batch changes them again, or the next open).
func (p *Tracker) Abandon(seq uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for path, s := range p.unsaved {
		if s == seq {
			delete(p.unsaved, path)
		}
	}
}

// Forget drops every batch numbered so far, as when the index they went to
// is replaced by an empty one and the marks are gone with it: nothing is
// left to wait for or to clear.
func (p *Tracker) Forget() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.persisted = p.seq
	clear(p.unsaved)
	clear(p.clearable)
	close(p.changed)
	p.changed = make(chan struct{})
}

// Restore puts back marks a failed transaction did not clear.
func (p *Tracker) Restore(marks []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, path := range marks {
		if _, again := p.unsaved[path]; !again {
			p.clearable[path] = true
		}
	}
}

func (p *Tracker) takeClearable() []string {
	out := make([]string, 0, len(p.clearable))
	for path := range p.clearable {
		out = append(out, path)
	}
	clear(p.clearable)
	return out
}

// Track makes b report to p when Bleve has persisted it, as batch seq.
func (p *Tracker) Track(b *Batch, seq uint64) {
	b.SetPersistedCallback(func(err error) {
		if err == nil { // on failure Bleve retries; the marks stay meanwhile
			p.persistedUpTo(seq)
		}
	})
}

// persistedUpTo records that Bleve has persisted batch seq, and so every
// batch before it (Bleve persists its snapshots in order).
func (p *Tracker) persistedUpTo(seq uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if seq <= p.persisted {
		return
	}
	p.persisted = seq
	for path, s := range p.unsaved {
		if s <= seq {
			delete(p.unsaved, path)
			p.clearable[path] = true
		}
	}
	close(p.changed)
	p.changed = make(chan struct{})
}

// Wait returns once every batch numbered so far is persisted, or with an
// error after timeout (a persister that keeps failing: a full disk).
func (p *Tracker) Wait(timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	p.mu.Lock()
	want := p.seq
	for p.persisted < want {
		ch := p.changed
		p.mu.Unlock()
		select {
		case <-ch:
		case <-deadline.C:
			return fmt.Errorf("full-text index not persisted after %s", timeout)
		}
		p.mu.Lock()
	}
	p.mu.Unlock()
	return nil
}
