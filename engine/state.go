package engine

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"

	"mnemo/engine/fulltext"
	"mnemo/engine/store"
	"mnemo/engine/vectors"
)

// metaUnreadable lists, one a line, the folders the last full sync could
// not read, so that status shows them after the sync's process has ended.
const metaUnreadable = "unreadable"

var (
	bucketFiles   = []byte("files")
	bucketVectors = []byte("vectors")
	bucketReads   = []byte("reads")
	bucketSkips   = []byte("skips")
	// bucketExcerpts holds each indexed file's excerpt index, by path:
	// what snippets are cut from without reading the file again.
	bucketExcerpts = []byte("excerpts")
	bucketGraph    = []byte("graph") // concept graph postings: see graph.go
)

// record is what the state store remembers of one indexed file.
type record struct {
	Path     string                    `json:"p"`
	Size     int64                     `json:"s"`
	MtimeNs  int64                     `json:"m"`
	Hash     string                    `json:"h"`
	Title    string                    `json:"t"`
	Created  time.Time                 `json:"c,omitzero"` // frontmatter created (zero if none: not written)
	Modified time.Time                 `json:"o,omitzero"` // frontmatter modified (zero if none: not written)
	Tags     []string                  `json:"g,omitempty"`
	Chunks   int                       `json:"k"` // chunks in the vector store
	Lens     [fulltext.NumFields]int32 `json:"l"` // tokens per scored field, for BM25
	Warnings []string                  `json:"w,omitempty"`
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

// stateStore is the memory corpus's durable state: one bbolt file beside
// the indexes, kept by the discipline of engine/store.
type stateStore struct {
	db *bolt.DB
}

// memoryBuckets are the memory corpus's buckets in its state store.
var memoryBuckets = [][]byte{bucketFiles, bucketVectors, bucketReads, bucketSkips, bucketExcerpts, bucketGraph}

// storeOptions opens the memory corpus's state store.
func storeOptions(readOnly bool) store.Options {
	return store.Options{What: "state store", ReadOnly: readOnly, Buckets: memoryBuckets,
		Rebuild: "rebuilding from the files (read times are lost)"}
}

func (s *stateStore) close() error { return s.db.Close() }

func (s *stateStore) meta(key string) string { return store.Meta(s.db, key) }

func (s *stateStore) setMeta(kv map[string]string) error { return store.SetMeta(s.db, kv) }

// loaded is everything the engine keeps in memory from the store.
type loaded struct {
	files   map[string]*record
	reads   map[string]time.Time
	skips   map[string]string
	pending []string
}

func (s *stateStore) load() (*loaded, error) {
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
		return store.ForEachPending(tx, func(k, _ []byte) error {
			l.pending = append(l.pending, string(k))
			return nil
		})
	})
	return l, err
}

// forEachVector calls fn for every stored chunk vector.
func (s *stateStore) forEachVector(fn func(path string, chunk int, vec []float32) error) error {
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
			return fn(p, c, vectors.Decode(v))
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
func (s *stateStore) markPending(paths, clear []string) error {
	return s.db.Update(func(tx *bolt.Tx) error { return setPending(tx, paths, clear) })
}

// setPending clears the pending marks of clear and sets those of mark.
func setPending(tx *bolt.Tx, mark, clear []string) error {
	for _, p := range clear {
		if err := store.ClearPending(tx, []byte(p)); err != nil {
			return err
		}
	}
	for _, p := range mark {
		if err := store.MarkPending(tx, []byte(p), nil); err != nil {
			return err
		}
	}
	return nil
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
func (s *stateStore) commitBatch(changes []change, skips map[string]string, unskip, mark, clear []string) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		files, vecs, sk := tx.Bucket(bucketFiles), tx.Bucket(bucketVectors), tx.Bucket(bucketSkips)
		exc := tx.Bucket(bucketExcerpts)
		if first, ok := firstPath(changes); ok {
			packIfAppending(files, []byte(first))
			packIfAppending(exc, []byte(first))
			packIfAppending(vecs, vectorKey(first, 0))
		}
		if err := setPending(tx, mark, clear); err != nil {
			return err
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
					if err := vecs.Put(vectorKey(c.path, i), vectors.Encode(v)); err != nil {
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
func (s *stateStore) resetIndexed() error {
	return s.db.Update(func(tx *bolt.Tx) error {
		return store.Recreate(tx, bucketFiles, bucketVectors, bucketSkips, store.BucketPending, bucketExcerpts, bucketGraph)
	})
}

// excerpt reads what q needs of a file's excerpt index. bbolt's memory is
// valid only inside the transaction, so it is decoded there and copied out.
func (s *stateStore) excerpt(path string, q fulltext.Terms) (fulltext.Excerpt, error) {
	var x fulltext.Excerpt
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketExcerpts)
		if b == nil {
			return fmt.Errorf("no excerpt indexes: %w", fulltext.ErrBadExcerpts)
		}
		v := b.Get([]byte(path))
		if v == nil {
			return fmt.Errorf("%s: no excerpt index", path)
		}
		var err error
		x, err = fulltext.ReadExcerpt(v, q)
		return err
	})
	return x, err
}

func (s *stateStore) size() int64 { return store.Size(s.db) }

func itoa(n int) string { return strconv.Itoa(n) }
