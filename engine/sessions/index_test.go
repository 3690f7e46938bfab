package sessions

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"mnemo/engine/rank"
	"mnemo/engine/store"
	"mnemo/engine/transcript"
)

// hidingSource is a lineSource whose listing leaves out one file that
// Owns still accepts: a listing taken while that file was being replaced.
type hidingSource struct {
	lineSource
	hide string
}

func (h hidingSource) Discover(ctx context.Context) ([]string, []store.Skip, error) {
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
			s, err := Open(context.Background(), Config{IndexDir: idx, Sources: []Source{lineSource{root}},
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

			ro, err := Open(context.Background(), Config{IndexDir: idx, Sources: []Source{lineSource{root}}, ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			p, err := ro.Search(context.Background(), Query{Text: "wombat", Mode: rank.FullText})
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
			p = search(t, w, Query{Text: "wombat", Mode: rank.FullText})
			if st, _ := w.Status(context.Background()); p.Indexing || st.Indexing || st.Unfinished != "" || p.TotalSessions != 6 {
				t.Errorf("after a completed sync: page.Indexing %v, status.Indexing %v, Unfinished %q, %d sessions; want false, false, empty, 6",
					p.Indexing, st.Indexing, st.Unfinished, p.TotalSessions)
			}
		})
	}
}

// view reads a whole session, failing the test on an error.
func view(t *testing.T, s *Corpus, id string) View {
	t.Helper()
	v, err := s.GetSession(context.Background(), id, 0, MaxMessages)
	if err != nil {
		t.Fatalf("GetSession(%s): %v", id, err)
	}
	return v
}

func msgIDs(v View) string {
	var ids []string
	for _, m := range v.Messages {
		ids = append(ids, m.MessageID)
	}
	return strings.Join(ids, ",")
}

// TestSessionsArchive: a deleted transcript's session stays searchable and
// readable, marked archived, across reopening, a full rebuild and a crash
// repair; it is restored when its transcript comes back.
func TestSessionsArchive(t *testing.T) {
	root := sessionFixture(t)
	idx := t.TempDir()
	p2 := filepath.Join(root, "beta", "s2.jsonl")
	s := openTestSessions(t, idx, lineSource{root})
	mustSync(t, s)
	if err := os.Remove(p2); err != nil {
		t.Fatal(err)
	}
	if rep := mustSync(t, s); rep.Archived != 1 || rep.Removed != 0 {
		t.Fatalf("delete: %+v, want one archived", rep)
	}
	check := func(when string, s *Corpus) {
		t.Helper()
		p := search(t, s, Query{Text: "ledger", Mode: rank.FullText})
		if len(p.Sessions) != 1 || p.Sessions[0].SessionID != "s2" || !p.Sessions[0].Archived || len(p.Sessions[0].Hits) != 2 {
			t.Errorf("%s: search %+v, want s2 archived with 2 hits", when, p.Sessions)
		}
		if p := search(t, s, Query{Text: "database for the ledger", Mode: rank.Semantic}); len(p.Sessions) == 0 || p.Sessions[0].SessionID != "s2" {
			t.Errorf("%s: semantic search %+v, want s2 first", when, p.Sessions)
		}
		v := view(t, s, "s2")
		if !v.Archived || v.ArchivedAt.IsZero() || msgIDs(v) != "b1,b2" || v.Messages[1].Text != "Postgres, because the ledger needs transactions." {
			t.Errorf("%s: GetSession %+v", when, v)
		}
		if m, err := s.GetMessage(context.Background(), "s2", "b2", 1); err != nil || !m.Archived || m.Focus != 1 {
			t.Errorf("%s: GetMessage %+v, %v", when, m, err)
		}
		st, _ := s.Status(context.Background())
		if st.Sessions != 2 || st.Archived != 1 || st.Sources[0].Archived != 1 || st.Messages != 5 {
			t.Errorf("%s: status %+v, want 2 sessions, 1 archived, 5 messages", when, st)
		}
		if n, _ := s.ft.DocCount(); n != 5 {
			t.Errorf("%s: Bleve holds %d documents, want 5", when, n)
		}
	}
	check("archived", s)
	s.Close()
	s = openTestSessions(t, idx, lineSource{root})
	check("reopened", s)
	if rep, err := s.Sync(context.Background(), true); err != nil || rep.Archived != 0 {
		t.Fatalf("full sync: %+v, %v", rep, err)
	}
	check("after a full rebuild", s)

	// A crash in a batch that wrote s2's documents: the repair keeps it.
	sid := s.byPath[p2].SID
	if err := s.st.markPending(map[uint32]uint32{sid: 3}); err != nil {
		t.Fatal(err)
	}
	if err := plantDoc(s.ft, docID(sid, 2), "ghost ledger"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openTestSessions(t, idx, lineSource{root})
	check("after a crash repair", s)

	// The transcript comes back as it was: restored, then read on as usual.
	writeLines(t, p2, []lineMsg{
		msgAt("b1", "user", "Let us pick a database for the ledger.", 10),
		msgAt("b2", "assistant", "Postgres, because the ledger needs transactions.", 11),
	}, false)
	if rep := mustSync(t, s); rep.Restored != 1 || rep.Messages != 0 {
		t.Errorf("back: %+v, want one restored, no message read", rep)
	}
	if v := view(t, s, "s2"); v.Archived || msgIDs(v) != "b1,b2" {
		t.Errorf("restored: %+v", v)
	}
	writeLines(t, p2, []lineMsg{msgAt("b3", "user", "And the backups?", 12)}, true)
	if rep := mustSync(t, s); rep.Updated != 1 || rep.Messages != 1 {
		t.Errorf("append after restore: %+v", rep)
	}
	if v := view(t, s, "s2"); msgIDs(v) != "b1,b2,b3" {
		t.Errorf("after the append: %s", msgIDs(v))
	}
}

// TestSessionsArchiveRewritten: an archived session whose transcript comes
// back rewritten keeps every archived message the file no longer holds
// (the index is their only copy), takes the file's version of the others,
// and a file at its path that holds another session is a new session.
func TestSessionsArchiveRewritten(t *testing.T) {
	root := sessionFixture(t)
	p1 := filepath.Join(root, "alpha", "s1.jsonl")
	s := openTestSessions(t, t.TempDir(), lineSource{root})
	mustSync(t, s)
	os.Remove(p1)
	mustSync(t, s)
	writeLines(t, p1, []lineMsg{msgAt("a2", "assistant", "We decided on six attempts.", 1)}, false) // shorter: the reader resets
	if rep := mustSync(t, s); rep.Restored != 1 {
		t.Errorf("rewritten: %+v, want one restored", rep)
	}
	v := view(t, s, "s1")
	if v.Archived || msgIDs(v) != "a1,a2,a3" || v.Messages[1].Text != "We decided on six attempts." {
		t.Errorf("restored from a rewrite: %+v", v)
	}
	if got := hitIDs(search(t, s, Query{Text: "exponential", Mode: rank.FullText})); len(got) != 0 {
		t.Errorf("the replaced text is still found: %v", got)
	}

	writeLines(t, p1, []lineMsg{msgAt("a4", "user", strings.Repeat("and a long tail ", 40), 3)}, true) // longer than what replaces it
	mustSync(t, s)
	os.Remove(p1)
	mustSync(t, s)
	writeLines(t, p1, []lineMsg{{Role: "meta-id", Text: "other"}, msgAt("o1", "user", "A different session entirely.", 5)}, false)
	if rep := mustSync(t, s); rep.Added != 1 || rep.Restored != 0 {
		t.Errorf("another session at the path: %+v, want one added", rep)
	}
	if v := view(t, s, "s1"); !v.Archived || msgIDs(v) != "a1,a2,a3,a4" {
		t.Errorf("the archived session changed: %+v", v)
	}
	if v := view(t, s, "other"); v.Archived || msgIDs(v) != "o1" {
		t.Errorf("the new session: %+v", v)
	}
	if st, _ := s.Status(context.Background()); st.Sessions != 3 || st.Archived != 1 {
		t.Errorf("status %+v, want 3 sessions, 1 archived", st)
	}
}

// TestSessionsMirror: with MirrorDeleted a deleted transcript's session
// leaves the index, and archives kept before go at the next sync.
func TestSessionsMirror(t *testing.T) {
	root := sessionFixture(t)
	idx := t.TempDir()
	s := openTestSessions(t, idx, lineSource{root})
	mustSync(t, s)
	os.Remove(filepath.Join(root, "beta", "s2.jsonl"))
	mustSync(t, s) // archived
	s.Close()
	m, err := Open(context.Background(), Config{IndexDir: idx, Sources: []Source{lineSource{root}}, MirrorDeleted: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if rep := mustSync(t, m); rep.Removed != 1 {
		t.Errorf("mirror: %+v, want the archive removed", rep)
	}
	os.Remove(filepath.Join(root, "alpha", "s1.jsonl"))
	if rep := mustSync(t, m); rep.Removed != 1 || rep.Archived != 0 {
		t.Errorf("mirror delete: %+v, want one removed", rep)
	}
	if st, _ := m.Status(context.Background()); st.Sessions != 0 {
		t.Errorf("mirror: status %+v, want no session", st)
	}
}

func TestSessionsArchivedFilter(t *testing.T) {
	root := sessionFixture(t)
	s := openTestSessions(t, t.TempDir(), lineSource{root})
	mustSync(t, s)
	os.Remove(filepath.Join(root, "beta", "s2.jsonl"))
	mustSync(t, s)
	yes, no := true, false
	for _, tt := range []struct {
		archived *bool
		want     string
	}{{nil, "s1,s2"}, {&yes, "s2"}, {&no, "s1"}} {
		for _, mode := range []rank.Mode{rank.FullText, rank.Semantic, rank.Hybrid} {
			p := search(t, s, Query{Text: "ledger retry budget database", Mode: mode, Archived: tt.archived})
			var got []string
			for _, r := range p.Sessions {
				got = append(got, r.SessionID)
			}
			slices.Sort(got)
			if strings.Join(got, ",") != tt.want {
				t.Errorf("%s, archived %v: sessions %v, want %s", mode, tt.archived, got, tt.want)
			}
		}
	}
}

// TestSessionsCoverage: every line the source reads is accounted for, per
// transcript and per source: counts add over incremental reads, a whole
// read replaces them, and an archived session keeps its lines.
func TestSessionsCoverage(t *testing.T) {
	root := sessionFixture(t)
	p1 := filepath.Join(root, "alpha", "s1.jsonl")
	s := openTestSessions(t, t.TempDir(), lineSource{root})
	mustSync(t, s)
	cov := func(want transcript.Coverage) {
		t.Helper()
		st, _ := s.Status(context.Background())
		got := st.Sources[0].Coverage
		if got.Lines != want.Lines || got.Indexed != want.Indexed || !maps.Equal(got.LeftOut, want.LeftOut) || !got.Balanced() {
			t.Errorf("coverage %+v, want %+v", got, want)
		}
		if st.Coverage.Lines != got.Lines || st.Coverage.Indexed != got.Indexed {
			t.Errorf("total coverage %+v, want the source's %+v", st.Coverage, got)
		}
	}
	cov(transcript.Coverage{Lines: 5, Indexed: 5})
	f, _ := os.OpenFile(p1, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("{not json\n")
	f.Close()
	writeLines(t, p1, []lineMsg{{Role: "meta-summary", Text: "a summary"}, msgAt("a4", "user", "more", 4)}, true)
	mustSync(t, s) // adds
	cov(transcript.Coverage{Lines: 8, Indexed: 6, LeftOut: map[transcript.Reason]int{transcript.Malformed: 1, transcript.Meta: 1}})
	writeLines(t, p1, []lineMsg{msgAt("r1", "user", "rewritten", 0)}, false)
	mustSync(t, s) // replaces
	cov(transcript.Coverage{Lines: 3, Indexed: 3})
	os.Remove(filepath.Join(root, "beta", "s2.jsonl"))
	mustSync(t, s) // archived: its lines stay counted
	cov(transcript.Coverage{Lines: 3, Indexed: 3})
}

func TestSkipKind(t *testing.T) {
	for _, tt := range []struct {
		reason, kind string
		n            int
	}{
		{"unreadable: open x: permission denied", "unreadable", 1},
		{"symbolic link (not followed)", "symbolic link", 1},
		{"3 subagent transcripts (not indexed by default)", "subagent transcripts", 3},
		{"topic folder without full.md", "topic folder without full.md", 1},
	} {
		if kind, n := skipKind(tt.reason); kind != tt.kind || n != tt.n {
			t.Errorf("skipKind(%q) = %q, %d; want %q, %d", tt.reason, kind, n, tt.kind, tt.n)
		}
	}
}

// TestSessionsCoverageRealReaders: through the transcript readers, every
// line of every JSONL transcript a source lists is accounted for in status.
func TestSessionsCoverageRealReaders(t *testing.T) {
	var srcs []Source
	for _, src := range []transcript.Source{
		{Kind: transcript.ClaudeCode, Root: filepath.Join("..", "transcript", "testdata", "claude", "projects")},
		{Kind: transcript.Codex, Root: filepath.Join("..", "transcript", "testdata", "codex", "sessions")},
		{Kind: transcript.OpenClaw, Root: filepath.Join("..", "transcript", "testdata", "openclaw", "agents")},
	} {
		abs, err := filepath.Abs(src.Root)
		if err != nil {
			t.Fatal(err)
		}
		src.Root = abs
		srcs = append(srcs, TranscriptSource(src, transcript.Options{}))
	}
	s := openTestSessions(t, t.TempDir(), srcs...)
	mustSync(t, s)
	st, _ := s.Status(context.Background())
	for i, src := range srcs {
		paths, _, err := src.Discover(context.Background())
		if err != nil || len(paths) == 0 {
			t.Fatalf("%s: %d transcripts, %v", src.Kind(), len(paths), err)
		}
		lines := 0
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			lines += strings.Count(string(b), "\n")
		}
		c := st.Sources[i].Coverage
		if c.Lines != lines || !c.Balanced() || c.Indexed == 0 || c.Indexed > lines {
			t.Errorf("%s: coverage %+v, want %d lines read, balanced", src.Kind(), c, lines)
		}
		if st.Sources[i].Messages == 0 || st.Sources[i].Messages > c.Indexed {
			t.Errorf("%s: %d messages from %d indexed lines", src.Kind(), st.Sources[i].Messages, c.Indexed)
		}
	}
}

// TestSessionsList: every session, newest first, paged, filtered, each
// titled by its first user message.
func TestSessionsList(t *testing.T) {
	root := sessionFixture(t)
	writeLines(t, filepath.Join(root, "gamma", "s3.jsonl"), []lineMsg{
		msgAt("c1", "assistant", "Hello, how can I help?", 20),
		msgAt("c2", "user", "  Plan the\n\tmigration   "+strings.Repeat("of the very large ledger tables ", 10), 21),
	}, false)
	s := openTestSessions(t, t.TempDir(), lineSource{root})
	if _, err := s.List(context.Background(), ListQuery{}); !errors.Is(err, store.ErrIndexNotReady) {
		t.Errorf("list before sync: %v, want ErrIndexNotReady", err)
	}
	mustSync(t, s)
	os.Remove(filepath.Join(root, "beta", "s2.jsonl"))
	mustSync(t, s)
	list := func(q ListQuery) (ids []string, l Listing) {
		t.Helper()
		l, err := s.List(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range l.Sessions {
			ids = append(ids, x.SessionID)
		}
		return ids, l
	}
	ids, l := list(ListQuery{})
	if strings.Join(ids, ",") != "s3,s2,s1" || l.TotalCount != 3 || l.Page != 1 || l.PageSize != 10 {
		t.Fatalf("list = %v %+v", ids, l)
	}
	s1, s2, s3 := l.Sessions[2], l.Sessions[1], l.Sessions[0]
	if s1.Title != "What retry budget should the uploader use?" || s1.MessageCount != 3 || !s1.Started.Equal(day) || s1.Archived {
		t.Errorf("s1 %+v", s1)
	}
	if !s2.Archived || s2.ArchivedAt.IsZero() {
		t.Errorf("s2 %+v, want archived", s2)
	}
	if utf8.RuneCountInString(s3.Title) > maxTitleRunes || !strings.HasPrefix(s3.Title, "Plan the migration of the very large") || !strings.HasSuffix(s3.Title, "…") || strings.ContainsAny(s3.Title, "\n\t") {
		t.Errorf("s3 title %q", s3.Title)
	}
	yes, no := true, false
	for _, tt := range []struct {
		q    ListQuery
		want string
	}{
		{ListQuery{PageSize: 2}, "s3,s2"},
		{ListQuery{PageSize: 2, Page: 2}, "s1"},
		{ListQuery{PageSize: 2, Page: 3}, ""},
		{ListQuery{Project: "alpha"}, "s1"},
		{ListQuery{Agent: "codex"}, ""},
		{ListQuery{Archived: &yes}, "s2"},
		{ListQuery{Archived: &no}, "s3,s1"},
		{ListQuery{From: day.Add(10 * time.Minute)}, "s3,s2"},
		{ListQuery{To: day.Add(10 * time.Minute)}, "s2,s1"},
		{ListQuery{From: day.Add(2 * time.Minute), To: day.Add(2 * time.Minute)}, "s1"},
	} {
		if ids, _ := list(tt.q); strings.Join(ids, ",") != tt.want {
			t.Errorf("list %+v = %v, want %s", tt.q, ids, tt.want)
		}
	}
	for _, q := range []ListQuery{{Page: -1}, {PageSize: 201}, {From: day, To: day.Add(-time.Hour)}} {
		if _, err := s.List(context.Background(), q); err == nil {
			t.Errorf("list %+v: no error", q)
		}
	}
}

// TestSessionsOlderFormat: an index built before per-line coverage is read
// again whole, once, keeping its archived sessions.
func TestSessionsOlderFormat(t *testing.T) {
	root := sessionFixture(t)
	idx := t.TempDir()
	s := openTestSessions(t, idx, lineSource{root})
	mustSync(t, s)
	os.Remove(filepath.Join(root, "beta", "s2.jsonl"))
	mustSync(t, s)
	if err := s.st.setMeta(map[string]string{metaSessionsFormat: ""}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openTestSessions(t, idx, lineSource{root})
	rep := mustSync(t, s)
	if !rep.Full || !strings.Contains(rep.Rebuilt, "coverage") || rep.Added != 1 {
		t.Errorf("older format: %+v, want a full re-read of the one transcript", rep)
	}
	if v := view(t, s, "s2"); !v.Archived || v.MessageCount != 2 {
		t.Errorf("the archived session after the re-read: %+v", v)
	}
	if rep := mustSync(t, s); rep.Full {
		t.Errorf("second sync: %+v, want incremental", rep)
	}
}

// TestSessionsFullRebuildKeepsArchivedFirst: a full rebuild indexes the
// archived sessions again from the store under their own numbers, and the
// transcripts read after them take numbers past theirs — the archived
// session with the lowest number is not overwritten by the first live one.
func TestSessionsFullRebuildKeepsArchivedFirst(t *testing.T) {
	root := sessionFixture(t)
	s := openTestSessions(t, t.TempDir(), lineSource{root})
	mustSync(t, s)
	if err := os.Remove(filepath.Join(root, "alpha", "s1.jsonl")); err != nil { // the first read: number 1
		t.Fatal(err)
	}
	mustSync(t, s)
	if _, err := s.Sync(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	if v := view(t, s, "s1"); !v.Archived || msgIDs(v) != "a1,a2,a3" {
		t.Errorf("archived s1 after a full rebuild: %+v", v)
	}
	if v := view(t, s, "s2"); v.Archived || msgIDs(v) != "b1,b2" {
		t.Errorf("live s2 after a full rebuild: %+v", v)
	}
	if st, _ := s.Status(context.Background()); st.Sessions != 2 || st.Archived != 1 || st.Messages != 5 {
		t.Errorf("status %+v, want 2 sessions, 1 archived, 5 messages", st)
	}
}

// failingSource is lineSource whose reads of files named bad*.jsonl fail.
type failingSource struct{ lineSource }

func (f failingSource) Read(ctx context.Context, path string, cursor []byte, h TranscriptHandler) (TranscriptRead, error) {
	if strings.HasPrefix(filepath.Base(path), "bad") {
		return TranscriptRead{}, errors.New("read refused (test)")
	}
	return f.lineSource.Read(ctx, path, cursor, h)
}

// TestSessionsSyncPathsKeepsSkips: a batch of the watcher that lists a
// source again (a new folder) keeps in status the read failures of the
// transcripts it did not read again, and names its own.
func TestSessionsSyncPathsKeepsSkips(t *testing.T) {
	root := sessionFixture(t)
	bad := filepath.Join(root, "alpha", "bad.jsonl")
	writeLines(t, bad, []lineMsg{msgAt("x1", "user", "unreadable", 0)}, false)
	s := openTestSessions(t, t.TempDir(), failingSource{lineSource{root}})
	mustSync(t, s)
	reasons := func() map[string]string {
		st, _ := s.Status(context.Background())
		out := map[string]string{}
		for _, k := range st.Sources[0].Skipped {
			out[k.Path] = k.Reason
		}
		return out
	}
	if r := reasons(); !strings.Contains(r[bad], "read refused") {
		t.Fatalf("after the sync: skips %v", r)
	}
	bad2 := filepath.Join(root, "gamma", "bad2.jsonl")
	writeLines(t, filepath.Join(root, "gamma", "s3.jsonl"), []lineMsg{msgAt("g1", "user", "durian", 0)}, false)
	writeLines(t, bad2, []lineMsg{msgAt("y1", "user", "unreadable", 0)}, false)
	if _, err := s.SyncPaths(context.Background(), []string{filepath.Join(root, "gamma")}); err != nil {
		t.Fatal(err)
	}
	if r := reasons(); !strings.Contains(r[bad], "read refused") || !strings.Contains(r[bad2], "read refused") || len(r) != 2 {
		t.Errorf("after a new folder: skips %v, want both unreadable files", r)
	}
}
