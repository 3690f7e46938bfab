package engine

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
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

// schemaVersion changes whenever the layout of the indexes or the state store
// changes in a way an older or newer mnemo cannot read. An index of an older
// version is rebuilt; one of a newer version is refused. 2: 100-word chunks.
// 3: excerpt indexes (excerpts.go) beside the records. 4: the concept
// graph's postings (graph.go). 5: Thai, Lao, Khmer and Myanmar text indexed
// as bigrams in the cjk field (analysis.go). 6: no _all field in the
// full-text index, excerpt indexes without stopwords (tokens.go).
const schemaVersion = 6

// metaUnfinished is the meta key a first or full sync sets when it starts
// and clears when it completes: set at open, the last one was cut short.
const metaUnfinished = "unfinished"

// metaUnreadable lists, one a line, the folders the last full sync could
// not read, so that status shows them after the sync's process has ended.
const metaUnreadable = "unreadable"

var (
	bucketMeta    = []byte("meta")
	bucketFiles   = []byte("files")
	bucketVectors = []byte("vectors")
	bucketReads   = []byte("reads")
	bucketSkips   = []byte("skips")
	bucketPending = []byte("pending")
	// bucketExcerpts holds each indexed file's excerpt index, by path:
	// what snippets are cut from without reading the file again.
	bucketExcerpts = []byte("excerpts")
	bucketGraph    = []byte("graph") // concept graph postings: see graph.go
)

// record is what the state store remembers of one indexed file.
type record struct {
	Path     string                 `json:"p"`
	Size     int64                  `json:"s"`
	MtimeNs  int64                  `json:"m"`
	Hash     string                 `json:"h"`
	Title    string                 `json:"t"`
	Created  time.Time              `json:"c,omitzero"` // frontmatter created (zero if none: not written)
	Modified time.Time              `json:"o,omitzero"` // frontmatter modified (zero if none: not written)
	Tags     []string               `json:"g,omitempty"`
	Chunks   int                    `json:"k"` // chunks in the vector store
	Lens     [len(textFields)]int32 `json:"l"` // tokens per scored field, for BM25
	Warnings []string               `json:"w,omitempty"`
}

func (r *record) mtime() time.Time { return time.Unix(0, r.MtimeNs).UTC() }

// dated is the date filters and "newer first" use: created, else the file's mtime.
func (r *record) dated() time.Time {
	if !r.Created.IsZero() {
		return r.Created
	}
	return r.mtime()
}

// updated is what recency sort uses: modified, else created, else mtime.
func (r *record) updated() time.Time {
	if !r.Modified.IsZero() {
		return r.Modified
	}
	return r.dated()
}

// store is the durable state: one bbolt file beside the indexes.
type store struct {
	db *bolt.DB
}

// openStore opens the state store. A file bbolt cannot read — torn,
// garbled, not a bbolt file — fails with an error wrapping errCorruptState
// (Open sets it aside and rebuilds); one of a newer schema is refused
// before anything is written to it.
func openStore(path string, readOnly bool) (*store, error) {
	db, err := openBolt(path, "state store", readOnly)
	if err != nil {
		return nil, err
	}
	s := &store{db: db}
	if !readOnly {
		err = db.Update(func(tx *bolt.Tx) error {
			if m := tx.Bucket(bucketMeta); m != nil {
				if err := checkSchema(filepath.Dir(path), string(m.Get([]byte("schema")))); err != nil {
					return err
				}
			}
			for _, b := range [][]byte{bucketMeta, bucketFiles, bucketVectors, bucketReads, bucketSkips, bucketPending, bucketExcerpts, bucketGraph} {
				if _, err := tx.CreateBucketIfNotExists(b); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			db.Close()
			if errors.Is(err, ErrIndexIncompatible) {
				return nil, err
			}
			return nil, fmt.Errorf("init state store: %w", err)
		}
	}
	return s, nil
}

// openBolt opens one bbolt file of the index (what names it in errors). A
// file held by another process fails with errInUse; one bbolt cannot read —
// torn, garbled, not bbolt — with an error wrapping errCorruptState, which
// the caller sets aside (setAside) and rebuilds.
func openBolt(path, what string, readOnly bool) (*bolt.DB, error) {
	var db *bolt.DB
	err := guardStore(func() (err error) {
		db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: 500 * time.Millisecond, ReadOnly: readOnly})
		return err
	})
	if err != nil {
		if errors.Is(err, bolterr.ErrTimeout) {
			return nil, errInUse(path)
		}
		if errors.Is(err, bolterr.ErrInvalid) || errors.Is(err, bolterr.ErrChecksum) || errors.Is(err, bolterr.ErrVersionMismatch) ||
			strings.HasPrefix(err.Error(), "file size too small") {
			err = fmt.Errorf("%w: %v", errCorruptState, err)
		}
		return nil, fmt.Errorf("open %s %s: %w", what, path, err)
	}
	if err := verifyStore(db); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s %s: %w", what, path, err)
	}
	return db, nil
}

