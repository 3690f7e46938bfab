package store

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// mappedFileBytes sees a store's pages mapped when they are read, and let
// go when they are released: what tendMapping decides by.
func TestMappedFileBytes(t *testing.T) {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "s.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	val := bytes.Repeat([]byte("v"), 3000)
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("b"))
		for i := 0; i < 4000 && err == nil; i++ {
			err = b.Put(fmt.Appendf(nil, "k%05d", i), val)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	const size = 4000 * 3000
	if err := ReleasePages(db); err != nil {
		t.Fatal(err)
	}
	before := mappedFileBytes()
	var sum int
	db.View(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("b")).ForEach(func(_, v []byte) error {
			for _, c := range v {
				sum += int(c)
			}
			return nil
		})
	})
	read := mappedFileBytes()
	if err := ReleasePages(db); err != nil {
		t.Fatal(err)
	}
	released := mappedFileBytes()
	if read-before < size*9/10 || read-released < size*9/10 {
		t.Errorf("file pages: %d before reading %d bytes, %d after, %d after the release (sum %d)", before, size, read, released, sum)
	}
}
