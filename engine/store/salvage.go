package store

import (
	"fmt"
	"path/filepath"
	"runtime/debug"
	"sort"

	bolt "go.etcd.io/bbolt"
)

// SetAsideCopies lists the set-aside copies (SetAside) of the state store at
// path, oldest first.
func SetAsideCopies(path string) ([]string, error) {
	m, err := filepath.Glob(path + ".corrupt-*")
	if err != nil {
		return nil, err
	}
	sort.Strings(m) // the names end in their UTC time, so this is oldest first
	return m, nil
}

// Salvaged is a set-aside state store opened to read what is still
// readable in it.
type Salvaged struct{ db *bolt.DB }

// Salvage opens a set-aside copy of a state store read-only, without the
// check that set it aside (verify), so that what its damage spared can be
// read back. A copy bbolt cannot open at all (garbled meta pages, not a
// bbolt file) fails here, with an error wrapping ErrCorrupt where bbolt
// says so.
func Salvage(path string) (*Salvaged, error) {
	var db *bolt.DB
	err := guardReads(func() (err error) {
		db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: openTimeout, ReadOnly: true})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", filepath.Base(path), err)
	}
	return &Salvaged{db: db}, nil
}

// View runs fn in a read transaction of the copy. Reading a damaged page —
// bbolt's assertions, or a memory fault on a page the file no longer holds,
// in bbolt's code or in fn's — ends fn with an error wrapping ErrCorrupt
// instead of the process.
func (s *Salvaged) View(fn func(*bolt.Tx) error) error {
	return guardReads(func() error { return s.db.View(fn) })
}

// Close releases the copy.
func (s *Salvaged) Close() error { return s.db.Close() }

// guardReads is guard for code that reads a damaged file's pages beyond
// bbolt's own: a memory fault is turned into ErrCorrupt wherever it
// happens. Other panics outside bbolt are bugs, and are not caught.
func guardReads(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault && !panicInBbolt() {
				panic(r)
			}
			err = fmt.Errorf("%w: %v", ErrCorrupt, r)
		}
	}()
	return fn()
}
