// Package store is the crash discipline every corpus's state store follows:
// one bbolt file beside the corpus's full-text index, opened, verified and,
// when bbolt cannot read it, set aside for a post-mortem so the corpus can be
// rebuilt from its sources; a schema check that refuses an index written by
// a newer mnemo; the marks that make a crash recoverable (pending marks on a
// batch in flight, the unfinished mark of a first or full sync, the damage
// mark of a full-text index); the writer's PID file; and the errors an index
// answers with, in one place.
//
// It exists so that the memory corpus and the sessions corpus cannot drift
// apart in how they survive a crash. It knows nothing of what a corpus
// stores: it must not import engine or engine/sessions, nor name a corpus's
// buckets beyond the ones the discipline itself owns (meta, pending).
package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterr "go.etcd.io/bbolt/errors"
)

// SchemaVersion changes whenever the layout of the indexes or of a state
// store changes in a way an older or newer mnemo cannot read. An index of
// an older version is rebuilt; one of a newer version is refused.
const SchemaVersion = 6

// Layout of an index folder, as far as the discipline goes.
const (
	StateFile = "state.db"   // the state store
	PIDFile   = "writer.pid" // the writer's process id (WritePID)
)

// The buckets the discipline owns in every state store.
var (
	BucketMeta    = []byte("meta")    // schema, last sync, the unfinished mark, …
	BucketPending = []byte("pending") // pending marks (MarkPending)
)

// Options says how to open one state store.
type Options struct {
	What     string   // names the file in errors ("state store")
	ReadOnly bool     // no lock taken, nothing written
	Buckets  [][]byte // the corpus's buckets, created by a writer if missing
	// NotReady is what a reader gets from OpenCorpus when the store is
	// missing; nil means ErrIndexNotReady.
	NotReady error
	// Rebuild says, after a damaged store was replaced (OpenCorpus), what
	// the corpus's rebuild does ("rebuilding from the files").
	Rebuild string
	// Schema is the newest schema this mnemo reads in this store; 0 means
	// SchemaVersion. A corpus whose own layout moved on without the other's
	// (the sessions store) says so here, so that an older mnemo refuses it.
	Schema int
	// Preload, if set, reads the store inside a read transaction on a
	// goroutine of its own while the open verifies the store (verify), so
	// that a corpus's load and verify share the two cores. The store is
	// not verified yet: what Preload reads must be kept apart from
	// anything live, and used only once the open has succeeded, and only
	// if no transaction has committed since (its tx.ID()). It starts only
	// once the file is known not to be torn; whatever it panics with
	// (bbolt's assertions, a fault, a decoder meeting garbage) is
	// recovered and its error dropped, since what it read is thrown away:
	// the corpus reads again, after verify, when it has no preload. It
	// calls tend every few thousand records: verify maps every page of the
	// store, and tend lets them go when more than releaseAbove are mapped,
	// so that they and the preload's heap do not add up.
	Preload func(tx *bolt.Tx, tend func()) error
}

// Open opens the bbolt file at path. A file held by another process fails
// with an error wrapping ErrInUse; one bbolt cannot read — torn, garbled,
// not bbolt — with one wrapping ErrCorrupt (see OpenOrReplace); a writer
// refuses a store of a newer schema before anything is written to it, then
// creates the buckets it lacks.
func Open(path string, o Options) (*bolt.DB, error) {
	db, err := openBolt(path, o)
	if err != nil || o.ReadOnly {
		return db, err
	}
	if err = initBuckets(db, path, o); err != nil {
		db.Close()
		if errors.Is(err, ErrIndexIncompatible) {
			return nil, err
		}
		return nil, fmt.Errorf("init %s: %w", o.What, err)
	}
	return db, nil
}

