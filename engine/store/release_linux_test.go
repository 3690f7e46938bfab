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
	db := storeOf4000(t)
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

// A PageTender keeps what searches mapped until it passes the allowance,
// then lets all of it go.
func TestPageTender(t *testing.T) {
	db := storeOf4000(t)
	// read maps the first n values' pages.
	read := func(n int) {
		db.View(func(tx *bolt.Tx) error {
			c := tx.Bucket([]byte("b")).Cursor()
			var sum int
			for k, v := c.First(); k != nil && n > 0; k, v = c.Next() {
				sum += int(v[0])
				n--
			}
			return nil
		})
	}
	const allow = 4 << 20 // ~1,400 values' pages
	tender := NewPageTender(db, allow)
	tender.Release()
	base := mappedFileBytes()
	read(600) // ~1.8 MB: within the allowance
	tender.Tend()
	if kept := mappedFileBytes() - base; kept < 1<<20 {
		t.Errorf("within the allowance, %d bytes stayed mapped, want the ~1.8 MB read", kept)
	}
	read(4000) // ~12 MB: past it
	if grown := mappedFileBytes() - base; grown < 8<<20 {
		t.Fatalf("reading 12 MB mapped %d bytes", grown)
	}
	tender.Tend()
	if kept := mappedFileBytes() - base; kept > 1<<20 {
		t.Errorf("past the allowance, %d bytes stayed mapped after Tend, want them let go", kept)
	}
}

// storeOf4000 is a store whose bucket "b" holds 4,000 values of 3,000
// bytes (~12 MB of pages), closed when the test ends.
func storeOf4000(t *testing.T) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(filepath.Join(t.TempDir(), "s.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
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
	return db
}
