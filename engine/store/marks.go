package store

import (
	"errors"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// MetaUnfinished is the meta key a first or full sync sets when it starts
// and clears when it completes: set at open, the last one was cut short,
// and the index holds only part of its sources.
const MetaUnfinished = "unfinished"

// MarkUnfinished records, before a first or full sync writes anything,
// that the index is about to hold part of its sources; the sync clears it
// (MetaUnfinished: "") with the rest of its meta when it completes. what
// names the sync in the mark ("sync", "sessions sync"); the mark is
// returned, for the corpus to hold in memory.
func MarkUnfinished(db *bolt.DB, what string, start time.Time) (string, error) {
	v := what + " started " + start.UTC().Format(time.RFC3339) + " has not completed"
	return v, SetMeta(db, map[string]string{MetaUnfinished: v})
}

// Meta reads one meta value ("" if unset).
func Meta(db *bolt.DB, key string) string {
	var v string
	db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket(BucketMeta); b != nil {
			v = string(b.Get([]byte(key)))
		}
		return nil
	})
	return v
}

// MetaAll reads every meta value.
func MetaAll(db *bolt.DB) map[string]string {
	out := map[string]string{}
	db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket(BucketMeta); b != nil {
			b.ForEach(func(k, v []byte) error { out[string(k)] = string(v); return nil })
		}
		return nil
	})
	return out
}

// SetMeta writes meta values in one transaction.
func SetMeta(db *bolt.DB, kv map[string]string) error {
	return db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(BucketMeta)
		for k, v := range kv {
			if err := b.Put([]byte(k), []byte(v)); err != nil {
				return err
			}
		}
		return nil
	})
}

// Pending marks make a batch undoable. A corpus marks what a batch is
// about to write to its full-text index before writing it, and clears the
// mark once the full-text index holds the batch on disk and the state
// store records it; a writer that opens the store and finds marks undoes
// exactly those writes and indexes them again: no ghost, no loss. The key
// is the corpus's unit (a memory's path, a session's number), the value
// the corpus's to use.

// MarkPending sets the pending mark of key.
func MarkPending(tx *bolt.Tx, key, val []byte) error {
	return tx.Bucket(BucketPending).Put(key, val)
}

// PendingMark is the value of key's pending mark, nil if it has none.
func PendingMark(tx *bolt.Tx, key []byte) []byte {
	return tx.Bucket(BucketPending).Get(key)
}

// ClearPending removes the pending marks of keys.
func ClearPending(tx *bolt.Tx, keys ...[]byte) error {
	b := tx.Bucket(BucketPending)
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// ForEachPending calls fn for every pending mark.
func ForEachPending(tx *bolt.Tx, fn func(key, val []byte) error) error {
	b := tx.Bucket(BucketPending)
	if b == nil {
		return nil
	}
	return b.ForEach(fn)
}

// DamageMark is what was found wrong with a full-text index, kept from the
// moment it is found — at open, or by a query that failed in Bleve — until
// a rebuild clears it: searches that need the index refuse, status says
// so, and a writer's next sync rebuilds. Safe for concurrent use.
type DamageMark struct{ p atomic.Pointer[error] }

// Note keeps err if it is damage (ErrIndexDamaged) and none is kept yet.
func (d *DamageMark) Note(err error) {
	if errors.Is(err, ErrIndexDamaged) {
		d.p.CompareAndSwap(nil, &err)
	}
}

// Get returns the damage kept, or nil.
func (d *DamageMark) Get() error {
	if p := d.p.Load(); p != nil {
		return *p
	}
	return nil
}

// Clear forgets the damage: the index has been rebuilt.
func (d *DamageMark) Clear() { d.p.Store(nil) }
