package sessions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mnemo/engine/rank"
	"mnemo/engine/store"
)

// TestSessionsOpenPreload: an open takes what it read beside verify when
// nothing was committed since, reads the store again when something was
// (a batch cut short, repaired before the load), and holds the same
// sessions and messages either way.
func TestSessionsOpenPreload(t *testing.T) {
	for _, tc := range []struct {
		name       string
		pending    bool // a batch cut short: repairPending writes before the load
		readOnly   bool
		storeLoads int
	}{
		{name: "writer, nothing written since", storeLoads: 0},
		{name: "reader", readOnly: true, storeLoads: 0},
		{name: "writer, a batch cut short", pending: true, storeLoads: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := sessionFixture(t)
			idx := t.TempDir()
			s := openTestSessions(t, idx, lineSource{root})
			mustSync(t, s)
			want := loadedSummary(s)
			if tc.pending {
				if err := s.st.markPending(map[uint32]uint32{s.byPath[filepath.Join(root, "alpha", "s1.jsonl")].SID: 2}); err != nil {
					t.Fatal(err)
				}
			}
			s.Close()
			r, err := Open(context.Background(), Config{IndexDir: idx, Sources: []Source{lineSource{root}}, ReadOnly: tc.readOnly})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.storeLoads != tc.storeLoads || r.pre != nil {
				t.Errorf("loads from the store after verify %d, want %d; preload kept %v", r.storeLoads, tc.storeLoads, r.pre != nil)
			}
			if got := loadedSummary(r); got != want {
				t.Errorf("loaded %s, want %s", got, want)
			}
			if got := hitIDs(search(t, r, Query{Text: "ledger", Mode: rank.FullText})); len(got) != 2 {
				t.Errorf("hits %v", got)
			}
		})
	}
}

// loadedSummary says what a corpus holds in memory of its sessions and
// messages.
func loadedSummary(s *Corpus) string {
	var b strings.Builder
	for _, p := range []string{"alpha/s1.jsonl", "beta/s2.jsonl"} {
		for path, ss := range s.byPath {
			if strings.HasSuffix(path, p) {
				fmt.Fprintf(&b, "%s: %d messages, next %d, cursor %s; ", ss.ID, ss.count, ss.NextSeq, ss.Cursor)
			}
		}
	}
	fmt.Fprintf(&b, "%d live, next sid %d, totals %v", s.cols.live, s.nextSID, s.totals)
	return b.String()
}

// TestSessionsOpenPreloadDamaged: a store whose records all read but that
// verify finds damaged (two keys out of order in a leaf page) is refused
// to a reader and set aside for a writer, which holds none of what the
// preload read of it; the next sync rebuilds.
func TestSessionsOpenPreloadDamaged(t *testing.T) {
	root := sessionFixture(t)
	// Enough messages that the messages bucket has pages of its own:
	// bbolt's check passes over a bucket kept inline in its parent's page.
	var ms []lineMsg
	for i := range 60 {
		ms = append(ms, msgAt(fmt.Sprintf("c%d", i), "user", fmt.Sprintf("note %d on the orchard", i), 20+i))
	}
	writeLines(t, filepath.Join(root, "gamma", "s3.jsonl"), ms, false)
	idx := t.TempDir()
	s := openTestSessions(t, idx, lineSource{root})
	mustSync(t, s)
	sid := s.byPath[filepath.Join(root, "gamma", "s3.jsonl")].SID
	s.Close()
	swapMessageKeys(t, filepath.Join(idx, sessionsDir, store.StateFile), sid)

	if r, err := Open(context.Background(), Config{IndexDir: idx, ReadOnly: true}); !errors.Is(err, store.ErrCorrupt) {
		if err == nil {
			r.Close()
		}
		t.Fatalf("read-only open: %v, want ErrCorrupt", err)
	}
	w := openTestSessions(t, idx, lineSource{root})
	if len(w.sessions) != 0 || w.cols.live != 0 || w.pre != nil {
		t.Fatalf("after the store was set aside the corpus holds %d sessions, %d messages (preload kept %v), want none",
			len(w.sessions), w.cols.live, w.pre != nil)
	}
	rep := mustSync(t, w)
	if !rep.Full || !strings.Contains(rep.Rebuilt, "set aside") || rep.Added != 3 {
		t.Errorf("sync: %+v, want a full rebuild of 3 sessions", rep)
	}
}

// swapMessageKeys swaps, in the file at path, the keys of messages 0 and
// 1 of session sid where they sit in their leaf page (a key, then its
// record): bbolt reads both records, and its check finds them out of order.
func swapMessageKeys(t *testing.T, path string, sid uint32) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	k0, k1 := seqKey(sid, 0), seqKey(sid, 1)
	i0 := bytes.Index(b, append(k0, `{"i":`...))
	i1 := bytes.Index(b, append(k1, `{"i":`...))
	if i0 < 0 || i1 < 0 {
		t.Fatalf("message keys not found (%d, %d)", i0, i1)
	}
	copy(b[i0:], k1)
	copy(b[i1:], k0)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