// initBuckets refuses a store of a newer schema and creates the buckets it
// lacks. A store that has them all is not written to: a commit would
// move it past what Options.Preload read (and costs a sync to disk).
func initBuckets(db *bolt.DB, path string, o Options) error {
	buckets := append([][]byte{BucketMeta, BucketPending}, o.Buckets...)
	checkSchema := func(tx *bolt.Tx) error {
		if m := tx.Bucket(BucketMeta); m != nil {
			return CheckSchemaOf(filepath.Dir(path), string(m.Get([]byte("schema"))), o.schema())
		}
		return nil
	}
	missing := false
	err := db.View(func(tx *bolt.Tx) error {
		for _, b := range buckets {
			missing = missing || tx.Bucket(b) == nil
		}
		return checkSchema(tx)
	})
	if err != nil || !missing {
		return err
	}
	return db.Update(func(tx *bolt.Tx) error {
		if err := checkSchema(tx); err != nil {
			return err
		}
		for _, b := range buckets {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
}

// OpenOrReplace is Open for a writer that rebuilds what it cannot read: a
// file bbolt cannot read is set aside (SetAside, named by now()) and a fresh
// one opened in its place. replaced then says what was wrong and the name
// it was set aside as; the corpus's next sync must rebuild it all. A reader
// gets Open's error: it must not move what a writer may be using.
func OpenOrReplace(path string, o Options, now func() time.Time) (db *bolt.DB, replaced string, err error) {
	db, err = Open(path, o)
	if !errors.Is(err, ErrCorrupt) || o.ReadOnly {
		return db, "", err
	}
	// The truth about what is indexed is lost, but the sources are not:
	// keep the damaged file for a post-mortem and start afresh.
	why := err
	aside, rerr := SetAside(path, now())
	if rerr != nil {
		return nil, "", fmt.Errorf("%w (and setting it aside failed: %v)", err, rerr)
	}
	if db, err = Open(path, o); err != nil {
		return nil, "", err
	}
	return db, fmt.Sprintf("%v; set aside as %s", why, filepath.Base(aside)), nil
}

// OpenCorpus opens the state store of the index folder dir for one corpus
// and runs the corpus's open stages on it. A reader needs the store there,
// else o.NotReady (ErrIndexNotReady if unset): no sync has built the index
// yet. A writer creates dir, opens the store through OpenOrReplace and
// writes its PID; when a fresh store replaced a damaged one, stages are
// told why the corpus must be rebuilt (what was wrong, what it was set
// aside as, and o.Rebuild), else given "". When the stages fail, closeAll
// (the corpus's Close, which closes the store too) runs, and their error
// is returned.
func OpenCorpus(ctx context.Context, dir string, o Options, now func() time.Time,
	stages func(ctx context.Context, db *bolt.DB, rebuild string) error, closeAll func() error) error {
	path := filepath.Join(dir, StateFile)
	if o.ReadOnly {
		if _, err := os.Stat(path); err != nil {
			return cmp.Or(o.NotReady, ErrIndexNotReady)
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create the folder of the %s: %w", o.What, err)
	}
	db, replaced, err := OpenOrReplace(path, o, now)
	if err != nil {
		return err
	}
	if !o.ReadOnly {
		WritePID(dir)
	}
	if replaced != "" {
		replaced += ", " + o.Rebuild
	}
	if err := stages(ctx, db, replaced); err != nil {
		closeAll()
		return err
	}
	return nil
}

// openTimeout is how long an open waits for another process's lock.
const openTimeout = 500 * time.Millisecond

// openBolt opens one bbolt file of the index (o.What names it in
// errors), then reads all of it once (verify), so damage is found at
// open, with o.Preload beside it.
func openBolt(path string, o Options) (*bolt.DB, error) {
	what := o.What
	var db *bolt.DB
	err := guard(func() (err error) {
		db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: openTimeout, ReadOnly: o.ReadOnly})
		return err
	})
	if err != nil {
		if errors.Is(err, bolterr.ErrTimeout) {
			return nil, errInUse(path)
		}
		if errors.Is(err, bolterr.ErrInvalid) || errors.Is(err, bolterr.ErrChecksum) || errors.Is(err, bolterr.ErrVersionMismatch) ||
			strings.HasPrefix(err.Error(), "file size too small") {
			err = fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		return nil, fmt.Errorf("open %s %s: %w", what, path, err)
	}
	if err := verifyBeside(db, o.Preload); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s %s: %w", what, path, err)
	}
	// verify mapped every page: let them go before the caller's load maps
	// what it reads on top (a failure costs only memory).
	_ = ReleasePages(db)
	return db, nil
}

// SetAside renames a state store bbolt cannot read to PATH.corrupt-<time>,
// kept for a post-mortem, so a fresh one can be rebuilt in its place. It
// returns the new name.
func SetAside(path string, now time.Time) (string, error) {
	aside := path + ".corrupt-" + now.UTC().Format("20060102T150405.000Z")
	if err := os.Rename(path, aside); err != nil {
		return "", err
	}
	return aside, nil
}

// schema is the newest schema the store's reader takes.
func (o Options) schema() int {
	if o.Schema == 0 {
		return SchemaVersion
	}
	return o.Schema
}

// CheckSchema refuses an index whose schema (the meta value) is newer than
// this mnemo's; "" and "0" are an index whose first sync has not finished.
func CheckSchema(indexDir, schema string) error {
	return CheckSchemaOf(indexDir, schema, SchemaVersion)
}

// CheckSchemaOf is CheckSchema for a store whose newest schema is current.
func CheckSchemaOf(indexDir, schema string, current int) error {
	if v, _ := strconv.Atoi(schema); v > current {
		return fmt.Errorf("%s has schema %d, this mnemo reads %d: %w", indexDir, v, current, ErrIndexIncompatible)
	}
	return nil
}

// OlderSchema reports the stored schema (the meta value) when it is older
// than this mnemo's, so the index must be rebuilt; false for an index
// whose first sync has not finished.
func OlderSchema(schema string) (int, bool) {
	return OlderSchemaOf(schema, SchemaVersion)
}

// OlderSchemaOf is OlderSchema for a store whose newest schema is current.
func OlderSchemaOf(schema string, current int) (int, bool) {
	v, _ := strconv.Atoi(schema)
	return v, v != 0 && v < current
}

// guard runs fn, which reads a state store, and turns what bbolt does on a
// damaged file into an error wrapping ErrCorrupt: its assertion panics, and
// the faults of reading a torn memory-mapped file (which would otherwise
// kill the process). Panics that do not start in bbolt are bugs, and are
// not caught.
func guard(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if !panicInBbolt() {
				panic(r)
			}
			err = fmt.Errorf("%w: %v", ErrCorrupt, r)
		}
	}()
	return fn()
}

