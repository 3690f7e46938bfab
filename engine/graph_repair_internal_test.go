package engine

import (
	"context"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestGraphRepairInterruptedBatch stages the crash of a batch that had
// been re-indexing a.md: its pending mark is set and the state store
// still holds its old postings. The next open must drop a.md from the
// graph with its postings (from the store too), and the next sync must
// give the graph of the files as they are.
func TestGraphRepairInterruptedBatch(t *testing.T) {
	cfg, e := openRepairVault(t, map[string]string{
		"a.md": "# A\n\n[[Aardvark]] and [[Burrow]]\n",
		"b.md": "# B\n\n[[Badger]] and [[Burrow]]\n",
	})
	if err := e.st.markPending([]string{"a.md"}, nil); err != nil {
		t.Fatal(err)
	}
	crashClose(t, e)
	e, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("reopen after the crash: %v", err)
	}
	defer e.Close()
	e.mu.RLock()
	hasAardvark := e.gs.g.Has("aardvark")
	burrow := e.gs.g.Postings("burrow")
	e.mu.RUnlock()
	if hasAardvark || len(burrow) != 1 || burrow[0].Path != "b.md" {
		t.Errorf("graph after repair: aardvark %v, burrow %v; want only b.md's postings", hasAardvark, burrow)
	}
	var keys []string
	e.st.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketGraph).ForEach(func(k, _ []byte) error { keys = append(keys, string(k)); return nil })
	})
	if want := []string{"badger\x00b.md", "burrow\x00b.md"}; !slices.Equal(keys, want) {
		t.Errorf("stored postings after repair = %q, want %q", keys, want)
	}
	if _, err := e.Sync(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	cs, err := e.Concepts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []ConceptInfo{{Name: "burrow", Mentions: 2, Files: 2}, {Name: "aardvark", Mentions: 1, Files: 1}, {Name: "badger", Mentions: 1, Files: 1}}
	if !slices.Equal(cs, want) {
		t.Errorf("concepts after sync = %v, want %v", cs, want)
	}
}
