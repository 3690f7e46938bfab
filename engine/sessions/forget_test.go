package sessions

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"mnemo/engine/enginetest/holding"
	"mnemo/engine/fulltext"
	"mnemo/engine/rank"
	"mnemo/engine/store"
	"mnemo/engine/transcript"
)

// forgetFixture writes three sessions, each with words no other holds.
func forgetFixture(t *testing.T) string {
	root := filepath.Join(t.TempDir(), "transcripts")
	writeLines(t, filepath.Join(root, "p1", "keep1.jsonl"), []lineMsg{
		msgAt("k1", "user", "Where does the zanzibarquux pipeline run?", 0),
		msgAt("k2", "assistant", "On the zanzibarquux cluster.", 1),
	}, false)
	writeLines(t, filepath.Join(root, "p2", "gone.jsonl"), []lineMsg{
		msgAt("g1", "user", "Tell nobody about the quetzalxyzzy merger.", 5),
		msgAt("g2", "assistant", "The quetzalxyzzy merger closes on Friday; ask plughwump.", 6),
		{Role: "meta-summary", Text: "Planning the frobnitzkat acquisition"},
	}, false)
	writeLines(t, filepath.Join(root, "p3", "live.jsonl"), []lineMsg{
		msgAt("l1", "user", "The grommetvlax password rotation is due.", 9),
	}, false)
	return root
}

// filesHolding lists the files under dir that hold any of words
// (holding.Files: raw bytes, and every full-text segment's terms
// decoded).
func filesHolding(t *testing.T, dir string, words ...string) []string {
	t.Helper()
	return holding.Files(t, dir, words...)
}

var goneWords = []string{"quetzalxyzzy", "plughwump", "frobnitzkat"}