// panicInBbolt reports whether the panic being recovered was raised in
// bbolt's code: the first frame below the runtime's is bbolt's.
func panicInBbolt() bool {
	pc := make([]uintptr, 64)
	frames := runtime.CallersFrames(pc[:runtime.Callers(3, pc)])
	for {
		f, more := frames.Next()
		if !strings.HasPrefix(f.Function, "runtime.") {
			return strings.HasPrefix(f.Function, "go.etcd.io/bbolt")
		}
		if !more {
			return false
		}
	}
}

// verifyBeside runs verify and, once the file is known not to be torn,
// preload (Options.Preload) beside it on a goroutine of its own; it
// returns when both are done.
func verifyBeside(db *bolt.DB, preload func(tx *bolt.Tx, tend func()) error) error {
	if err := guard(func() error { return db.View(checkTorn) }); err != nil || preload == nil {
		if err != nil {
			return err
		}
		return verify(db, nil)
	}
	if err := guard(func() error { return loadFreelist(db) }); err != nil {
		return err
	}
	done := make(chan struct{})
	t := tender{base: mappedFileBytes()}
	go func() {
		defer close(done)
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() { _ = recover() }() // thrown away (Options.Preload)
		_ = db.View(func(tx *bolt.Tx) error { return preload(tx, func() { t.tend(tx) }) })
	}()
	err := verify(db, t.tend)
	<-done
	return err
}

