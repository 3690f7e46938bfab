package sessions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"mnemo/engine/rank"
)

// longMsgs is n messages m<from>… whose texts name them, user and
// assistant in turn.
func longMsgs(prefix string, from, n int) []lineMsg {
	var out []lineMsg
	for k := from; k < from+n; k++ {
		role := "user"
		if k%2 == 1 {
			role = "assistant"
		}
		out = append(out, msgAt(fmt.Sprintf("%s%d", prefix, k), role, fmt.Sprintf("the walrus counts %s item%03d", prefix, k), k))
	}
	return out
}

// indexed is what an index holds of its one session: the messages in
// order, as GetSession gives them, with the counts status and the
// full-text index give.
type indexed struct {
	Messages []Message
	Status   int // status's message count
	Vectors  int
	Docs     uint64 // full-text documents
	Coverage any
}

func indexedOf(t *testing.T, s *Corpus, id string) indexed {
	t.Helper()
	v := view(t, s, id)
	st, err := s.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Unfinished != "" || st.Indexing {
		t.Errorf("after a completed sync: status says unfinished %q, indexing %v", st.Unfinished, st.Indexing)
	}
	n, err := s.ft.DocCount()
	if err != nil {
		t.Fatal(err)
	}
	return indexed{Messages: v.Messages, Status: st.Messages, Vectors: st.Vectors, Docs: n, Coverage: st.Coverage}
}

// TestSessionsLongSessionInSlices: a transcript with more messages than a
// batch holds is committed in slices (after a short one read before it,
// whole), and the index holds exactly what it holds when read in one batch
// — new, grown and rewritten.
func TestSessionsLongSessionInSlices(t *testing.T) {
	root := filepath.Join(t.TempDir(), "t")
	path := filepath.Join(root, "long.jsonl")
	writeLines(t, filepath.Join(root, "a.jsonl"), longMsgs("a", 0, 2), false)
	sliced, whole := t.TempDir(), t.TempDir()
	steps := []struct {
		name    string
		write   func()
		want    int
		reports func(Report) bool
	}{
		{"new", func() { writeLines(t, path, longMsgs("m", 0, 10), false) }, 10, func(r Report) bool { return r.Added == 2 && r.Messages == 12 }},
		{"grown", func() { writeLines(t, path, longMsgs("m", 10, 7), true) }, 17, func(r Report) bool { return r.Updated == 1 && r.Messages == 7 }},
		{"rewritten", func() { writeLines(t, path, longMsgs("r", 0, 8), false) }, 8, func(r Report) bool { return r.Reset == 1 && r.Messages == 8 }},
	}
	for _, st := range steps {
		st.write()
		var got [2]indexed
		for i, dir := range []string{sliced, whole} {
			s := openTestSessions(t, dir, lineSource{root})
			if dir == sliced {
				s.batchMsgs = 3
			}
			rep := mustSync(t, s)
			if !st.reports(rep) {
				t.Errorf("%s: report %+v", st.name, rep)
			}
			got[i] = indexedOf(t, s, "long")
			s.Close()
		}
		if len(got[0].Messages) != st.want || got[0].Status != st.want+2 || got[0].Docs != uint64(st.want+2) {
			t.Errorf("%s: %d messages shown, %d in status, %d documents; want %d, and 2 more of the short session", st.name, len(got[0].Messages), got[0].Status, got[0].Docs, st.want)
		}
		if !reflect.DeepEqual(got[0], got[1]) {
			t.Errorf("%s: in slices the index holds\n%+v\nin one batch\n%+v", st.name, got[0], got[1])
		}
	}
}

