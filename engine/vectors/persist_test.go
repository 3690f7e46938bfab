package vectors

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	chromem "github.com/philippgille/chromem-go"
	bolt "go.etcd.io/bbolt"
)

// TestPersistenceChoice measures the two ways to get the vectors back at
// open: chromem-go's own persistence (a gob file per document, read back by
// NewPersistentDB) against reading them from a bbolt bucket (as the state
// store keeps them) into a Chromem store. It writes n chunks of 100-d
// vectors with tldr-like metadata and reports write time, open time and
// the heap after open. Run on request:
//
//	MNEMO_PERSIST_CHUNKS=47445 go test ./engine/vectors -run TestPersistenceChoice -v
func TestPersistenceChoice(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("MNEMO_PERSIST_CHUNKS"))
	if n <= 0 {
		t.Skip("SKIPPED: set MNEMO_PERSIST_CHUNKS (47445 is tldr) to measure chromem-go persistence against a bbolt load")
	}
	ctx := context.Background()
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(3, 4))
	items := make([]Item, 0, n)
	for i := range n {
		path := fmt.Sprintf("pages.xx/common/page%05d.md", i)
		items = append(items, Item{ID: path, Labels: []string{"folder:pages.xx", "folder:pages.xx/common"},
			Meta: map[string]string{"path": path}, Vectors: [][]float32{randomUnit(r, 100)}})
	}

	// chromem-go's own persistence.
	t0 := time.Now()
	db, err := chromem.NewPersistentDB(filepath.Join(dir, "chromem"), false)
	if err != nil {
		t.Fatal(err)
	}
	c, err := db.CreateCollection("chunks", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		meta := map[string]string{"path": it.ID}
		for _, l := range it.Labels {
			meta[l] = "1"
		}
		if err := c.AddDocument(ctx, chromem.Document{ID: chunkID(it.ID, 0), Metadata: meta, Embedding: it.Vectors[0]}); err != nil {
			t.Fatal(err)
		}
	}
	write := time.Since(t0)
	h0 := heap()
	t0 = time.Now()
	db2, err := chromem.NewPersistentDB(filepath.Join(dir, "chromem"), false)
	if err != nil {
		t.Fatal(err)
	}
	open := time.Since(t0)
	t.Logf("chromem-go persistence: write %v, open %v, heap +%d MiB, %d documents", write, open, heap()-h0, db2.GetCollection("chunks", nil).Count())
	runtime.KeepAlive(db)
	db, c, db2 = nil, nil, nil

	// A bbolt bucket, one value per chunk, loaded into the sharded store.
	t0 = time.Now()
	bdb, err := bolt.Open(filepath.Join(dir, "state.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = bdb.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("vectors"))
		if err != nil {
			return err
		}
		for _, it := range items {
			buf := make([]byte, 4*len(it.Vectors[0]))
			for i, x := range it.Vectors[0] {
				binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(x))
			}
			if err := b.Put([]byte(chunkID(it.ID, 0)), buf); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	bdb.Close()
	write = time.Since(t0)
	h0 = heap()
	t0 = time.Now()
	bdb, err = bolt.Open(filepath.Join(dir, "state.db"), 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var loaded []Item
	err = bdb.View(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("vectors")).ForEach(func(k, v []byte) error {
			vec := make([]float32, len(v)/4)
			for i := range vec {
				vec[i] = math.Float32frombits(binary.LittleEndian.Uint32(v[4*i:]))
			}
			id, _ := splitChunkID(string(k))
			loaded = append(loaded, Item{ID: id, Labels: []string{"folder:pages.xx", "folder:pages.xx/common"},
				Meta: map[string]string{"path": id}, Vectors: [][]float32{vec}})
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewChromem(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, loaded...); err != nil {
		t.Fatal(err)
	}
	open = time.Since(t0)
	loaded = nil
	t.Logf("bbolt + Chromem store: write %v, open %v, heap +%d MiB, %d chunks", write, open, heap()-h0, s.Len())
	runtime.KeepAlive(s)
	bdb.Close()
}

// heap is the live heap in MiB after a full collection.
func heap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc >> 20)
}