// releaseAbove is how much of the store verifyBeside lets stay mapped
// while verify and the preload read it: together they would map the whole
// store (~660 MB at 1M messages) and the preload's heap on top. Each
// release costs the pages read again after it a minor fault (tx.Check
// reads every page after the walk has): releasing every 25 ms whatever
// was mapped held a no-op sync at 1M messages to 350–590 MB but cost ~0.1 s
// of CPU; never releasing peaked at 806 MB against 734 with verify and the
// load one after the other (interleaved runs, load 9–15). A timer could
// not do it on a quiet machine: with both cores reading, its goroutine
// ran every 50 ms or so, and the peak stayed at ~750 MB.
const releaseAbove int64 = 256 << 20

// tender lets go of a store's mapped pages when more than releaseAbove is
// mapped beyond base, the file pages the process held before (its
// binary's, mostly). Releasing a page another goroutine reads is safe: the
// mapping is shared and read-only, and the page comes back from the page
// cache at its next read.
type tender struct{ base int64 }

// tend releases, if need be, the pages mapped for tx, which holds the
// mapping where it is.
func (t tender) tend(tx *bolt.Tx) {
	if mappedFileBytes()-t.base > releaseAbove {
		_ = releaseMapping(tx.DB().Info().Data, uintptr(tx.Size()))
	}
}

// loadFreelist has bbolt read the store's freelist now, before the
// preload's transaction opens: a read-only store reads it on its first
// tx.Check, and bbolt sets it there with no lock against a transaction
// closing beside it (a data race, seen by -race, with the preload's). A
// check of a page out of range reads it and stops at once; what the
// freelist holds is verify's to judge.
func loadFreelist(db *bolt.DB) error {
	return db.View(func(tx *bolt.Tx) error {
		for range tx.Check(bolt.WithPageId(math.MaxUint64)) {
		}
		return nil
	})
}

// checkTorn fails for a file shorter than its pages reach.
func checkTorn(tx *bolt.Tx) error {
	fi, err := os.Stat(tx.DB().Path())
	if err != nil {
		return err
	}
	if fi.Size() < tx.Size() {
		return fmt.Errorf("%w: file is %d bytes, its pages reach %d (torn)", ErrCorrupt, fi.Size(), tx.Size())
	}
	return nil
}

// verify reads every page of the store once, so that damage is found here,
// at open, and not by a sync that trips over it half-way: a file shorter
// than its pages reach, a page bbolt cannot parse, or an inconsistency
// bbolt's own check reports (a page both used and free). tend, if set, is
// called after the walk of each bucket (verifyBeside).
func verify(db *bolt.DB, tend func(tx *bolt.Tx)) error {
	return guard(func() error {
		return db.View(func(tx *bolt.Tx) error {
			if err := checkTorn(tx); err != nil {
				return err
			}
			// The walk: Stats reads every page of every bucket (nested
			// ones too) through bbolt's page assertions, and every leaf
			// element's header, so that a page bbolt cannot parse or a
			// fault is met here, under guard, and not in Check's own
			// goroutine, where a fault would kill the process. A page at a
			// time, it costs half a walk key by key (ForEach): 47 against
			// 94 ms of CPU at 1M messages (perf record of a no-op sync).
			err := tx.ForEach(func(_ []byte, b *bolt.Bucket) error {
				b.Stats()
				if tend != nil {
					tend(tx)
				}
				return nil
			})
			if err != nil {
				return err
			}
			var first error
			for err := range tx.Check() { // drained: Check's goroutine sends every error
				if first == nil {
					first = fmt.Errorf("%w: %v", ErrCorrupt, err)
				}
			}
			return first
		})
	})
}

// Recreate empties the named buckets (a rebuild's reset), creating any
// that are missing.
func Recreate(tx *bolt.Tx, names ...[]byte) error {
	for _, name := range names {
		if err := tx.DeleteBucket(name); err != nil && !errors.Is(err, bolterr.ErrBucketNotFound) {
			return err
		}
		if _, err := tx.CreateBucket(name); err != nil {
			return err
		}
	}
	return nil
}

// Size is the size of the store's pages.
func Size(db *bolt.DB) int64 {
	var n int64
	db.View(func(tx *bolt.Tx) error { n = tx.Size(); return nil })
	return n
}
