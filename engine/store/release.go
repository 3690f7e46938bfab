package store

import (
	"sync"

	bolt "go.etcd.io/bbolt"
)

// ReleasePages drops the state store's pages from the process's resident
// memory, leaving them in the page cache: bbolt reads its file through a
// read-only shared mapping, and every page an open reads (verify reads
// them all, a corpus's load reads every record) stays mapped, so counted
// in the process's RSS, for as long as the process runs. At a million
// sessions messages that was ~680 MB of a serve's 1.5 GB peak, pages no
// query reads again. A page read later is mapped again from the cache (a
// minor fault). The mapping holds still while a read transaction is open
// (bbolt remaps only under its exclusive mmap lock), so the advice is
// given inside one. Where the system has no such advice it does nothing.
func ReleasePages(db *bolt.DB) error {
	return db.View(func(tx *bolt.Tx) error {
		return releaseMapping(db.Info().Data, uintptr(tx.Size()))
	})
}

// PageTender lets go of a store's mapped pages once they have grown by
// more than its allowance since the last release: each search maps the
// pages of the records and text blocks it reads (~1.5 MB a query at 1M
// messages), and a serve that kept them all grew by ~150 MB over 100
// queries; releasing the whole mapping every few searches instead cost
// each following search its hot pages again as minor faults (at 1M
// messages releasing every 16 searches took 18 % of a hybrid search's
// CPU against never releasing). Growth is read from the process's
// resident file pages (Bleve's mapped segments count too, so a release
// may come early, never late). Safe for concurrent use.
type PageTender struct {
	db    *bolt.DB
	allow int64
	mu    sync.Mutex
	base  int64 // the file pages mapped after the last release
}

// NewPageTender tends db's pages, releasing them once more than allow
// bytes have been mapped since it was made or last released them.
func NewPageTender(db *bolt.DB, allow int64) *PageTender {
	return &PageTender{db: db, allow: allow, base: mappedFileBytes()}
}

// Release lets go of the pages now: after an open or a load that read
// the whole store.
func (t *PageTender) Release() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.release()
}

// Tend releases the pages if they have grown past the allowance (a
// failure costs only memory, so it is not returned).
func (t *PageTender) Tend() {
	if !t.mu.TryLock() {
		return // another search is tending them now
	}
	defer t.mu.Unlock()
	if mappedFileBytes()-t.base > t.allow {
		t.release()
	}
}

// release drops the pages and notes what stays mapped. The caller holds
// t.mu.
func (t *PageTender) release() {
	_ = ReleasePages(t.db)
	t.base = mappedFileBytes()
}
