package engine

import (
	"fmt"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
)

// Persisting the full-text index off the write path.
//
// A write used to wait, inside its Bleve batch, for Bleve's persister to
// write the batch's segment and fsync it and Bleve's root file: under load
// that wait (behind whatever the persister and merger were busy with) was
// the largest part of a write's latency; and it paid two state-store
// commits (a pending mark, then the records), each with its fsyncs. The
// memory index is opened with scorch's unsafe_batch, so a batch returns as
// soon as its documents are searchable, and durability comes from the
// pending marks: one state-store transaction writes a batch's records and
// marks its paths pending before the batch reaches Bleve, and a mark stays
// until Bleve reports the batch persisted. A crash at any point leaves a
// mark on every path Bleve's files may disagree on; the next Open drops
// those paths from both indexes and the next sync indexes them again from
// the memory files, which a write made durable before it answered
// (TestWriteSurvivesKill9). Marks of persisted batches are cleared by the
// next batch's transaction, so clearing costs no fsync of its own; a
// completed Sync and Close wait for Bleve and clear what is left.

// persistence follows which full-text batches Bleve has persisted, and so
// which pending marks may go.
type persistence struct {
	mu        sync.Mutex
	seq       uint64            // the last batch handed out a number
	persisted uint64            // every batch up to this one is on disk
	unsaved   map[string]uint64 // path → last batch that changed it, not yet on disk
	clearable map[string]bool   // paths whose marks may go
	changed   chan struct{}     // closed and replaced whenever persisted moves
}

func newPersistence() *persistence {
	return &persistence{unsaved: map[string]uint64{}, clearable: map[string]bool{}, changed: make(chan struct{})}
}

// begin numbers the next batch, which changes paths, and returns the
// marks that may be cleared in the same transaction that marks paths: those
// of persisted batches, less paths, which are marked again.
func (p *persistence) begin(paths []string) (seq uint64, clear []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seq++
	for _, path := range paths {
		p.unsaved[path] = p.seq
		delete(p.clearable, path)
	}
	return p.seq, p.takeClearable()
}

// cleared returns the marks that may be cleared now (for a transaction
// that marks nothing). If that transaction fails, the marks simply stay:
// a mark too many costs a re-sync of one file at the next open, never a
// wrong answer.
func (p *persistence) cleared() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.takeClearable()
}

// abandon gives up batch seq, which never reached Bleve: its paths' marks
// must stay (until a later batch changes them again, or the next open).
func (p *persistence) abandon(seq uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for path, s := range p.unsaved {
		if s == seq {
			delete(p.unsaved, path)
		}
	}
}

// forget drops every batch numbered so far, as when the index they went to
// is replaced by an empty one and the marks are gone with it: nothing is
// left to wait for or to clear.
func (p *persistence) forget() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.persisted = p.seq
	clear(p.unsaved)
	clear(p.clearable)
	close(p.changed)
	p.changed = make(chan struct{})
}

// restore puts back marks a failed transaction did not clear.
func (p *persistence) restore(marks []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, path := range marks {
		if _, again := p.unsaved[path]; !again {
			p.clearable[path] = true
		}
	}
}

func (p *persistence) takeClearable() []string {
	out := make([]string, 0, len(p.clearable))
	for path := range p.clearable {
		out = append(out, path)
	}
	clear(p.clearable)
	return out
}

// track makes b report to p when Bleve has persisted it, as batch seq.
func (p *persistence) track(b *bleve.Batch, seq uint64) {
	b.SetPersistedCallback(func(err error) {
		if err == nil { // on failure Bleve retries; the marks stay meanwhile
			p.persistedUpTo(seq)
		}
	})
}

// persistedUpTo records that Bleve has persisted batch seq, and so every
// batch before it (Bleve persists its snapshots in order).
func (p *persistence) persistedUpTo(seq uint64) {
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

// wait returns once every batch numbered so far is persisted, or with an
// error after timeout (a persister that keeps failing: a full disk).
func (p *persistence) wait(timeout time.Duration) error {
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

// openFulltext opens the memory index's full-text index (see openFulltext),
// its batches lazy.
func (e *Engine) openFulltext(path string, create bool) (*fulltext, error) {
	return openFulltextUsing(path, create, lazyBatches, e.cfg.scorch)
}

// commitBatch commits a batch's records to the state store and, in the same
// transaction, marks pending the paths the batch is about to change in the
// full-text index and clears the marks of batches Bleve has persisted
// since. It returns the number the batch must be given to ftBatch under.
func (e *Engine) commitBatch(pending []string, changes []change, skips map[string]string, unskip []string) (uint64, error) {
	seq, clear := e.persist.begin(pending)
	if err := e.st.commitBatch(changes, skips, unskip, pending, clear); err != nil {
		e.persist.abandon(seq)
		e.persist.restore(clear)
		return 0, err
	}
	return seq, nil
}

// ftBatch writes b to the full-text index as batch seq. It returns once b
// is searchable; Bleve persists it in the background. If Bleve refuses the
// batch, its paths' marks stay until the next open repairs them.
func (e *Engine) ftBatch(b *bleve.Batch, seq uint64) error {
	e.persist.track(b, seq)
	err := e.ft.idx.Batch(b)
	if err != nil {
		e.persist.abandon(seq)
	}
	return err
}

// persistTimeout bounds how long Close waits for Bleve to persist what it
// was given. Past it, the marks left behind make the next open repair.
const persistTimeout = 30 * time.Second

// flushFulltext waits until Bleve has persisted every batch and then clears
// the pending marks, so that a clean close leaves nothing to repair.
func (e *Engine) flushFulltext() error {
	if err := e.persist.wait(persistTimeout); err != nil {
		return err
	}
	if clear := e.persist.cleared(); len(clear) > 0 {
		if err := e.st.markPending(nil, clear); err != nil {
			e.persist.restore(clear)
			return fmt.Errorf("clear pending marks: %w", err)
		}
	}
	return nil
}
