package sessions

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"mnemo/engine/fulltext"
	"mnemo/engine/rank"
	"mnemo/engine/store"
	"mnemo/engine/transcript"
)

// lineSource is a test-only transcript format: one JSON message per line,
// {"id","role","text","ts"}, in files named *.jsonl under its root; the
// cursor is the byte offset read so far. A file shorter than its cursor
// was rewritten: Reset, then everything again.
type lineSource struct{ root string }

func (l lineSource) Kind() string { return "test" }
func (l lineSource) Root() string { return l.root }
func (l lineSource) Owns(p string) bool {
	return strings.HasSuffix(p, ".jsonl") && strings.HasPrefix(p, l.root+string(filepath.Separator))
}

func (l lineSource) Discover(ctx context.Context) ([]string, []store.Skip, error) {
	var out []string
	var skips []store.Skip
	err := filepath.WalkDir(l.root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			if l.Owns(p) {
				out = append(out, p)
			} else {
				skips = append(skips, store.Skip{Path: p, Reason: "not a transcript"})
			}
		}
		return nil
	})
	return out, skips, err
}

type lineMsg struct {
	ID, Role, Text string
	TS             time.Time
}

func (l lineSource) Read(ctx context.Context, path string, cursor []byte, h TranscriptHandler) (TranscriptRead, error) {
	f, err := os.Open(path)
	if err != nil {
		return TranscriptRead{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return TranscriptRead{}, err
	}
	off, _ := strconv.ParseInt(string(cursor), 10, 64)
	if fi.Size() < off {
		if err := h.Reset(); err != nil {
			return TranscriptRead{}, err
		}
		off = 0
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return TranscriptRead{}, err
	}
	res := TranscriptRead{Session: Info{ID: strings.TrimSuffix(filepath.Base(path), ".jsonl"), Agent: "test", Project: filepath.Dir(path)}}
	res.Coverage.Whole = off == 0
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			off += int64(len(line))
			var m lineMsg
			if json.Unmarshal(line, &m) != nil {
				res.Malformed++
				res.Coverage.Count(transcript.Malformed)
				continue
			}
			if strings.HasPrefix(m.Role, "meta-") {
				res.Coverage.Count(transcript.Meta)
			} else {
				res.Coverage.CountIndexed()
			}
			switch m.Role {
			case "meta-id": // the session names itself
				res.Session.ID = m.Text
				continue
			case "meta-summary":
				res.Session.Summary = m.Text
				continue
			case "meta-project": // a Gemini-style session known by its project's hash
				sum := sha256.Sum256([]byte(m.Text))
				res.Session.ProjectHash = hex.EncodeToString(sum[:])
				res.Session.Project = res.Session.ProjectHash
				continue
			}
			if err := h.Message(TranscriptMessage{ID: m.ID, Role: m.Role, Timestamp: m.TS, Text: m.Text}); err != nil {
				return res, err
			}
		}
		if err != nil {
			break
		}
	}
	res.Cursor = []byte(strconv.FormatInt(off, 10))
	return res, nil
}

