package engine

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// schemaVersion changes whenever the layout of the indexes or the state store
// changes in a way an older or newer mnemo cannot read. An index of an older
// version is rebuilt; one of a newer version is refused.
const schemaVersion = 1

var (
	bucketMeta    = []byte("meta")
	bucketFiles   = []byte("files")
	bucketVectors = []byte("vectors")
	bucketReads   = []byte("reads")
	bucketSkips   = []byte("skips")
	bucketPending = []byte("pending")
)

// record is what the state store remembers of one indexed file.
type record struct {
	Path     string                 `json:"p"`
	Size     int64                  `json:"s"`
	MtimeNs  int64                  `json:"m"`
	Hash     string                 `json:"h"`
	Title    string                 `json:"t"`
	Created  time.Time              `json:"c"` // frontmatter created (zero if none)
	Modified time.Time              `json:"o"` // frontmatter modified (zero if none)
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

func openStore(path string, readOnly bool) (*store, error) {
	opts := &bolt.Options{Timeout: 500 * time.Millisecond, ReadOnly: readOnly}
	db, err := bolt.Open(path, 0o600, opts)
	if err != nil {
		if errors.Is(err, bolt.ErrTimeout) {
			return nil, errInUse(path)
		}
		return nil, fmt.Errorf("open state store %s: %w", path, err)
	}
	s := &store{db: db}
	if !readOnly {
		err = db.Update(func(tx *bolt.Tx) error {
			for _, b := range [][]byte{bucketMeta, bucketFiles, bucketVectors, bucketReads, bucketSkips, bucketPending} {
				if _, err := tx.CreateBucketIfNotExists(b); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("init state store: %w", err)
		}
	}
	return s, nil
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
	// keepVectors: only the record changed (same content, new mtime).
	keepVectors bool
}

// markPending records the paths a batch is about to write to the full-text
// index. If the process dies before commitBatch, the next open drops exactly
// these paths from the indexes and re-syncs them: no ghost, no loss.
func (s *store) markPending(paths []string) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketPending)
		for _, p := range paths {
			if err := b.Put([]byte(p), nil); err != nil {
				return err
			}
		}
		return nil
	})
}

// commitBatch writes a batch's records and vectors and clears its pending marks, in one transaction.
func (s *store) commitBatch(changes []change, skips map[string]string, unskip []string) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		files, vecs, pend, sk := tx.Bucket(bucketFiles), tx.Bucket(bucketVectors), tx.Bucket(bucketPending), tx.Bucket(bucketSkips)
		for _, c := range changes {
			if !c.keepVectors {
				if err := deleteVectors(vecs, c.path); err != nil {
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
			if err := pend.Delete([]byte(c.path)); err != nil {
				return err
			}
		}
		for p, why := range skips {
			if err := sk.Put([]byte(p), []byte(why)); err != nil {
				return err
			}
			if err := pend.Delete([]byte(p)); err != nil {
				return err
			}
		}
		for _, p := range unskip {
			if err := sk.Delete([]byte(p)); err != nil {
				return err
			}
		}
		return nil
	})
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
		for _, name := range [][]byte{bucketFiles, bucketVectors, bucketSkips, bucketPending} {
			if err := tx.DeleteBucket(name); err != nil && !errors.Is(err, bolt.ErrBucketNotFound) {
				return err
			}
			if _, err := tx.CreateBucket(name); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *store) recordRead(path string, t time.Time) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketReads).Put([]byte(path), []byte(t.UTC().Format(time.RFC3339Nano)))
	})
}

func (s *store) size() int64 {
	var n int64
	s.db.View(func(tx *bolt.Tx) error { n = tx.Size(); return nil })
	return n
}

func itoa(n int) string { return strconv.Itoa(n) }

// moveRead moves a read time from one path to another (a renamed or moved
// file), in one transaction.
func (s *store) moveRead(from, to string, t time.Time) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketReads)
		if err := b.Delete([]byte(from)); err != nil {
			return err
		}
		return b.Put([]byte(to), []byte(t.UTC().Format(time.RFC3339Nano)))
	})
}
