package engine

import (
	"fmt"
	"time"

	"mnemo/engine/fulltext"
)

// openFulltext opens the memory index's full-text index (see fulltext.Open),
// its batches lazy.
func (e *Engine) openFulltext(path string, create bool) (*fulltext.Index, error) {
	return fulltext.Open(path, create, fulltext.LazyBatches, e.cfg.scorch)
}

// commitBatch commits a batch's records to the state store and, in the same
// transaction, marks pending the paths the batch is about to change in the
// full-text index and clears the marks of batches Bleve has persisted
// since. It returns the number the batch must be given to ftBatch under.
func (e *Engine) commitBatch(pending []string, changes []change, skips map[string]string, unskip []string) (uint64, error) {
	seq, clear := e.persist.Begin(pending)
	if err := e.st.commitBatch(changes, skips, unskip, pending, clear); err != nil {
		e.persist.Abandon(seq)
		e.persist.Restore(clear)
		return 0, err
	}
	return seq, nil
}

// ftBatch writes b to the full-text index as batch seq. It returns once b
// is searchable; Bleve persists it in the background. If Bleve refuses the
// batch, its paths' marks stay until the next open repairs them.
func (e *Engine) ftBatch(b *fulltext.Batch, seq uint64) error {
	e.persist.Track(b, seq)
	err := e.ft.Batch(b)
	if err != nil {
		e.persist.Abandon(seq)
	}
	return err
}

// persistTimeout bounds how long Close waits for Bleve to persist what it
// was given. Past it, the marks left behind make the next open repair.
const persistTimeout = 30 * time.Second

// flushFulltext waits until Bleve has persisted every batch and then clears
// the pending marks, so that a clean close leaves nothing to repair.
func (e *Engine) flushFulltext() error {
	if err := e.persist.Wait(persistTimeout); err != nil {
		return err
	}
	if clear := e.persist.Cleared(); len(clear) > 0 {
		if err := e.st.markPending(nil, clear); err != nil {
			e.persist.Restore(clear)
			return fmt.Errorf("clear pending marks: %w", err)
		}
	}
	return nil
}
