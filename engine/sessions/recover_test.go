package sessions

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"mnemo/engine/rank"
	"mnemo/engine/store"
)

// tearFreeTail damages a closed state store the way a lost tail write
// does: the file ends a page before its pages reach. The lost page is
// one a large transaction used and freed again, so the sessions' own pages
// are intact: the store is damaged (store.Open says so), and what it holds
// is still readable.
func tearFreeTail(t *testing.T, path string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ballast := []byte("ballast")
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket(ballast)
		if err != nil {
			return err
		}
		for i := range 64 {
			if err := b.Put([]byte{byte(i)}, make([]byte, 8<<10)); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = db.Update(func(tx *bolt.Tx) error { return tx.DeleteBucket(ballast) })
	}
	var size int64
	if err == nil {
		err = db.View(func(tx *bolt.Tx) error { size = tx.Size(); return nil })
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, size-int64(os.Getpagesize())); err != nil {
		t.Fatal(err)
	}
	if db, err := store.Open(path, sessionStoreOptions(true)); !errors.Is(err, store.ErrCorrupt) {
		if db != nil {
			db.Close()
		}
		t.Fatalf("the torn store opens (%v): the test would not set it aside", err)
	}
}

// breakMessage overwrites the record of one stored message of the session
// at transcript path p with bytes that do not decode.
func breakMessage(t *testing.T, s *Corpus, p string) {
	t.Helper()
	sid := s.byPath[p].SID
	err := s.st.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(sbMessages).Put(seqKey(sid, 0), []byte("{not json"))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSessionsRecoverArchived: when the sessions state store is found
// damaged, set aside and rebuilt from the transcripts, the archived
// sessions — whose transcripts are gone, so that only the set-aside copy
// holds them — are recovered from the copy when it is readable: searchable,
// showable, archived, embedded again; a forgotten transcript stays out;
// status says how many were recovered and how many could not be read. A
// copy that cannot be read at all is said to have lost them, and why.
func TestSessionsRecoverArchived(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		harm                   func(t *testing.T, path string)
		brokenS3               bool // s3's first message record does not decode
		recovered, lost        int
		wantError, wantSummary string
		ledgerAfter            bool // s2 found again after the rebuild
	}{
		{name: "torn, readable", harm: tearFreeTail, recovered: 2, wantSummary: "2 archived sessions (3 messages) recovered", ledgerAfter: true},
		{name: "torn, one session unreadable", harm: tearFreeTail, brokenS3: true, recovered: 1, lost: 1,
			wantError: "archived session s3: message 0 does not decode", wantSummary: "1 could not be read", ledgerAfter: true},
		{name: "unreadable", harm: func(t *testing.T, p string) {
			if err := os.WriteFile(p, []byte(strings.Repeat("not a bbolt file ", 4096)), 0o600); err != nil {
				t.Fatal(err)
			}
		}, wantError: "could not be opened", wantSummary: "are lost"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := sessionFixture(t)
			p2, p3 := filepath.Join(root, "beta", "s2.jsonl"), filepath.Join(root, "gamma", "s3.jsonl")
			writeLines(t, p3, []lineMsg{msgAt("c1", "user", "The loquat harvest slipped a week.", 20)}, false)
			writeLines(t, filepath.Join(root, "delta", "s4.jsonl"), []lineMsg{msgAt("d1", "user", "Forget the persimmon plan.", 30)}, false)
			idx := t.TempDir()
			s := openTestSessions(t, idx, lineSource{root})
			mustSync(t, s)
			if _, err := s.Forget(context.Background(), ForgetQuery{IDs: []string{"s4"}}); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{p2, p3} {
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
			}
			if rep := mustSync(t, s); rep.Archived != 2 {
				t.Fatalf("delete: %+v, want two archived", rep)
			}
			if tc.brokenS3 {
				breakMessage(t, s, p3)
			}
			s.Close()
			state := filepath.Join(idx, sessionsDir, store.StateFile)
			tc.harm(t, state)

			s = openTestSessions(t, idx, lineSource{root})
			st, err := s.Status(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(st.Recovery) != 1 {
				t.Fatalf("status recovery %+v, want one set-aside copy accounted for", st.Recovery)
			}
			r := st.Recovery[0]
			if r.Recovered != tc.recovered || r.Lost != tc.lost || !strings.Contains(r.Error, tc.wantError) ||
				!strings.HasPrefix(r.SetAside, store.StateFile+".corrupt-") || !strings.Contains(r.Summary(), tc.wantSummary) {
				t.Errorf("recovery %+v (%s), want %d recovered, %d lost, error with %q, summary with %q", r, r.Summary(), tc.recovered, tc.lost, tc.wantError, tc.wantSummary)
			}
			if tc.recovered == 0 && tc.lost == 0 && r.Error == "" {
				t.Error("nothing recovered and no reason given")
			}
			rep := mustSync(t, s)
			if !rep.Full || !strings.Contains(rep.Rebuilt, "set aside") || !strings.Contains(rep.Rebuilt, r.SetAside) {
				t.Errorf("sync after the damage: %+v, want a full rebuild naming the set-aside copy", rep)
			}
			check := func(when string, s *Corpus) {
				t.Helper()
				p := search(t, s, Query{Text: "ledger", Mode: rank.FullText})
				if !tc.ledgerAfter {
					if len(p.Sessions) != 0 {
						t.Errorf("%s: the lost session was found: %+v", when, p.Sessions)
					}
					return
				}
				if len(p.Sessions) != 1 || p.Sessions[0].SessionID != "s2" || !p.Sessions[0].Archived || len(p.Sessions[0].Hits) != 2 {
					t.Errorf("%s: search %+v, want s2 archived with 2 hits", when, p.Sessions)
				}
				if p := search(t, s, Query{Text: "database for the ledger", Mode: rank.Semantic}); len(p.Sessions) == 0 || p.Sessions[0].SessionID != "s2" {
					t.Errorf("%s: semantic search %+v, want s2 first", when, p.Sessions)
				}
				if v := view(t, s, "s2"); !v.Archived || msgIDs(v) != "b1,b2" || v.Messages[1].Text != "Postgres, because the ledger needs transactions." {
					t.Errorf("%s: GetSession %+v", when, v)
				}
				_, err := s.GetSession(context.Background(), "s3", 0, 0)
				if tc.brokenS3 != errors.Is(err, ErrNoSession) {
					t.Errorf("%s: GetSession(s3): %v", when, err)
				}
				if got := hitIDs(search(t, s, Query{Text: "persimmon", Mode: rank.FullText})); len(got) != 0 {
					t.Errorf("%s: the forgotten transcript is back: %v", when, got)
				}
				st, _ := s.Status(context.Background())
				if want := 1 + tc.recovered; st.Sessions != want || st.Archived != tc.recovered || st.Sources[0].Forgotten != 1 {
					t.Errorf("%s: status %d sessions, %d archived, %d forgotten; want %d, %d, 1", when, st.Sessions, st.Archived, st.Sources[0].Forgotten, want, tc.recovered)
				}
			}
			check("rebuilt", s)
			s.Close()
			s = openTestSessions(t, idx, lineSource{root}) // the copy is read once
			check("reopened", s)
			if st, _ := s.Status(context.Background()); len(st.Recovery) != 1 || st.Recovery[0] != r {
				t.Errorf("reopened: recovery %+v, want %+v kept", st.Recovery, r)
			}
		})
	}
}
