package fulltext

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"

	"mnemo/engine/store"
)

// Check verifies the full-text index as it lies on disk. Bleve,
// when the newest snapshot's segments do not load, quietly falls back to an
// older snapshot, or to an empty index, and answers from it; and a zap
// segment with garbage in it loads, then fails or panics at query time.
// So: the newest snapshot recorded in root.bolt must load, and every
// segment file it names must match the CRC-32 in its footer (zap v16 and
// v17 both end with the big-endian IEEE CRC-32 of all the bytes before it).
func Check(idx bleve.Index) (err error) {
	defer guardBleve(&err)
	adv, err := idx.Advanced()
	if err != nil {
		return store.Damaged("%v", err)
	}
	s, ok := adv.(*scorch.Scorch)
	if !ok {
		return nil // not a disk index
	}
	epochs, err := s.RootBoltSnapshotEpochs() // newest first
	if err != nil {
		return store.Damaged("root.bolt: %v", err)
	}
	if len(epochs) == 0 {
		return nil // nothing persisted yet
	}
	snap, err := s.LoadSnapshot(epochs[0])
	if err != nil {
		return store.Damaged("newest snapshot does not load: %v", err)
	}
	if snap == nil {
		return nil
	}
	defer snap.DecRef()
	for _, ss := range snap.Segments() {
		seg, ok := ss.Segment().(interface{ Path() string })
		if !ok {
			continue
		}
		if err := checkSegmentCRC(seg.Path()); err != nil {
			return err
		}
	}
	return nil
}

// checkSegmentCRC compares a zap segment file's CRC-32 with its footer's.
func checkSegmentCRC(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return store.Damaged("segment %s: %v", filepath.Base(path), err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return store.Damaged("segment %s: %v", filepath.Base(path), err)
	}
	if fi.Size() < 4 {
		return store.Damaged("segment %s is %d bytes long", filepath.Base(path), fi.Size())
	}
	h := crc32.NewIEEE()
	if _, err := io.CopyN(h, f, fi.Size()-4); err != nil {
		return store.Damaged("segment %s: %v", filepath.Base(path), err)
	}
	var tail [4]byte
	if _, err := io.ReadFull(f, tail[:]); err != nil {
		return store.Damaged("segment %s: %v", filepath.Base(path), err)
	}
	if want := binary.BigEndian.Uint32(tail[:]); h.Sum32() != want {
		return store.Damaged("segment %s fails its checksum", filepath.Base(path))
	}
	return nil
}

// guardBleve turns a panic raised in Bleve's code (or the libraries it
// reads segments with), and a fault reading a memory-mapped segment that
// shrank, into an error wrapping ErrIndexDamaged. It must be deferred
// directly. Panics that start elsewhere are bugs, and are not caught.
func guardBleve(err *error) {
	r := recover()
	if r == nil {
		return
	}
	if !panicInBleve() {
		panic(r)
	}
	*err = store.Damaged("reading it panicked: %v", r)
}

// withFaults runs fn with memory faults turned into panics, so that a
// segment truncated under its mmap fails fn instead of killing the process.
func withFaults(fn func() error) error {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	return fn()
}

// panicInBleve reports whether the panic being recovered was raised in
// Bleve's code or a library it reads segments with: the first frame below
// the runtime's is theirs.
func panicInBleve() bool {
	pc := make([]uintptr, 64)
	frames := runtime.CallersFrames(pc[:runtime.Callers(3, pc)])
	for {
		f, more := frames.Next()
		if !strings.HasPrefix(f.Function, "runtime.") {
			for _, p := range []string{"github.com/blevesearch/", "github.com/RoaringBitmap/", "github.com/bits-and-blooms/", "github.com/golang/snappy"} {
				if strings.HasPrefix(f.Function, p) {
					return true
				}
			}
			return false
		}
		if !more {
			return false
		}
	}
}

// openChecked opens an existing full-text index, read-only unless write
// (then with the scorch configuration writer), after Check has
// passed it. Read-only, it returns the index
// together with the damage it found, if it could open it at all. The check runs on a read-only open
// even for a writer: a writer's background merger reads segments in
// goroutines where no recover reaches, so a damaged segment must be found
// before they start. An index that fails to open is damaged too.
func openChecked(path string, write bool, writer map[string]any) (idx bleve.Index, err error) {
	err = withFaults(func() (err error) {
		defer guardBleve(&err)
		// A reader must neither take Bleve's exclusive lock nor write.
		if idx, err = bleve.OpenUsing(path, map[string]any{"read_only": true}); err != nil {
			idx = nil // Bleve returns a typed nil
			msg, _, _ := strings.Cut(err.Error(), "\n")
			return store.Damaged("%s", strings.TrimSuffix(msg, "; mapping contents:"))
		}
		return Check(idx)
	})
	if !write {
		// A damaged index a reader could open is kept, so that status can
		// say what is wrong; searches refuse it (see fulltext.damage).
		return idx, err
	}
	if err != nil {
		if idx != nil {
			idx.Close()
		}
		return nil, wrapOpen(path, err)
	}
	idx.Close()
	// A writer waits a bounded time for the lock instead of forever.
	err = withFaults(func() (err error) {
		defer guardBleve(&err)
		if idx, err = bleve.OpenUsing(path, writer); err != nil {
			idx = nil
		}
		return err
	})
	return idx, wrapOpen(path, err)
}

func wrapOpen(path string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("open full-text index %s: %w", path, err)
}