// TestSessionsLongSessionCutBetweenSlices: a sync stopped after the first
// slice of a long transcript leaves part of it indexed and the index
// marked unfinished; the next sync completes it with nothing lost or
// doubled — for a new session, a grown one and a rewritten one.
func TestSessionsLongSessionCutBetweenSlices(t *testing.T) {
	for _, c := range []struct {
		name         string
		before, then func(path string)
		after        func(path string) // between the cut and the next sync
	}{
		{"new", func(string) {}, func(p string) { writeLines(t, p, longMsgs("m", 0, 10), false) }, nil},
		{"grown", func(p string) { writeLines(t, p, longMsgs("m", 0, 2), false) }, func(p string) { writeLines(t, p, longMsgs("m", 2, 10), true) }, nil},
		{"rewritten", func(p string) { writeLines(t, p, longMsgs("m", 0, 13), false) }, func(p string) { writeLines(t, p, longMsgs("r", 0, 10), false) }, nil},
		{"rewritten again", func(p string) { writeLines(t, p, longMsgs("m", 0, 13), false) }, func(p string) { writeLines(t, p, longMsgs("r", 0, 10), false) },
			func(p string) { writeLines(t, p, longMsgs("s", 0, 2), false) }},
		{"grown again", func(p string) { writeLines(t, p, longMsgs("m", 0, 2), false) }, func(p string) { writeLines(t, p, longMsgs("m", 2, 10), true) },
			func(p string) { writeLines(t, p, longMsgs("m", 12, 4), true) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "t")
			path := filepath.Join(root, "long.jsonl")
			other := filepath.Join(root, "other.jsonl")
			writeLines(t, other, longMsgs("o", 0, 2), false)
			cut, ref := t.TempDir(), t.TempDir()
			c.before(path)
			for _, dir := range []string{cut, ref} {
				s := openTestSessions(t, dir, lineSource{root})
				mustSync(t, s)
				s.Close()
			}
			c.then(path)

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			calls := 0
			s, err := Open(context.Background(), Config{IndexDir: cut, Sources: []Source{lineSource{root}},
				Progress: func(done, total int) {
					if calls++; calls == 2 {
						cancel() // the kill, once the first slice is committed
					}
				}})
			if err != nil {
				t.Fatal(err)
			}
			s.batchMsgs = 3
			if _, err := s.Sync(ctx, false); !errors.Is(err, context.Canceled) {
				t.Fatalf("interrupted sync: %v, want context.Canceled", err)
			}
			s.Close()

			ro, err := Open(context.Background(), Config{IndexDir: cut, Sources: []Source{lineSource{root}}, ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			st, _ := ro.Status(context.Background())
			part := view(t, ro, "long")
			ro.Close()
			if st.Unfinished == "" || !st.Indexing {
				t.Errorf("after the cut: status unfinished %q, indexing %v; want set, true", st.Unfinished, st.Indexing)
			}
			if n := len(part.Messages); n == 0 || n >= 10 {
				t.Errorf("after the cut: %d messages shown, want part of the transcript (is the test still cutting?)", n)
			}
			if c.after != nil {
				c.after(path)
			}

			w := openTestSessions(t, cut, lineSource{root})
			w.batchMsgs = 3
			if rep := mustSync(t, w); rep.Full {
				t.Errorf("the sync after the cut rebuilt the index (%s); want it to read on", rep.Rebuilt)
			}
			got := indexedOf(t, w, "long")
			w.Close()
			r := openTestSessions(t, ref, lineSource{root})
			mustSync(t, r)
			want := indexedOf(t, r, "long")
			r.Close()
			if !reflect.DeepEqual(got, want) {
				t.Errorf("completed after the cut, the index holds\n%+v\nread without a cut\n%+v", got, want)
			}
		})
	}
}

// TestSessionsLongSessionThroughTheWatcher: the watcher's path-wise sync
// commits a long append in slices too, and leaves no unfinished mark once
// it is done.
func TestSessionsLongSessionThroughTheWatcher(t *testing.T) {
	root := filepath.Join(t.TempDir(), "t")
	path := filepath.Join(root, "long.jsonl")
	writeLines(t, path, longMsgs("m", 0, 2), false)
	s := openTestSessions(t, t.TempDir(), lineSource{root})
	s.batchMsgs = 3
	mustSync(t, s)
	writeLines(t, path, longMsgs("m", 2, 10), true)
	rep, err := s.SyncPaths(context.Background(), []string{path})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Messages != 10 || rep.Updated != 1 {
		t.Errorf("report %+v, want 10 messages, 1 session updated", rep)
	}
	got := indexedOf(t, s, "long")
	for k, m := range got.Messages {
		if want := fmt.Sprintf("m%d", k); m.MessageID != want {
			t.Fatalf("message %d is %s, want %s", k, m.MessageID, want)
		}
	}
	if len(got.Messages) != 12 || got.Docs != 12 {
		t.Errorf("%d messages shown, %d documents; want 12", len(got.Messages), got.Docs)
	}
}

// brokenMidRead is a lineSource whose reads fail after some messages, as a
// disk that goes away mid-read.
type brokenMidRead struct {
	lineSource
	after int
}

func (f brokenMidRead) Read(ctx context.Context, path string, cursor []byte, h TranscriptHandler) (TranscriptRead, error) {
	n := 0
	next := h.Message
	h.Message = func(m TranscriptMessage) error {
		if n++; n > f.after {
			return errors.New("input/output error")
		}
		return next(m)
	}
	return f.lineSource.Read(ctx, path, cursor, h)
}

// TestSessionsLongSessionUnreadableAfterASlice: a transcript that fails to
// read after its first slice is committed is reported skipped, and the
// index stays marked unfinished until a sync reads it to its end.
func TestSessionsLongSessionUnreadableAfterASlice(t *testing.T) {
	root := filepath.Join(t.TempDir(), "t")
	writeLines(t, filepath.Join(root, "long.jsonl"), longMsgs("m", 0, 10), false)
	idx := t.TempDir()
	s := openTestSessions(t, idx, brokenMidRead{lineSource{root}, 4})
	s.batchMsgs = 3
	rep := mustSync(t, s)
	st, _ := s.Status(context.Background())
	s.Close()
	if len(rep.Skipped) != 1 || st.Unfinished == "" || !st.Indexing {
		t.Errorf("after a read that failed past its first slice: skipped %+v, status unfinished %q, indexing %v; want it skipped, set, true",
			rep.Skipped, st.Unfinished, st.Indexing)
	}
	w := openTestSessions(t, idx, lineSource{root})
	w.batchMsgs = 3
	mustSync(t, w)
	got := indexedOf(t, w, "long")
	if len(got.Messages) != 10 || got.Docs != 10 || got.Status != 10 {
		t.Errorf("read again: %d messages shown, %d documents, %d in status; want 10", len(got.Messages), got.Docs, got.Status)
	}
}

// TestSessionsLongArchivedSessionRebuilt: a full rebuild indexes a long
// archived session again from the store in slices, whole and in order.
func TestSessionsLongArchivedSessionRebuilt(t *testing.T) {
	root := filepath.Join(t.TempDir(), "t")
	path := filepath.Join(root, "long.jsonl")
	writeLines(t, path, longMsgs("m", 0, 10), false)
	writeLines(t, filepath.Join(root, "a.jsonl"), longMsgs("a", 0, 2), false)
	s := openTestSessions(t, t.TempDir(), lineSource{root})
	mustSync(t, s)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if rep := mustSync(t, s); rep.Archived != 1 {
		t.Fatalf("report %+v, want the long session archived", rep)
	}
	want := indexedOf(t, s, "long")
	s.batchMsgs = 3
	if _, err := s.Sync(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	if got := indexedOf(t, s, "long"); !reflect.DeepEqual(got, want) {
		t.Errorf("rebuilt in slices, the index holds\n%+v\nbefore\n%+v", got, want)
	}
	if p := search(t, s, Query{Text: "item007", Mode: rank.FullText}); p.TotalSessions != 1 {
		t.Errorf("the archived session's message 7: %d sessions found, want 1", p.TotalSessions)
	}
}