// setAside renames a state store bbolt cannot read to PATH.corrupt-<time>,
// kept for a post-mortem, so a fresh one can be rebuilt in its place. It
// returns the new name.
func setAside(path string, now time.Time) (string, error) {
	aside := path + ".corrupt-" + now.UTC().Format("20060102T150405.000Z")
	if err := os.Rename(path, aside); err != nil {
		return "", err
	}
	return aside, nil
}

// checkSchema refuses an index whose schema (the meta value) is newer than
// this mnemo's; "" and "0" are an index whose first sync has not finished.
func checkSchema(indexDir, schema string) error {
	if v, _ := strconv.Atoi(schema); v > schemaVersion {
		return fmt.Errorf("%s has schema %d, this mnemo reads %d: %w", indexDir, v, schemaVersion, ErrIndexIncompatible)
	}
	return nil
}

// errCorruptState marks a state store that bbolt cannot read.
var errCorruptState = errors.New("state store is corrupt")

// guardStore runs fn, which reads the state store, and turns what bbolt
// does on a damaged file into an error wrapping errCorruptState: its
// assertion panics, and the faults of reading a torn memory-mapped file
// (which would otherwise kill the process). Panics that do not start in
// bbolt are bugs, and are not caught.
func guardStore(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if !panicInBbolt() {
				panic(r)
			}
			err = fmt.Errorf("%w: %v", errCorruptState, r)
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

// verifyStore reads every page of the store once, so that damage is found
// here, at open, and not by a sync that trips over it half-way: a file
// shorter than its pages reach, a page bbolt cannot parse, or an
// inconsistency bbolt's own check reports (a page both used and free).
func verifyStore(db *bolt.DB) error {
	return guardStore(func() error {
		return db.View(func(tx *bolt.Tx) error {
			fi, err := os.Stat(db.Path())
			if err != nil {
				return err
			}
			if fi.Size() < tx.Size() {
				return fmt.Errorf("%w: file is %d bytes, its pages reach %d (torn)", errCorruptState, fi.Size(), tx.Size())
			}
			var walk func(b *bolt.Bucket) error
			walk = func(b *bolt.Bucket) error {
				return b.ForEach(func(k, v []byte) error {
					if v == nil {
						if sub := b.Bucket(k); sub != nil {
							return walk(sub)
						}
					}
					return nil
				})
			}
			if err := tx.ForEach(func(_ []byte, b *bolt.Bucket) error { return walk(b) }); err != nil {
				return err
			}
			var first error
			for err := range tx.Check() { // drained: Check's goroutine sends every error
				if first == nil {
					first = fmt.Errorf("%w: %v", errCorruptState, err)
				}
			}
			return first
		})
	})
}

// ErrInUse is returned by Open, read-only or not, while another process
// holds the index as its writer; the message names that process.
var ErrInUse = errors.New("index is in use")

// errInUse names the process that holds the index, from the pid file beside it.
func errInUse(statePath string) error {
	pid := "another process"
	if b, err := os.ReadFile(strings.TrimSuffix(statePath, "state.db") + "writer.pid"); err == nil {
		pid = "PID " + strings.TrimSpace(string(b))
	}
	return fmt.Errorf("%w by %s (one writer at a time, and no reader beside it)", ErrInUse, pid)
}

func (s *store) close() error { return s.db.Close() }

func (s *store) meta(key string) string {
	var v string
	s.db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket(bucketMeta); b != nil {
			v = string(b.Get([]byte(key)))
		}
		return nil
	})
	return v
}