func writeLines(t *testing.T, path string, msgs []lineMsg, appendTo bool) {
	t.Helper()
	flag := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if appendTo {
		flag = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		b, _ := json.Marshal(m)
		f.Write(append(b, '\n'))
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

var day = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)

func msgAt(id, role, text string, k int) lineMsg {
	return lineMsg{ID: id, Role: role, Text: text, TS: day.Add(time.Duration(k) * time.Minute)}
}

func openTestSessions(t *testing.T, idx string, srcs ...Source) *Corpus {
	t.Helper()
	s, err := Open(context.Background(), Config{IndexDir: idx, Sources: srcs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// plantDoc indexes a document of the given body as Bleve maps it, outside
// any sync: what a crash part-way through a batch leaves.
func plantDoc(ft *fulltext.Index, id, body string) error {
	b := ft.NewBatch()
	if err := b.Index(id, fulltext.MappedDoc("", body)); err != nil {
		return err
	}
	return ft.Batch(b)
}

func mustSync(t *testing.T, s *Corpus) Report {
	t.Helper()
	rep, err := s.Sync(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func search(t *testing.T, s *Corpus, q Query) Page {
	t.Helper()
	p, err := s.Search(context.Background(), q)
	if err != nil {
		t.Fatalf("search %+v: %v", q, err)
	}
	return p
}

// hitIDs lists "session/message" of every hit, in page order.
func hitIDs(p Page) []string {
	var out []string
	for _, s := range p.Sessions {
		for _, h := range s.Hits {
			out = append(out, s.SessionID+"/"+h.MessageID)
		}
	}
	return out
}

func sessionFixture(t *testing.T) (root string) {
	root = filepath.Join(t.TempDir(), "transcripts")
	writeLines(t, filepath.Join(root, "alpha", "s1.jsonl"), []lineMsg{
		msgAt("a1", "user", "What retry budget should the uploader use?", 0),
		msgAt("a2", "assistant", "We decided the retry budget is five attempts with exponential backoff.", 1),
		msgAt("a3", "user", "And the timeout for each attempt?", 2),
	}, false)
	writeLines(t, filepath.Join(root, "beta", "s2.jsonl"), []lineMsg{
		msgAt("b1", "user", "Let us pick a database for the ledger.", 10),
		msgAt("b2", "assistant", "Postgres, because the ledger needs transactions.", 11),
	}, false)
	return root
}

func TestSessionsSearch(t *testing.T) {
	root := sessionFixture(t)
	s := openTestSessions(t, t.TempDir(), lineSource{root})
	rep := mustSync(t, s)
	if rep.Added != 2 || rep.Messages != 5 {
		t.Fatalf("report %+v, want 2 sessions and 5 messages added", rep)
	}
	tests := []struct {
		name string
		q    Query
		want []string // hit ids, in order
	}{
		{"fulltext", Query{Text: "retry budget", Mode: rank.FullText}, []string{"s1/a1", "s1/a2"}},
		{"hybrid finds the same first", Query{Text: "retry budget", MaxHits: 1}, []string{"s1/a1"}},
		{"role filter", Query{Text: "retry budget", Mode: rank.FullText, Role: "user"}, []string{"s1/a1"}},
		{"project filter", Query{Text: "ledger", Mode: rank.FullText, Project: "beta"}, []string{"s2/b2", "s2/b1"}},
		{"project excludes", Query{Text: "ledger", Mode: rank.FullText, Project: "alpha"}, nil},
		{"session filter", Query{Text: "ledger retry", Mode: rank.FullText, SessionID: "s1"}, []string{"s1/a1", "s1/a2"}},
		{"date filter", Query{Text: "ledger retry", Mode: rank.FullText, From: day.Add(5 * time.Minute)}, []string{"s2/b2", "s2/b1"}},
		{"agent filter", Query{Text: "ledger", Mode: rank.FullText, Agent: "codex"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := hitIDs(search(t, s, tt.q))
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("hits %v, want %v", got, tt.want)
			}
		})
	}
	p := search(t, s, Query{Text: "retry budget", Mode: rank.FullText})
	h := p.Sessions[0].Hits[0]
	if !strings.Contains(h.Excerpt, "**retry** **budget**") || h.MatchCount != 2 || h.Score != 1 || p.Sessions[0].Score != 1 {
		t.Errorf("best hit %+v, want score 1, 2 matches and bold terms", h)
	}
	if p.Sessions[0].MessageCount != 3 || p.Sessions[0].SourceAgent != "test" || !p.Sessions[0].Started.Equal(day) {
		t.Errorf("session %+v", p.Sessions[0])
	}
}

func TestSessionsSearchErrors(t *testing.T) {
	s := openTestSessions(t, t.TempDir(), lineSource{sessionFixture(t)})
	if _, err := s.Search(context.Background(), Query{Text: "retry"}); !errors.Is(err, store.ErrIndexNotReady) {
		t.Errorf("search before sync: %v, want ErrIndexNotReady", err)
	}
	mustSync(t, s)
	for _, tt := range []struct {
		q    Query
		want error
	}{
		{Query{Text: "  "}, rank.ErrEmptyQuery},
		{Query{Text: "the of and"}, rank.ErrNoTerms},
		{Query{Text: "x", Mode: "fuzzy"}, rank.ErrBadMode},
		{Query{Text: "x", Role: "system"}, ErrBadRole},
		{Query{Text: "x", Limit: 201}, ErrBadLimit},
		{Query{Text: "x", MaxHits: 21}, ErrBadMaxHits},
		{Query{Text: "x", From: day, To: day.Add(-time.Hour)}, rank.ErrBadRange},
	} {
		if _, err := s.Search(context.Background(), tt.q); !errors.Is(err, tt.want) {
			t.Errorf("%+v: %v, want %v", tt.q, err, tt.want)
		}
	}
}

func TestSessionsShow(t *testing.T) {
	s := openTestSessions(t, t.TempDir(), lineSource{sessionFixture(t)})
	mustSync(t, s)
	v, err := s.GetSession(context.Background(), "s1", 1, 5)
	if err != nil {
		t.Fatal(err)
	}
	if v.MessageCount != 3 || len(v.Messages) != 2 || v.Messages[0].MessageID != "a2" || v.Offset != 1 {
		t.Errorf("GetSession(s1, 1, 5) = %+v", v)
	}
	v, err = s.GetMessage(context.Background(), "s1", "a2", 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Messages) != 3 || v.Focus != 1 || v.Messages[1].Text != "We decided the retry budget is five attempts with exponential backoff." {
		t.Errorf("GetMessage(s1, a2, 1) = %+v", v)
	}
	if _, err := s.GetSession(context.Background(), "nope", 0, 0); !errors.Is(err, ErrNoSession) {
		t.Errorf("unknown session: %v", err)
	}
	if _, err := s.GetMessage(context.Background(), "s1", "zz", 0); !errors.Is(err, ErrNoMessage) {
		t.Errorf("unknown message: %v", err)
	}
}

// TestSessionsIncremental: appended lines are read from the cursor, a
// rewritten transcript is re-read whole, a deleted one leaves the index,
// and a reopened index holds what was committed.
func TestSessionsIncremental(t *testing.T) {
	root := sessionFixture(t)
	idx := t.TempDir()
	s := openTestSessions(t, idx, lineSource{root})
	mustSync(t, s)
	p1 := filepath.Join(root, "alpha", "s1.jsonl")
	writeLines(t, p1, []lineMsg{msgAt("a4", "assistant", "Thirty seconds per attempt, then give up on the kumquat.", 3)}, true)
	rep := mustSync(t, s)
	if rep.Updated != 1 || rep.Messages != 1 || rep.Unchanged != 1 {
		t.Errorf("append: %+v, want one session updated with one message", rep)
	}
	if got := hitIDs(search(t, s, Query{Text: "kumquat", Mode: rank.FullText})); strings.Join(got, ",") != "s1/a4" {
		t.Errorf("appended message: hits %v", got)
	}
	// Rewrite shorter: the whole session is read again, the old text goes.
	writeLines(t, p1, []lineMsg{msgAt("r1", "user", "A quince instead.", 0)}, false)
	rep = mustSync(t, s)
	if rep.Reset != 1 {
		t.Errorf("rewrite: %+v, want one reset", rep)
	}
	if got := hitIDs(search(t, s, Query{Text: "kumquat retry", Mode: rank.FullText})); len(got) != 0 {
		t.Errorf("after rewrite, old text still found: %v", got)
	}
	if got := hitIDs(search(t, s, Query{Text: "quince", Mode: rank.FullText})); strings.Join(got, ",") != "s1/r1" {
		t.Errorf("rewritten message: hits %v", got)
	}
	if err := os.Remove(filepath.Join(root, "beta", "s2.jsonl")); err != nil {
		t.Fatal(err)
	}
	rep = mustSync(t, s)
	if rep.Archived != 1 || rep.Removed != 0 {
		t.Errorf("delete: %+v, want one archived", rep)
	}
	if got := hitIDs(search(t, s, Query{Text: "ledger quince", Mode: rank.FullText})); strings.Join(got, ",") != "s1/r1,s2/b2,s2/b1" {
		t.Errorf("after delete: hits %v, want the archived s2 and s1", got)
	}
	s.Close()
	s = openTestSessions(t, idx, lineSource{root})
	if s.needFull != "" {
		t.Fatalf("reopen wants a rebuild: %s", s.needFull)
	}
	st, _ := s.Status(context.Background())
	if st.Sessions != 2 || st.Archived != 1 || st.Messages != 3 || st.Vectors != 3 {
		t.Errorf("reopened status %+v, want 2 sessions (1 archived), 3 messages, 3 vectors", st)
	}
	if got := hitIDs(search(t, s, Query{Text: "quince"})); strings.Join(got, ",") != "s1/r1" {
		t.Errorf("after reopen: hits %v", got)
	}
}

// TestSessionsPendingRepair: a batch interrupted after Bleve was written but
// before the state store committed is undone at open, and the next sync
// indexes the session again, once.
func TestSessionsPendingRepair(t *testing.T) {
	root := sessionFixture(t)
	idx := t.TempDir()
	s := openTestSessions(t, idx, lineSource{root})
	mustSync(t, s)
	// Simulate the crash: mark s1's session pending and index a stray document.
	var sid uint32
	for _, ss := range s.sessions {
		if ss.ID == "s1" {
			sid = ss.SID
		}
	}
	if err := s.st.markPending(map[uint32]uint32{sid: 5}); err != nil {
		t.Fatal(err)
	}
	if err := plantDoc(s.ft, docID(sid, 4), "ghost zebra"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openTestSessions(t, idx, lineSource{root})
	if n, _ := s.ft.DocCount(); n != 5 {
		t.Errorf("after repair Bleve holds %d documents, want the store's 5", n)
	}
	if got := hitIDs(search(t, s, Query{Text: "zebra", Mode: rank.FullText})); len(got) != 0 {
		t.Errorf("after repair the stray document is found: %v", got)
	}
	mustSync(t, s)
	if got := hitIDs(search(t, s, Query{Text: "zebra retry", Mode: rank.FullText})); strings.Join(got, ",") != "s1/a1,s1/a2" {
		t.Errorf("after repair and sync: hits %v", got)
	}
}

func TestSessionsSourceRemoved(t *testing.T) {
	root := sessionFixture(t)
	idx := t.TempDir()
	s := openTestSessions(t, idx, lineSource{root})
	mustSync(t, s)
	s.Close()
	other := filepath.Join(t.TempDir(), "other")
	writeLines(t, filepath.Join(other, "o.jsonl"), []lineMsg{msgAt("o1", "user", "papaya", 0)}, false)
	s = openTestSessions(t, idx, lineSource{other})
	rep := mustSync(t, s)
	if rep.Archived != 2 || rep.Added != 1 {
		t.Errorf("sources replaced: %+v, want 2 archived and 1 added", rep)
	}
	st, _ := s.Status(context.Background())
	if len(st.Sources) != 1 || st.Sources[0].Sessions != 1 || st.Sessions != 3 || st.Archived != 2 ||
		len(st.Other) != 1 || st.Other[0].Sessions != 2 || st.Other[0].Archived != 2 {
		t.Errorf("status %+v", st)
	}
	// Mirroring, they leave the index.
	s.Close()
	m, err := Open(context.Background(), Config{IndexDir: idx, Sources: []Source{lineSource{other}}, MirrorDeleted: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if rep := mustSync(t, m); rep.Removed != 2 {
		t.Errorf("mirroring: %+v, want the 2 archived removed", rep)
	}
	if st, _ := m.Status(context.Background()); st.Sessions != 1 || st.Archived != 0 {
		t.Errorf("mirroring: status %+v", st)
	}
}

// TestSessionsSummary: a session's summary is searchable, and replaced
// when it changes.
func TestSessionsSummary(t *testing.T) {
	root := sessionFixture(t)
	p := filepath.Join(root, "alpha", "s1.jsonl")
	writeLines(t, p, []lineMsg{{Role: "meta-summary", Text: "Chose a persimmon-shaped retry policy"}}, true)
	s := openTestSessions(t, t.TempDir(), lineSource{root})
	mustSync(t, s)
	if got := hitIDs(search(t, s, Query{Text: "persimmon", Mode: rank.FullText})); strings.Join(got, ",") != "s1/summary" {
		t.Errorf("summary: hits %v", got)
	}
	if got := hitIDs(search(t, s, Query{Text: "persimmon", Mode: rank.FullText, Role: "user"})); len(got) != 0 {
		t.Errorf("a role filter admits the summary: %v", got)
	}
	writeLines(t, p, []lineMsg{{Role: "meta-summary", Text: "Chose a guava retry policy"}}, true)
	mustSync(t, s)
	if got := hitIDs(search(t, s, Query{Text: "persimmon guava", Mode: rank.FullText})); strings.Join(got, ",") != "s1/summary" {
		t.Errorf("changed summary: hits %v", got)
	}
	v, err := s.GetMessage(context.Background(), "s1", "summary", 0)
	if err != nil || len(v.Messages) != 1 || v.Messages[0].Text != "Chose a guava retry policy" || v.Messages[0].Role != RoleSummary {
		t.Errorf("GetMessage(summary) = %+v, %v", v, err)
	}
}

// TestSessionsProjectHash: a full-path project filter also matches a
// session that knows its project only by the path's SHA-256 (Gemini).
func TestSessionsProjectHash(t *testing.T) {
	root := sessionFixture(t)
	writeLines(t, filepath.Join(root, "hashed", "g1.jsonl"), []lineMsg{
		{Role: "meta-project", Text: "/home/dev/orchard"},
		msgAt("h1", "user", "When do we prune the apricot trees?", 0),
	}, false)
	s := openTestSessions(t, t.TempDir(), lineSource{root})
	mustSync(t, s)
	for _, tt := range []struct {
		project string
		want    string
	}{
		{"/home/dev/orchard", "g1/h1"},
		{"/home/dev/orch", ""}, // a substring cannot match a hash
		{"/home/dev/ledger", ""},
	} {
		got := strings.Join(hitIDs(search(t, s, Query{Text: "apricot", Mode: rank.FullText, Project: tt.project})), ",")
		if got != tt.want {
			t.Errorf("project %q: hits %q, want %q", tt.project, got, tt.want)
		}
	}
}

// TestSessionsCorruptState: a state store bbolt cannot read is set aside
// and the index rebuilt from the transcripts.
func TestSessionsCorruptState(t *testing.T) {
	root := sessionFixture(t)
	idx := t.TempDir()
	s := openTestSessions(t, idx, lineSource{root})
	mustSync(t, s)
	s.Close()
	if err := os.WriteFile(filepath.Join(idx, "sessions", "state.db"), []byte("not a bbolt file, not at all, but long enough to be read"), 0o600); err != nil {
		t.Fatal(err)
	}
	s = openTestSessions(t, idx, lineSource{root})
	rep := mustSync(t, s)
	if !rep.Full || !strings.Contains(rep.Rebuilt, "set aside") || rep.Added != 2 {
		t.Errorf("after corruption: %+v, want a full rebuild of 2 sessions", rep)
	}
	if got := hitIDs(search(t, s, Query{Text: "ledger", Mode: rank.FullText})); len(got) != 2 {
		t.Errorf("after rebuild: hits %v", got)
	}
	aside, _ := filepath.Glob(filepath.Join(idx, "sessions", "state.db.corrupt-*"))
	if len(aside) != 1 {
		t.Errorf("damaged store not kept aside: %v", aside)
	}
}

func TestSessionsSyncPaths(t *testing.T) {
	root := sessionFixture(t)
	s := openTestSessions(t, t.TempDir(), lineSource{root})
	mustSync(t, s)
	p := filepath.Join(root, "gamma", "new", "s3.jsonl")
	writeLines(t, p, []lineMsg{msgAt("g1", "user", "durian season", 0)}, false)
	if _, err := s.SyncPaths(context.Background(), []string{filepath.Join(root, "gamma")}); err != nil {
		t.Fatal(err)
	}
	if got := hitIDs(search(t, s, Query{Text: "durian", Mode: rank.FullText})); strings.Join(got, ",") != "s3/g1" {
		t.Errorf("new folder: hits %v", got)
	}
	os.RemoveAll(filepath.Join(root, "gamma"))
	if _, err := s.SyncPaths(context.Background(), []string{p}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Search(context.Background(), Query{Text: "durian", Mode: rank.FullText}); err != nil {
		t.Fatal(err)
	}
	if p := search(t, s, Query{Text: "durian", Mode: rank.FullText}); len(p.Sessions) != 1 || !p.Sessions[0].Archived {
		t.Errorf("deleted transcript: %+v, want its session, archived", p.Sessions)
	}

}

// TestSessionsManyTextMatches: past maxTextCandidates only the best text
// matches go on to fusion, and totalSessions still counts every session
// with a match.
func TestSessionsManyTextMatches(t *testing.T) {
	root := filepath.Join(t.TempDir(), "t")
	for i, name := range []string{"x1", "x2", "x3"} {
		var ms []lineMsg
		for k := range 800 {
			text := fmt.Sprintf("note %d about the orchard and its apple harvest", k)
			if name == "x2" && k == 7 {
				text = "apple apple apple"
			}
			ms = append(ms, msgAt(fmt.Sprintf("%s-%d", name, k), "user", text, i*1000+k))
		}
		writeLines(t, filepath.Join(root, name+".jsonl"), ms, false)
	}
	s := openTestSessions(t, t.TempDir(), lineSource{root})
	mustSync(t, s)
	for _, mode := range []rank.Mode{rank.FullText, rank.Hybrid} {
		p := search(t, s, Query{Text: "apple", Mode: mode, Limit: 2, MaxHits: 1})
		if p.TotalSessions != 3 || len(p.Sessions) != 2 || p.Sessions[0].Hits[0].MessageID != "x2-7" {
			t.Errorf("%s: total %d, first %+v", mode, p.TotalSessions, p.Sessions[0])
		}
	}
}

// TestSessionsDamagedSegment: a damaged segment of the sessions full-text
// index is refused, as memory search refuses its own: read-only, text
// searches fail with ErrIndexDamaged and Status says why (semantic search
// still answers from the vectors); a writer's searches fail the same way
// until its next sync rebuilds, never answering "no results" from the empty
// index that replaced the damaged one.
func TestSessionsDamagedSegment(t *testing.T) {
	harms := []struct {
		name string
		harm func(path string, n int64) error
	}{
		{"garbage at 50%", func(p string, n int64) error {
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.WriteAt([]byte(strings.Repeat("\xde\xad\xbe\xef", 64)), n/2)
			return err
		}},
		{"truncated to half", func(p string, n int64) error { return os.Truncate(p, n/2) }},
	}
	for _, h := range harms {
		t.Run(h.name, func(t *testing.T) {
			root := sessionFixture(t)
			idx := t.TempDir()
			s, err := Open(context.Background(), Config{IndexDir: idx, Sources: []Source{lineSource{root}}})
			if err != nil {
				t.Fatal(err)
			}
			mustSync(t, s)
			s.Close()
			segs, err := fulltext.NewestSegments(filepath.Join(idx, sessionsDir, fulltext.Dir))
			if err != nil {
				t.Fatal(err)
			}
			if len(segs) == 0 {
				t.Fatal("no segment in the sessions index")
			}
			fi, err := os.Stat(segs[0])
			if err != nil {
				t.Fatal(err)
			}
			if err := h.harm(segs[0], fi.Size()); err != nil {
				t.Fatal(err)
			}

			ro, err := Open(context.Background(), Config{IndexDir: idx, Sources: []Source{lineSource{root}}, ReadOnly: true})
			if err != nil {
				if !errors.Is(err, store.ErrIndexDamaged) {
					t.Fatalf("read-only open: %v, want ErrIndexDamaged", err)
				}
			} else {
				for _, m := range []rank.Mode{rank.FullText, rank.Hybrid} {
					if p, err := ro.Search(context.Background(), Query{Text: "ledger", Mode: m}); !errors.Is(err, store.ErrIndexDamaged) {
						t.Errorf("read-only %s search: %d sessions, err %v; want ErrIndexDamaged", m, len(p.Sessions), err)
					}
				}
				if p, err := ro.Search(context.Background(), Query{Text: "database for the ledger", Mode: rank.Semantic}); err != nil || len(p.Sessions) == 0 {
					t.Errorf("read-only semantic search: %d sessions, %v; the vectors are not damaged", len(p.Sessions), err)
				}
				if st, _ := ro.Status(context.Background()); st.Damaged == "" {
					t.Error("read-only Status.Damaged is empty")
				}
				ro.Close()
			}

			w := openTestSessions(t, idx, lineSource{root})
			if st, _ := w.Status(context.Background()); st.Damaged == "" {
				t.Error("writer before its sync: Status.Damaged is empty")
			}
			if p, err := w.Search(context.Background(), Query{Text: "ledger", Mode: rank.FullText}); !errors.Is(err, store.ErrIndexDamaged) {
				t.Errorf("writer before its sync: %d sessions, err %v; want ErrIndexDamaged", len(p.Sessions), err)
			}
			rep := mustSync(t, w)
			if !rep.Full || rep.Rebuilt == "" {
				t.Errorf("sync: Full %v, Rebuilt %q; want a rebuild that says why", rep.Full, rep.Rebuilt)
			}
			if st, _ := w.Status(context.Background()); st.Damaged != "" {
				t.Errorf("after the rebuild: Damaged %q", st.Damaged)
			}
			if got := hitIDs(search(t, w, Query{Text: "ledger", Mode: rank.FullText})); len(got) != 2 {
				t.Errorf("after the rebuild: hits %v, want 2", got)
			}
		})
	}
}

// A corpus, read-only or a writer, loads its vectors on a semantic
// query's first need, once however many first queries race for them, and
// answers exactly as the corpus that synced them.
func TestSessionsLazyVectors(t *testing.T) {
	root, idx := sessionFixture(t), t.TempDir()
	w, err := Open(context.Background(), Config{IndexDir: idx, Sources: []Source{lineSource{root}}})
	if err != nil {
		t.Fatal(err)
	}
	mustSync(t, w)
	queries := []Query{
		{Text: "retry budget"},
		{Text: "ledger database", Mode: rank.Semantic},
		{Text: "retry attempts", Project: "alpha"},
		{Text: "transactions", Agent: "test", MaxHits: 1},
	}
	var want []Page
	for _, q := range queries {
		want = append(want, search(t, w, q))
	}
	wantStatus, err := w.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	for _, readOnly := range []bool{true, false} {
		t.Run(fmt.Sprintf("readOnly=%v", readOnly), func(t *testing.T) {
			checkLazyVectors(t, idx, root, readOnly, queries, want, wantStatus)
		})
	}
	t.Run("ahead", func(t *testing.T) { checkVectorsAhead(t, idx, queries, want, wantStatus) })
}

// checkVectorsAhead opens idx read-only and loads the vectors before any
// query (LoadVectors, as serve does): all of them load at once, no query
// loads them again, and the answers are the ones want.
func checkVectorsAhead(t *testing.T, idx string, queries []Query, want []Page, wantStatus Status) {
	ro, err := Open(context.Background(), Config{IndexDir: idx, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if n := ro.vecLoads.Load(); n != 0 {
		t.Fatalf("opened with %d loads, want none", n)
	}
	for range 2 { // the second is a no-op
		if err := ro.LoadVectors(); err != nil {
			t.Fatal(err)
		}
	}
	if n, v := ro.vecLoads.Load(), ro.vec.Len(); n != 1 || v != wantStatus.Vectors || !ro.vecReady.Load() {
		t.Fatalf("after LoadVectors: %d loads, %d vectors, ready %v; want 1, %d, true", n, v, ro.vecReady.Load(), wantStatus.Vectors)
	}
	for i, q := range queries {
		if got := search(t, ro, q); !reflect.DeepEqual(got, want[i]) {
			t.Errorf("query %+v after LoadVectors:\n%+v\nwant:\n%+v", q, got, want[i])
		}
	}
	if n := ro.vecLoads.Load(); n != 1 {
		t.Errorf("vectors loaded %d times, want once", n)
	}
}

// checkLazyVectors opens idx (read-only, or as a writer that syncs with
// nothing new) and checks that no vector is loaded before a query needs
// one, that racing first queries load them once, and that the answers
// and the status are the ones want.
func checkLazyVectors(t *testing.T, idx, root string, readOnly bool, queries []Query, want []Page, wantStatus Status) {
	ro, err := Open(context.Background(), Config{IndexDir: idx, Sources: []Source{lineSource{root}}, ReadOnly: readOnly})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if !readOnly {
		mustSync(t, ro)
	}
	search(t, ro, Query{Text: "retry budget", Mode: rank.FullText})
	if n := ro.vecLoads.Load(); n != 0 || ro.vec.Len() != 0 {
		t.Fatalf("after a full-text query: %d loads, %d vectors; want none", n, ro.vec.Len())
	}
	got := make([]Page, len(queries))
	errs := make([]error, len(queries))
	var wg sync.WaitGroup
	for i, q := range queries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = ro.Search(context.Background(), q)
		}()
	}
	wg.Wait()
	for i := range queries {
		if errs[i] != nil {
			t.Fatalf("query %+v: %v", queries[i], errs[i])
		}
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("query %+v after the lazy load:\n%+v\nbefore:\n%+v", queries[i], got[i], want[i])
		}
	}
	if n := ro.vecLoads.Load(); n != 1 {
		t.Errorf("vectors loaded %d times, want once", n)
	}
	st, err := ro.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Vectors != wantStatus.Vectors || st.Messages != wantStatus.Messages {
		t.Errorf("status: %d vectors, %d messages; want %d, %d", st.Vectors, st.Messages, wantStatus.Vectors, wantStatus.Messages)
	}
}

// TestSessionsTiesAtTheTextCut: when more messages than maxTextCandidates
// score the same, which of them go on to fusion does not depend on the
// order the full-text index handed them over in (a map's), so the same
// query on the same index answers the same page every time.
func TestSessionsTiesAtTheTextCut(t *testing.T) {
	root := filepath.Join(t.TempDir(), "t")
	for i, name := range []string{"y1", "y2", "y3"} {
		var ms []lineMsg
		for k := range 800 {
			ms = append(ms, msgAt(fmt.Sprintf("%s-%d", name, k), "user", "the apple orchard", i*1000+k))
		}
		writeLines(t, filepath.Join(root, name+".jsonl"), ms, false)
	}
	s := openTestSessions(t, t.TempDir(), lineSource{root})
	mustSync(t, s)
	for _, mode := range []rank.Mode{rank.FullText, rank.Hybrid} {
		q := Query{Text: "apple orchard", Mode: mode, Limit: 3, MaxHits: MaxHits}
		first := search(t, s, q)
		for range 8 {
			if p := search(t, s, q); !reflect.DeepEqual(p, first) {
				t.Fatalf("%s: two searches differ:\n%v\n%v", mode, hitIDs(first), hitIDs(p))
			}
		}
		// The newest messages tie-break first, as on the page.
		if got := first.Sessions[0].Hits[0].MessageID; got != "y3-799" {
			t.Errorf("%s: first hit %s, want y3-799", mode, got)
		}
	}
}

// TestSessionsDefaultRanking: a corpus opened without a Ranking weighs
// the semantic list at sessionsVectorWeight, not the memories' default;
// one given a Ranking keeps it.
func TestSessionsDefaultRanking(t *testing.T) {
	idx := t.TempDir()
	s := openTestSessions(t, idx, lineSource{t.TempDir()})
	if got := s.rank.VectorWeight; got != sessionsVectorWeight || got == rank.DefaultRanking().VectorWeight {
		t.Errorf("default vector weight %v, want %v (not the memories' %v)", got, sessionsVectorWeight, rank.DefaultRanking().VectorWeight)
	}
	s.Close()
	mine := rank.DefaultRanking()
	s, err := Open(context.Background(), Config{IndexDir: t.TempDir(), Ranking: &mine})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.rank != mine {
		t.Errorf("given ranking %+v, corpus uses %+v", mine, s.rank)
	}
}