// TestSessionsForget: a forgotten session leaves no distinctive word in any
// file under the index folder — Bleve's segments, the state store, anything
// — while the other sessions stay whole, and a forgotten transcript that is
// still there is not read again, not even by a full rebuild.
func TestSessionsForget(t *testing.T) {
	root := forgetFixture(t)
	idx := t.TempDir()
	s := openTestSessions(t, idx, lineSource{root})
	mustSync(t, s)
	os.Remove(filepath.Join(root, "p2", "gone.jsonl"))
	mustSync(t, s) // archived: the index holds the only copy
	s.Close()
	// The check can fail: before the forget, the words are in the
	// full-text segments and in the state store.
	before := strings.Join(filesHolding(t, idx, goneWords...), " ")
	if !strings.Contains(before, fulltext.Dir) || !strings.Contains(before, store.StateFile) {
		t.Fatalf("before the forget the words are only in %q; the check would prove nothing", before)
	}
	s = openTestSessions(t, idx, lineSource{root})
	if _, err := s.Forget(context.Background(), ForgetQuery{}); !errors.Is(err, ErrNothingToForget) {
		t.Errorf("forget of nothing: %v", err)
	}
	if _, err := s.Forget(context.Background(), ForgetQuery{IDs: []string{"gone", "nope"}}); !errors.Is(err, ErrNoSession) {
		t.Errorf("forget of an unknown id: %v", err)
	}
	if v := view(t, s, "gone"); v.MessageCount != 3 {
		t.Fatalf("a failed forget changed the session: %+v", v)
	}
	rep, err := s.Forget(context.Background(), ForgetQuery{IDs: []string{"gone"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Sessions) != 1 || rep.Sessions[0].SessionID != "gone" || rep.Messages != 3 || !rep.Sessions[0].Archived || rep.Sessions[0].TranscriptKept {
		t.Errorf("report %+v", rep)
	}
	if left := filesHolding(t, idx, goneWords...); len(left) > 0 {
		t.Errorf("after the forget, files still hold its words: %v", left)
	}
	checkOthers := func(when string, s *Corpus, want string) {
		t.Helper()
		p := search(t, s, Query{Text: "zanzibarquux grommetvlax quetzalxyzzy frobnitzkat", Mode: rank.FullText})
		ids := hitIDs(p)
		slices.Sort(ids)
		if got := strings.Join(ids, ","); got != want {
			t.Errorf("%s: hits %s, want %s", when, got, want)
		}
		if _, err := s.GetSession(context.Background(), "gone", 0, 0); !errors.Is(err, ErrNoSession) {
			t.Errorf("%s: GetSession(gone): %v", when, err)
		}
		if n, _ := s.ft.DocCount(); int(n) != s.cols.live {
			t.Errorf("%s: Bleve holds %d documents, the store %d", when, n, s.cols.live)
		}
	}
	checkOthers("after the forget", s, "keep1/k1,keep1/k2,live/l1")
	s.Close()
	s = openTestSessions(t, idx, lineSource{root})
	checkOthers("reopened", s, "keep1/k1,keep1/k2,live/l1")

	// A live session: forgotten, and its transcript not read again.
	rep, err = s.Forget(context.Background(), ForgetQuery{IDs: []string{"live"}})
	if err != nil || len(rep.Sessions) != 1 || !rep.Sessions[0].TranscriptKept {
		t.Fatalf("forget live: %+v, %v", rep, err)
	}
	if left := filesHolding(t, idx, "grommetvlax"); len(left) > 0 {
		t.Errorf("after forgetting the live session, files hold its words: %v", left)
	}
	for _, full := range []bool{false, true} {
		if _, err := s.Sync(context.Background(), full); err != nil {
			t.Fatal(err)
		}
		checkOthers("synced", s, "keep1/k1,keep1/k2")
		if st, _ := s.Status(context.Background()); st.Sources[0].Forgotten != 1 || st.Sessions != 1 {
			t.Errorf("status %+v, want 1 session and 1 forgotten transcript", st)
		}
	}
	if left := filesHolding(t, idx, "grommetvlax"); len(left) > 0 {
		t.Errorf("after syncs, files hold the forgotten words: %v", left)
	}
}

// TestSessionsForgetFilters: without ids, every session matching all the
// filters given goes.
func TestSessionsForgetFilters(t *testing.T) {
	root := forgetFixture(t)
	s := openTestSessions(t, t.TempDir(), lineSource{root})
	mustSync(t, s)
	os.Remove(filepath.Join(root, "p2", "gone.jsonl"))
	mustSync(t, s)
	yes := true
	for _, tt := range []struct {
		q    ForgetQuery
		want string
	}{
		{ForgetQuery{Project: "p3", Archived: &yes}, ""},         // live, not archived
		{ForgetQuery{Before: day.Add(5 * time.Minute)}, "keep1"}, // ended before 10:05
		{ForgetQuery{Archived: &yes, Agent: "test"}, "gone"},     // the archived one
		{ForgetQuery{Project: "p3", Before: day.Add(time.Hour)}, "live"},
	} {
		rep, err := s.Forget(context.Background(), tt.q)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range rep.Sessions {
			got = append(got, f.SessionID)
		}
		if strings.Join(got, ",") != tt.want {
			t.Errorf("forget %+v: %v, want %s", tt.q, got, tt.want)
		}
	}
	if st, _ := s.Status(context.Background()); st.Sessions != 0 {
		t.Errorf("status %+v", st)
	}
}

// forgetCommitted syncs forgetFixture (its folder is root, the index's idx) and commits a forget of session
// "gone" in the store (the purge mark set, the session dropped from it),
// and stops there, as a forget killed right after its commit would.
func forgetCommitted(t *testing.T) (s *Corpus, root, idx string, sel []*session) {
	t.Helper()
	root = forgetFixture(t)
	idx = t.TempDir()
	s = openTestSessions(t, idx, lineSource{root})
	mustSync(t, s)
	sel, err := s.selectForget(ForgetQuery{IDs: []string{"gone"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.st.forget(sel, nil, "forget started (test)"); err != nil {
		t.Fatal(err)
	}
	return s, root, idx, sel
}

// TestSessionsForgetCrash: a forget cut short after it committed (the purge
// mark set, the sessions dropped from the store, segments and pages not yet
// rewritten, a half-built index left behind) loses no other session; the
// next open finishes the purge.
func TestSessionsForgetCrash(t *testing.T) {
	s, root, idx, _ := forgetCommitted(t)
	s.Close() // the kill
	junk := filepath.Join(idx, sessionsDir, fulltext.Dir+".purge")
	os.MkdirAll(junk, 0o755)
	os.WriteFile(filepath.Join(junk, "half-written"), []byte("quetzalxyzzy"), 0o644)
	if left := filesHolding(t, idx, goneWords...); len(left) == 0 {
		t.Fatal("the simulated crash left no trace to purge; the test proves nothing")
	}
	// A reader meanwhile never shows the dropped session.
	ro, err := Open(context.Background(), Config{IndexDir: idx, Sources: []Source{lineSource{root}}, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := hitIDs(search(t, ro, Query{Text: "quetzalxyzzy", Mode: rank.FullText})); len(got) != 0 {
		t.Errorf("read-only after the crash: %v", got)
	}
	if st, _ := ro.Status(context.Background()); !strings.Contains(st.ForgetUnfinished, "forget started") {
		t.Errorf("read-only status after the crash does not say the forget is unfinished: %q", st.ForgetUnfinished)
	}
	ro.Close()
	s = openTestSessions(t, idx, lineSource{root})
	if left := filesHolding(t, idx, goneWords...); len(left) > 0 {
		t.Errorf("after the reopen, files hold its words: %v", left)
	}
	if meta := s.st.metaAll(); meta[metaPurge] != "" {
		t.Errorf("purge mark still set: %q", meta[metaPurge])
	}
	if st, _ := s.Status(context.Background()); st.ForgetUnfinished != "" {
		t.Errorf("status after the repair: forget unfinished %q", st.ForgetUnfinished)
	}
	ids := hitIDs(search(t, s, Query{Text: "zanzibarquux grommetvlax", Mode: rank.FullText}))
	slices.Sort(ids)
	if got := strings.Join(ids, ","); got != "keep1/k1,keep1/k2,live/l1" {
		t.Errorf("the other sessions after the repair: %s", got)
	}
}

// TestSessionsForgetCutMidSwap: a forget killed between the two renames of
// its full-text swap — the old index moved aside, the rebuilt one not yet
// in its place — leaves an index a reader still opens (from the rebuilt
// folder, changing nothing) and a writer finishes.
func TestSessionsForgetCutMidSwap(t *testing.T) {
	s, root, idx, sel := forgetCommitted(t)
	s.dropSessions(sel, nil)
	cur := filepath.Join(idx, sessionsDir, fulltext.Dir)
	ft, err := fulltext.Open(cur+".purge", true, fulltext.DurableBatches, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.reindexInto(context.Background(), ft, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := ft.Close(); err != nil {
		t.Fatal(err)
	}
	s.Close() // the kill, right after the first rename:
	if err := os.Rename(cur, cur+".old"); err != nil {
		t.Fatal(err)
	}
	ro, err := Open(context.Background(), Config{IndexDir: idx, Sources: []Source{lineSource{root}}, ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open mid-swap: %v", err)
	}
	ids := hitIDs(search(t, ro, Query{Text: "zanzibarquux quetzalxyzzy grommetvlax", Mode: rank.FullText}))
	slices.Sort(ids)
	if got := strings.Join(ids, ","); got != "keep1/k1,keep1/k2,live/l1" {
		t.Errorf("read-only mid-swap: hits %s", got)
	}
	if st, _ := ro.Status(context.Background()); st.ForgetUnfinished == "" {
		t.Error("read-only status mid-swap does not say the forget is unfinished")
	}
	ro.Close()
	if _, err := os.Stat(cur); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the reader changed the index folder: %v", err)
	}
	s = openTestSessions(t, idx, lineSource{root})
	if left := filesHolding(t, idx, goneWords...); len(left) > 0 {
		t.Errorf("after a writer's open, files hold its words: %v", left)
	}
	ids = hitIDs(search(t, s, Query{Text: "zanzibarquux quetzalxyzzy grommetvlax", Mode: rank.FullText}))
	slices.Sort(ids)
	if got := strings.Join(ids, ","); got != "keep1/k1,keep1/k2,live/l1" {
		t.Errorf("after the writer's open: hits %s", got)
	}
}

// TestSessionsForgetContained: a session inside a container file (here a
// claude.ai data export, read through the index's scratch folder, which
// keeps one extract per session) is forgotten with every copy: no file
// under the index folder holds its words — its extract included — and
// later syncs leave it out, even after the container changes and is
// extracted again.
func TestSessionsForgetContained(t *testing.T) {
	downloads := filepath.Join(t.TempDir(), "Downloads")
	if err := os.CopyFS(downloads, os.DirFS(filepath.Join("..", "..", "testdata", "transcripts", "claude-export", "home", "Downloads"))); err != nil {
		t.Fatal(err)
	}
	idx := t.TempDir()
	src := TranscriptSource(transcript.Source{Kind: transcript.ClaudeExport, Root: downloads}, transcript.Options{Scratch: Scratch(idx)})
	s := openTestSessions(t, idx, src)
	mustSync(t, s)
	p := search(t, s, Query{Text: "claudeokapi", Mode: rank.FullText})
	if len(p.Sessions) != 1 {
		t.Fatalf("before the forget: %+v", p.Sessions)
	}
	id := p.Sessions[0].SessionID
	if left := filesHolding(t, idx, "claudeokapi"); !strings.Contains(strings.Join(left, " "), "sources") {
		t.Fatalf("before the forget no extract in the scratch folder holds the words (%v); the check would prove nothing", left)
	}
	rep, err := s.Forget(context.Background(), ForgetQuery{IDs: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Sessions) != 1 || !rep.Sessions[0].TranscriptKept {
		t.Errorf("forget: %+v, want the session, its transcript kept", rep.Sessions)
	}
	if left := filesHolding(t, idx, "claudeokapi"); len(left) > 0 {
		t.Errorf("after the forget, files hold its words: %v", left)
	}
	conv := filepath.Join(downloads, "data-2025-12-01-12-00-00", "conversations.json")
	for _, change := range []bool{false, true} {
		if change { // the export is written again: every session extracted again
			b, err := os.ReadFile(conv)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(conv, append(b, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		mustSync(t, s)
		if got := search(t, s, Query{Text: "claudeokapi", Mode: rank.FullText}); len(got.Sessions) != 0 {
			t.Errorf("sync (container changed %v): the forgotten session is back: %+v", change, got.Sessions)
		}
		if left := filesHolding(t, idx, "claudeokapi"); len(left) > 0 {
			t.Errorf("sync (container changed %v): files hold its words: %v", change, left)
		}
	}
	if st, _ := s.Status(context.Background()); st.Sources[0].Forgotten != 1 {
		t.Errorf("status: %d forgotten, want 1", st.Sources[0].Forgotten)
	}
}