func (s *store) setMeta(kv map[string]string) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketMeta)
		for k, v := range kv {
			if err := b.Put([]byte(k), []byte(v)); err != nil {
				return err
			}
		}
		return nil
	})
}

// loaded is everything the engine keeps in memory from the store.
type loaded struct {
	files   map[string]*record
	reads   map[string]time.Time
	skips   map[string]string
	pending []string
}

func (s *store) load() (*loaded, error) {
	l := &loaded{files: map[string]*record{}, reads: map[string]time.Time{}, skips: map[string]string{}}
	err := s.db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket(bucketFiles); b != nil {
			if err := b.ForEach(func(k, v []byte) error {
				r := &record{}
				if err := json.Unmarshal(v, r); err != nil {
					return fmt.Errorf("file record %q: %w", k, err)
				}
				l.files[r.Path] = r
				return nil
			}); err != nil {
				return err
			}
		}
		if b := tx.Bucket(bucketReads); b != nil {
			b.ForEach(func(k, v []byte) error {
				if t, err := time.Parse(time.RFC3339Nano, string(v)); err == nil {
					l.reads[string(k)] = t
				}
				return nil
			})
		}
		if b := tx.Bucket(bucketSkips); b != nil {
			b.ForEach(func(k, v []byte) error {
				l.skips[string(k)] = string(v)
				return nil
			})
		}
		if b := tx.Bucket(bucketPending); b != nil {
			b.ForEach(func(k, _ []byte) error {
				l.pending = append(l.pending, string(k))
				return nil
			})
		}
		return nil
	})
	return l, err
}

// forEachVector calls fn for every stored chunk vector.
func (s *store) forEachVector(fn func(path string, chunk int, vec []float32) error) error {
	return s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketVectors)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			p, c, ok := splitVectorKey(k)
			if !ok {
				return nil
			}
			return fn(p, c, decodeVector(v))
		})
	})
}

func vectorKey(path string, chunk int) []byte {
	k := make([]byte, len(path)+5)
	copy(k, path)
	k[len(path)] = 0
	binary.BigEndian.PutUint32(k[len(path)+1:], uint32(chunk))
	return k
}

func splitVectorKey(k []byte) (string, int, bool) {
	if len(k) < 5 || k[len(k)-5] != 0 {
		return "", 0, false
	}
	return string(k[:len(k)-5]), int(binary.BigEndian.Uint32(k[len(k)-4:])), true
}

func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func decodeVector(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// change is one file's new state within a batch: rec nil means removed.
type change struct {
	path    string
	rec     *record
	vectors [][]float32 // one per chunk; nil entries were not embeddable
	excerpt []byte      // the file's excerpt index
	// keepVectors: only the record changed (same content, new mtime); its
	// vectors and excerpt index stay as they are.
	keepVectors bool
	// graph, if set, replaces the file's concept postings.
	graph *graphChange
}

// markPending records the paths a batch is about to write to the full-text
// index, and clears the marks of batches the full-text index has persisted
// since (see persist.go). If the process dies before a path's mark is
// cleared, the next open drops exactly these paths from the indexes and
// re-syncs them: no ghost, no loss.
func (s *store) markPending(paths, clear []string) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketPending)
		if err := deleteKeys(b, clear); err != nil {
			return err
		}
		for _, p := range paths {
			if err := b.Put([]byte(p), nil); err != nil {
				return err
			}
		}
		return nil
	})
}

func deleteKeys(b *bolt.Bucket, keys []string) error {
	for _, k := range keys {
		if err := b.Delete([]byte(k)); err != nil {
			return err
		}
	}
	return nil
}

