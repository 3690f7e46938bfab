package store

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// Released pages read back as they were, in the transaction after and in
// one open across the release, and a write after it lands.
func TestReleasePagesKeepsData(t *testing.T) {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "s.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	val := bytes.Repeat([]byte("v"), 3000)
	put := func(from, to int) {
		t.Helper()
		err := db.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists([]byte("b"))
			for i := from; i < to && err == nil; i++ {
				err = b.Put(fmt.Appendf(nil, "k%05d", i), val)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	check := func(tx *bolt.Tx, n int) {
		t.Helper()
		b := tx.Bucket([]byte("b"))
		for i := range n {
			if v := b.Get(fmt.Appendf(nil, "k%05d", i)); !bytes.Equal(v, val) {
				t.Fatalf("k%05d: %d bytes back", i, len(v))
			}
		}
	}
	put(0, 2000)
	if err := ReleasePages(db); err != nil {
		t.Fatal(err)
	}
	err = db.View(func(tx *bolt.Tx) error {
		check(tx, 2000)
		if err := releaseMapping(db.Info().Data, uintptr(tx.Size())); err != nil {
			return err
		}
		check(tx, 2000)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	put(2000, 2500)
	if err := ReleasePages(db); err != nil {
		t.Fatal(err)
	}
	if err := db.View(func(tx *bolt.Tx) error { check(tx, 2500); return nil }); err != nil {
		t.Fatal(err)
	}
}
