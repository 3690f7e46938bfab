package store

import (
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