// commitBatch writes a batch's records and vectors, in one transaction that
// also clears the pending marks clear and sets those of mark: the paths
// the batch is about to change in the full-text index, whose marks stay
// until the full-text index has persisted it (persist.go).
func (s *store) commitBatch(changes []change, skips map[string]string, unskip, mark, clear []string) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		files, vecs, sk := tx.Bucket(bucketFiles), tx.Bucket(bucketVectors), tx.Bucket(bucketSkips)
		exc := tx.Bucket(bucketExcerpts)
		if first, ok := firstPath(changes); ok {
			packIfAppending(files, []byte(first))
			packIfAppending(exc, []byte(first))
			packIfAppending(vecs, vectorKey(first, 0))
		}
		pend := tx.Bucket(bucketPending)
		if err := deleteKeys(pend, clear); err != nil {
			return err
		}
		for _, p := range mark {
			if err := pend.Put([]byte(p), nil); err != nil {
				return err
			}
		}
		for _, c := range changes {
			if !c.keepVectors {
				if err := deleteVectors(vecs, c.path); err != nil {
					return err
				}
				if c.rec == nil || c.excerpt == nil {
					if err := exc.Delete([]byte(c.path)); err != nil {
						return err
					}
				} else if err := exc.Put([]byte(c.path), c.excerpt); err != nil {
					return err
				}
			}
			if c.rec == nil {
				if err := files.Delete([]byte(c.path)); err != nil {
					return err
				}
			} else {
				j, err := json.Marshal(c.rec)
				if err != nil {
					return err
				}
				if err := files.Put([]byte(c.path), j); err != nil {
					return err
				}
				for i, v := range c.vectors { // empty when keepVectors
					if v == nil {
						continue
					}
					if err := vecs.Put(vectorKey(c.path, i), encodeVector(v)); err != nil {
						return err
					}
				}
			}
			if err := putGraph(tx, c.path, c.graph); err != nil {
				return err
			}
		}
		for p, why := range skips {
			if err := sk.Put([]byte(p), []byte(why)); err != nil {
				return err
			}
		}
		return deleteKeys(sk, unskip)
	})
}

// packIfAppending fills b's pages to the brim in this transaction when the
// batch's keys (first is the smallest) all sort after b's last key, as they
// do in a full sync, which writes the files in path order. bbolt splits a
// node at half a page by default, room for inserts that appending never
// uses: a tldr sync left the records, vectors and excerpt indexes on pages
// 47% full (156 MB of pages for 79 MB of data). Batches that insert among
// existing keys keep the default.
func packIfAppending(b *bolt.Bucket, first []byte) {
	if last, _ := b.Cursor().Last(); last == nil || bytes.Compare(first, last) > 0 {
		b.FillPercent = 1
	}
}

// firstPath is the smallest path among changes, false if there is none.
func firstPath(changes []change) (string, bool) {
	if len(changes) == 0 {
		return "", false
	}
	first := changes[0].path
	for _, c := range changes[1:] {
		first = min(first, c.path)
	}
	return first, true
}

func deleteVectors(b *bolt.Bucket, path string) error {
	prefix := append([]byte(path), 0)
	c := b.Cursor()
	var keys [][]byte
	for k, _ := c.Seek(prefix); k != nil && len(k) == len(prefix)+4 && string(k[:len(prefix)]) == string(prefix); k, _ = c.Next() {
		keys = append(keys, append([]byte(nil), k...))
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// resetIndexed forgets every file, vector, skip and pending mark; reads are kept.
func (s *store) resetIndexed() error {
	return s.db.Update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketFiles, bucketVectors, bucketSkips, bucketPending, bucketExcerpts, bucketGraph} {
			if err := tx.DeleteBucket(name); err != nil && !errors.Is(err, bolterr.ErrBucketNotFound) {
				return err
			}
			if _, err := tx.CreateBucket(name); err != nil {
				return err
			}
		}
		return nil
	})
}

// excerpt reads what q needs of a file's excerpt index. bbolt's memory is
// valid only inside the transaction, so it is decoded there and copied out.
func (s *store) excerpt(path string, q queryTerms) (excerpt, error) {
	var x excerpt
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketExcerpts)
		if b == nil {
			return fmt.Errorf("no excerpt indexes: %w", errBadExcerpts)
		}
		v := b.Get([]byte(path))
		if v == nil {
			return fmt.Errorf("%s: no excerpt index", path)
		}
		var err error
		x, err = readExcerpt(v, q)
		return err
	})
	return x, err
}

func (s *store) size() int64 {
	var n int64
	s.db.View(func(tx *bolt.Tx) error { n = tx.Size(); return nil })
	return n
}

func itoa(n int) string { return strconv.Itoa(n) }
