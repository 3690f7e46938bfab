package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
)

// hidingSource is a lineSource whose listing leaves out one file that
// Owns still accepts: a listing taken while that file was being replaced.
type hidingSource struct {
	lineSource
	hide string
}

func (h hidingSource) Discover(ctx context.Context) ([]string, []Skip, error) {
	paths, skips, err := h.lineSource.Discover(ctx)
	out := paths[:0]
	for _, p := range paths {
		if p != h.hide {
			out = append(out, p)
		}
	}
	return out, skips, err
}

// TestSessionsSyncPathsKeepsReadSession: an event on a transcript and one
// on its folder in the same batch, with a folder listing that missed the
// file, must not remove the session and keep only what was appended (the
// "18 → 21 → 1 messages" of a file growing under serve).
func TestSessionsSyncPathsKeepsReadSession(t *testing.T) {
	root := sessionFixture(t)
	p := filepath.Join(root, "alpha", "s1.jsonl")
	s := openTestSessions(t, t.TempDir(), hidingSource{lineSource{root}, p})
	if _, err := s.SyncPaths(context.Background(), []string{p}); err != nil {
		t.Fatal(err)
	}
	writeLines(t, p, []lineMsg{msgAt("a4", "assistant", "A fourth message.", 3)}, true)
	if _, err := s.SyncPaths(context.Background(), []string{p, filepath.Dir(p)}); err != nil {
		t.Fatal(err)
	}
	v, err := s.GetSession(context.Background(), "s1", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if v.MessageCount != 4 || len(v.Messages) != 4 || v.Messages[0].MessageID != "a1" {
		t.Errorf("after the append: %d messages (%+v), want a1…a4", v.MessageCount, v.Messages)
	}
}

// TestSessionsInterruptedSyncShowsIndexing: a first (or full) sessions sync
// cut short after its first batch leaves part of the transcripts indexed;
// until a sync completes, searches and status must say indexing, read-only
// and writer alike.
func TestSessionsInterruptedSyncShowsIndexing(t *testing.T) {
	for _, full := range []bool{false, true} {
		t.Run(fmt.Sprintf("full=%v", full), func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "t")
			for i := range 6 {
				writeLines(t, filepath.Join(root, fmt.Sprintf("s%d.jsonl", i)), []lineMsg{
					msgAt(fmt.Sprintf("m%d", i), "user", "the wombat burrows", i),
				}, false)
			}
			idx := t.TempDir()
			if full {
				s := openTestSessions(t, idx, lineSource{root})
				mustSync(t, s)
				s.Close()
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s, err := OpenSessions(context.Background(), SessionsConfig{IndexDir: idx, Sources: []SessionSource{lineSource{root}},
				Progress: func(done, total int) {
					if done > 0 && done < total {
						cancel() // the kill, after the first batch
					}
				}})
			if err != nil {
				t.Fatal(err)
			}
			s.batchMsgs = 2
			if _, err := s.Sync(ctx, full); !errors.Is(err, context.Canceled) {
				t.Fatalf("interrupted sync: %v, want context.Canceled", err)
			}
			s.Close()

			ro, err := OpenSessions(context.Background(), SessionsConfig{IndexDir: idx, Sources: []SessionSource{lineSource{root}}, ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			p, err := ro.Search(context.Background(), SessionQuery{Text: "wombat", Mode: FullText})
			st, _ := ro.Status(context.Background())
			ro.Close()
			if err != nil {
				t.Fatal(err)
			}
			if p.TotalSessions == 0 || p.TotalSessions >= 6 {
				t.Fatalf("interrupted: %d sessions found, want part of 6 (is the test still interrupting?)", p.TotalSessions)
			}
			if !p.Indexing || !st.Indexing || st.Unfinished == "" {
				t.Errorf("read-only after the interruption: page.Indexing %v, status.Indexing %v, Unfinished %q; want true, true, set", p.Indexing, st.Indexing, st.Unfinished)
			}
			w := openTestSessions(t, idx, lineSource{root})
			if st, _ := w.Status(context.Background()); !st.Indexing {
				t.Error("writer before its sync: status.Indexing false")
			}
			mustSync(t, w)
			p = search(t, w, SessionQuery{Text: "wombat", Mode: FullText})
			if st, _ := w.Status(context.Background()); p.Indexing || st.Indexing || st.Unfinished != "" || p.TotalSessions != 6 {
				t.Errorf("after a completed sync: page.Indexing %v, status.Indexing %v, Unfinished %q, %d sessions; want false, false, empty, 6",
					p.Indexing, st.Indexing, st.Unfinished, p.TotalSessions)
			}
		})
	}
}
