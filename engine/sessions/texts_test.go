package sessions

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// texts of sid as firstMessages reads them, as "seq:text".
func storedTexts(t *testing.T, st *sessionStore, sid uint32) []string {
	t.Helper()
	var out []string
	err := st.db.View(func(tx *bolt.Tx) error {
		for e, err := range textsTx(tx, sid, 0, math.MaxUint32) {
			if err != nil {
				return err
			}
			out = append(out, fmt.Sprintf("%d:%s", e.seq, e.text))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func entries(from, to uint32, tag string) []textEntry {
	var out []textEntry
	for seq := from; seq < to; seq++ {
		out = append(out, textEntry{seq: seq, text: fmt.Sprintf("%s%d", tag, seq)})
	}
	return out
}

// beside are the sessions a test of sid 2 puts around it.
func beside(last bool) []uint32 {
	if last {
		return []uint32{1}
	}
	return []uint32{1, 3}
}

// putTextsTx keeps every text once, in order, whatever runs it is given:
// appends inside and across blocks, a rewrite in the middle, texts still
// kept one by one (a store being converted), another session beside.
func TestPutTexts(t *testing.T) {
	tests := []struct {
		name string
		old  []textEntry   // in sbTexts, one by one
		puts [][]textEntry // in turn, for sid 2
		want []textEntry
		last bool // sid 2 is the last session: none after it
	}{
		{"one block", nil, [][]textEntry{entries(0, 5, "a")}, entries(0, 5, "a"), false},
		{"appends across blocks", nil, [][]textEntry{entries(0, 30, "a"), entries(30, 40, "a"), entries(40, 100, "a")}, entries(0, 100, "a"), false},
		{"rewrite in the middle", nil, [][]textEntry{entries(0, 70, "a"), entries(20, 40, "b")},
			append(append(entries(0, 20, "a"), entries(20, 40, "b")...), entries(40, 70, "a")...), false},
		{"gaps", nil, [][]textEntry{entries(0, 10, "a"), entries(50, 60, "a")}, append(entries(0, 10, "a"), entries(50, 60, "a")...), false},
		{"the last session", nil, [][]textEntry{entries(0, 30, "a"), entries(30, 40, "a"), entries(35, 36, "b")},
			append(append(entries(0, 35, "a"), entries(35, 36, "b")...), entries(36, 40, "a")...), true},
		{"old texts beside blocks", entries(0, 40, "o"), [][]textEntry{entries(40, 45, "a"), entries(10, 12, "b")},
			append(append(append(entries(0, 10, "o"), entries(10, 12, "b")...), entries(12, 40, "o")...), entries(40, 45, "a")...), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db, st := newTextStore(t)
			err := db.Update(func(tx *bolt.Tx) error {
				for _, e := range tc.old {
					if err := tx.Bucket(sbTexts).Put(seqKey(2, e.seq), []byte(e.text)); err != nil {
						return err
					}
				}
				for _, sid := range beside(tc.last) {
					if err := putTextsTx(tx, sid, entries(0, 40, "x")); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, es := range tc.puts {
				if err := db.Update(func(tx *bolt.Tx) error { return putTextsTx(tx, 2, es) }); err != nil {
					t.Fatal(err)
				}
			}
			var want []string
			for _, e := range tc.want {
				want = append(want, fmt.Sprintf("%d:%s", e.seq, e.text))
			}
			if got := storedTexts(t, st, 2); !reflect.DeepEqual(got, want) {
				t.Errorf("texts\n%v\nwant\n%v", got, want)
			}
			for _, e := range tc.want {
				if got := st.text(2, e.seq); got != e.text {
					t.Errorf("text(2, %d) = %q, want %q", e.seq, got, e.text)
				}
			}
			for _, sid := range beside(tc.last) {
				if got := storedTexts(t, st, sid); len(got) != 40 || got[39] != "39:x39" {
					t.Errorf("session %d beside: %v", sid, got)
				}
			}
			if tc.old == nil {
				st.db.View(func(tx *bolt.Tx) error {
					return tx.Bucket(sbTextBlocks).ForEach(func(k, v []byte) error {
						if es, _ := decodeBlock(v); len(es) > textBlock {
							t.Errorf("block %x holds %d texts, more than %d", k, len(es), textBlock)
						}
						return nil
					})
				})
			}
		})
	}
}

// A store whose texts are kept one by one (written before text blocks)
// opens: read-only it shows and finds them as they are, and a writer's
// open moves them into blocks, with the same answers.
func TestSessionsTextsConverted(t *testing.T) {
	ctx := context.Background()
	root, idx := sessionFixture(t), t.TempDir()
	w := openTestSessions(t, idx, lineSource{root})
	mustSync(t, w)
	q := Query{Text: "retry budget"}
	wantPage, wantView := search(t, w, q), view(t, w, "s1")
	// The older layout: every text in sbTexts, no blocks, no form mark.
	err := w.st.db.Update(func(tx *bolt.Tx) error {
		for _, sid := range textSIDs(tx) {
			for e, err := range textsTx(tx, sid, 0, math.MaxUint32) {
				if err != nil {
					return err
				}
				if err := tx.Bucket(sbTexts).Put(seqKey(sid, e.seq), []byte(e.text)); err != nil {
					return err
				}
			}
		}
		if err := tx.DeleteBucket(sbTextBlocks); err != nil {
			return err
		}
		return tx.Bucket([]byte("meta")).Delete([]byte(metaTextForm))
	})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	check := func(s *Corpus, how string) {
		t.Helper()
		if got := search(t, s, q); !reflect.DeepEqual(got, wantPage) {
			t.Errorf("%s: search\n%+v\nwant\n%+v", how, got, wantPage)
		}
		if got := view(t, s, "s1"); !reflect.DeepEqual(got, wantView) {
			t.Errorf("%s: show\n%+v\nwant\n%+v", how, got, wantView)
		}
	}
	ro, err := Open(ctx, Config{IndexDir: idx, Sources: []Source{lineSource{root}}, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	check(ro, "read-only over texts one by one")
	ro.Close()

	w = openTestSessions(t, idx, lineSource{root})
	defer w.Close()
	w.st.db.View(func(tx *bolt.Tx) error {
		if n := tx.Bucket(sbTexts).Stats().KeyN; n != 0 {
			t.Errorf("after a writer's open: %d texts one by one, want none", n)
		}
		if n := tx.Bucket(sbTextBlocks).Stats().KeyN; n != 2 {
			t.Errorf("after a writer's open: %d text blocks, want 2 (one a session)", n)
		}
		return nil
	})
	if f := w.st.metaAll()[metaTextForm]; f != textFormBlocks {
		t.Errorf("text form %q, want %q", f, textFormBlocks)
	}
	check(w, "converted")
}

// The cache of decoded blocks never serves a block that was written
// again, and evicts the oldest past blockCacheSize.
func TestBlockCache(t *testing.T) {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "s.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := &sessionStore{db: db}
	put := func(sid uint32, es []textEntry) {
		t.Helper()
		err := db.Update(func(tx *bolt.Tx) error {
			if _, err := tx.CreateBucketIfNotExists(sbTextBlocks); err != nil {
				return err
			}
			return putTextsTx(tx, sid, es)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	put(1, entries(0, 10, "a"))
	if got := st.text(1, 5); got != "a5" {
		t.Fatalf("text(1, 5) = %q, want a5", got)
	}
	put(1, entries(5, 6, "b"))
	if got := st.text(1, 5); got != "b5" {
		t.Errorf("text(1, 5) after a rewrite = %q, want b5", got)
	}
	for sid := uint32(2); sid < 2+2*blockCacheSize; sid++ {
		put(sid, entries(0, 3, fmt.Sprintf("s%d-", sid)))
		if got, want := st.text(sid, 2), fmt.Sprintf("s%d-2", sid); got != want {
			t.Fatalf("text(%d, 2) = %q, want %q", sid, got, want)
		}
	}
	if n := len(st.blocks.entries); n != blockCacheSize {
		t.Errorf("%d blocks cached, want %d", n, blockCacheSize)
	}
	if got := st.text(1, 5); got != "b5" {
		t.Errorf("text(1, 5) once evicted = %q, want b5", got)
	}
}

// newTextStore is a state store with the two buckets texts are kept in,
// closed when the test ends.
func newTextStore(t *testing.T) (*bolt.DB, *sessionStore) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(t.TempDir(), "s.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{sbTexts, sbTextBlocks} {
			if _, err := tx.CreateBucket(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return db, &sessionStore{db: db}
}

// TestEachTextFillsTheCache: the blocks eachText reads (the re-rank's)
// stay decoded in the block cache, where a snippet's text then finds
// them; and a block rewritten since is read anew.
func TestEachTextFillsTheCache(t *testing.T) {
	db, st := newTextStore(t)
	err := db.Update(func(tx *bolt.Tx) error {
		for sid := uint32(1); sid <= 3; sid++ {
			if err := putTextsTx(tx, sid, entries(0, 2*textBlock, fmt.Sprintf("s%d-", sid))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	refs := []textRef{{1, 0}, {1, textBlock + 1}, {3, 2}}
	if err := st.eachText(context.Background(), refs, func(int, []byte) {}); err != nil {
		t.Fatal(err)
	}
	if n := len(st.blocks.entries); n != 3 {
		t.Fatalf("%d blocks cached after reading three, want 3", n)
	}
	if got := st.text(3, 2); got != "s3-2" {
		t.Errorf("text(3, 2) = %q, want s3-2", got)
	}
	if n := len(st.blocks.entries); n != 3 {
		t.Errorf("%d blocks cached after a text from one of them, want still 3", n)
	}
	err = db.Update(func(tx *bolt.Tx) error { return putTextsTx(tx, 3, entries(2, 3, "new-")) })
	if err != nil {
		t.Fatal(err)
	}
	var got string
	if err := st.eachText(context.Background(), []textRef{{3, 2}}, func(_ int, b []byte) { got = string(b) }); err != nil || got != "new-2" {
		t.Errorf("text (3, 2) after a rewrite = %q (%v), want new-2", got, err)
	}
}
