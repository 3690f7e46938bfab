// Read times: when an agent last read a memory. They restart its recency
// clock (see decay), survive restarts, and follow a memory when it is moved
// or renamed — by Move itself, or by content hash when a sync sees one path
// vanish and another with the same content appear. This file owns them: the
// engine's in-memory map and the state store's reads bucket.

package engine

import (
	"fmt"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"

	"mnemo/engine/vault"
)

// carryRead moves the read time of from to to, in the state store and in
// memory; to "" forgets it. Nothing happens if from was never read.
//
// The store is written outside the engine mutex, so searches never wait on
// its fsync; readsMu orders it with other read-time changes.
func (e *Engine) carryRead(from, to string) error {
	e.readsMu.Lock()
	defer e.readsMu.Unlock()
	e.mu.RLock()
	t, ok := e.reads[from]
	e.mu.RUnlock()
	if !ok {
		return nil
	}
	err := e.st.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketReads)
		if err := b.Delete([]byte(from)); err != nil {
			return err
		}
		if to == "" {
			return nil
		}
		return b.Put([]byte(to), []byte(t.UTC().Format(time.RFC3339Nano)))
	})
	if err != nil {
		return err
	}
	e.mu.Lock()
	delete(e.reads, from)
	if to != "" {
		e.reads[to] = t
	}
	e.mu.Unlock()
	return nil
}

// readMark is a read time with the content it was recorded for.
type readMark struct {
	hash string
	read time.Time
}

// readsWithin snapshots the read times of indexed files at or below the
// given paths (nil: everywhere), with their content hashes.
func (e *Engine) readsWithin(roots []string) map[string]readMark {
	e.mu.RLock()
	defer e.mu.RUnlock()
	out := map[string]readMark{}
	for p, t := range e.reads {
		r := e.files[p]
		if r == nil || (roots != nil && !vault.InAnyFolder(p, roots)) {
			continue
		}
		out[p] = readMark{hash: r.Hash, read: t}
	}
	return out
}

// followMoves moves the read time of each file rep removed to a file with
// the same content: one that rep added, else an indexed one without a read
// time (the two halves of a move synced apart). A removed file without such
// a twin keeps its read time under its old path. Sync and SyncPaths call it
// with what readsWithin saw before the batch.
func (e *Engine) followMoves(before map[string]readMark, rep Report) error {
	if len(before) == 0 || len(rep.Removed) == 0 {
		return nil
	}
	type move struct {
		from, to string
		read     time.Time
	}
	var moves []move
	e.mu.RLock()
	added := map[string]string{} // hash → added path
	for _, p := range rep.Added {
		if r := e.files[p]; r != nil {
			if _, taken := added[r.Hash]; !taken {
				added[r.Hash] = p
			}
		}
	}
	removed := append([]string(nil), rep.Removed...)
	sort.Strings(removed)
	for _, p := range removed {
		m, ok := before[p]
		if !ok {
			continue
		}
		to, ok := added[m.hash]
		if ok {
			delete(added, m.hash)
		} else if to = e.unreadWithHash(m.hash); to == "" {
			continue
		}
		moves = append(moves, move{p, to, m.read})
	}
	e.mu.RUnlock()
	for _, m := range moves {
		if err := e.moveRead(m.from, m.to, m.read); err != nil {
			return err
		}
	}
	return nil
}

// unreadWithHash finds an indexed file with this content and no read time.
// The caller holds e.mu for reading.
func (e *Engine) unreadWithHash(hash string) string {
	best := ""
	for p, r := range e.files {
		if r.Hash != hash {
			continue
		}
		if _, read := e.reads[p]; read {
			continue
		}
		if best == "" || p < best {
			best = p
		}
	}
	return best
}

// moveRead gives to the read time of from (keeping to's own if later) and
// forgets from's, durably and in memory.
// The store is written outside the engine mutex, so searches never wait on
// its fsync; readsMu orders it with other read-time changes.
func (e *Engine) moveRead(from, to string, t time.Time) error {
	e.readsMu.Lock()
	defer e.readsMu.Unlock()
	e.mu.RLock()
	if cur, ok := e.reads[to]; ok && cur.After(t) {
		t = cur
	}
	e.mu.RUnlock()
	if err := e.st.moveRead(from, to, t); err != nil {
		return fmt.Errorf("move read time of %s to %s: %w", from, to, err)
	}
	e.mu.Lock()
	delete(e.reads, from)
	e.reads[to] = t
	e.mu.Unlock()
	return nil
}

func (s *stateStore) recordRead(path string, t time.Time) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketReads).Put([]byte(path), []byte(t.UTC().Format(time.RFC3339Nano)))
	})
}

// moveRead moves a read time from one path to another (a renamed or moved
// file), in one transaction.
func (s *stateStore) moveRead(from, to string, t time.Time) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketReads)
		if err := b.Delete([]byte(from)); err != nil {
			return err
		}
		return b.Put([]byte(to), []byte(t.UTC().Format(time.RFC3339Nano)))
	})
}

// recordRead stores that rel was read at t, durably and in memory.
// Like the other read-time changes it writes the store outside the engine
// mutex, ordered by readsMu.
func (e *Engine) recordRead(rel string, t time.Time) error {
	e.readsMu.Lock()
	defer e.readsMu.Unlock()
	if err := e.st.recordRead(rel, t); err != nil {
		return fmt.Errorf("record read of %s: %w", rel, err)
	}
	e.mu.Lock()
	e.reads[rel] = t
	e.mu.Unlock()
	return nil
}

// indexedHash is the content hash of the indexed file rel.
func (e *Engine) indexedHash(rel string) (string, bool) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if r := e.files[rel]; r != nil {
		return r.Hash, true
	}
	return "", false
}

// hasRead reports whether rel has a recorded read time.
func (e *Engine) hasRead(rel string) bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	_, ok := e.reads[rel]
	return ok
}
