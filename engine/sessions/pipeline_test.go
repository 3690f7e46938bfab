package sessions

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"mnemo/engine/fulltext"
	"mnemo/engine/rank"
	"mnemo/engine/store"
	"mnemo/engine/transcript"
)

// mixedCorpus is a tree of three sources: test-format transcripts (short,
// long, with a summary, malformed), Claude Code transcripts (the real
// reader: tree, redaction; one long) and a claude.ai export (a container
// of several sessions, extracted into the scratch folder).
type mixedCorpus struct {
	lines, claude, export string
	long                  int // messages of the long test-format transcript
	claudeLong            int // and of the long Claude Code one
}

func newMixedCorpus(t *testing.T, long, claudeLong int) *mixedCorpus {
	// The redactor loads on first use, which would make the container's
	// first extraction long, and its next one not due for a while
	// (transcript's containerIndex.due): every sync must see the same.
	transcript.RedactorError()
	root := t.TempDir()
	return &mixedCorpus{lines: filepath.Join(root, "lines"), claude: filepath.Join(root, "claude", "projects"),
		export: filepath.Join(root, "Downloads"), long: long, claudeLong: claudeLong}
}

func (c *mixedCorpus) sources(idx string) []Source {
	opt := transcript.Options{Scratch: Scratch(idx)}
	return []Source{lineSource{c.lines},
		TranscriptSource(transcript.Source{Kind: transcript.ClaudeCode, Root: c.claude}, opt),
		TranscriptSource(transcript.Source{Kind: transcript.ClaudeExport, Root: c.export}, opt)}
}

func (c *mixedCorpus) line(i int) string {
	return filepath.Join(c.lines, fmt.Sprintf("s%02d.jsonl", i))
}

func (c *mixedCorpus) claudeFile(name string) string {
	return filepath.Join(c.claude, "-home-dev-mixed", claudeUUID(name, 0)+".jsonl")
}

func (c *mixedCorpus) container() string {
	return filepath.Join(c.export, "data-2025-12-01-12-00-00", "conversations.json")
}

// claudeUUID names message k of session name (k 0: the session itself).
func claudeUUID(name string, k int) string {
	h := fnv.New32a()
	h.Write([]byte(name))
	return fmt.Sprintf("%08x-0000-4000-8000-%012x", h.Sum32(), k)
}

// writeClaude writes (or appends) messages from…from+n of Claude Code
// session name: user and assistant in turn, each assistant turn with a
// thinking block and a tool call besides its text, a secret now and then.
func writeClaude(t *testing.T, c *mixedCorpus, name string, from, n int) {
	t.Helper()
	path := c.claudeFile(name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	flag := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if from > 0 {
		flag = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	f, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	session := claudeUUID(name, 0)
	for k := from; k < from+n; k++ {
		rec := map[string]any{"uuid": claudeUUID(name, k+1), "sessionId": session, "cwd": "/home/dev/mixed",
			"timestamp": day.Add(time.Duration(k) * time.Second).Format(time.RFC3339Nano), "isSidechain": false}
		if k > 0 {
			rec["parentUuid"] = claudeUUID(name, k)
		}
		text := fmt.Sprintf("%s wombat burrows item%03d", name, k)
		if k%7 == 3 {
			text += " with key AKIAQWERTYUIOPASDFGH in it"
		}
		if k%2 == 0 {
			rec["type"] = "user"
			rec["message"] = map[string]any{"role": "user", "content": text}
		} else {
			rec["type"] = "assistant"
			rec["message"] = map[string]any{"id": "msg_" + claudeUUID(name, k+1), "role": "assistant", "content": []any{
				map[string]any{"type": "thinking", "thinking": "hidden thoughts"},
				map[string]any{"type": "text", "text": text},
				map[string]any{"type": "tool_use", "id": "tu" + fmt.Sprint(k), "name": "Bash", "input": map[string]any{"command": "ls"}}}}
		}
		b, _ := json.Marshal(rec)
		if _, err := f.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
	}
}

// writeExport writes the export container with one conversation per word
// of words, each the fixture's with that word in place of its own.
func writeExport(t *testing.T, c *mixedCorpus, words ...string) {
	t.Helper()
	fixture := filepath.Join("..", "..", "testdata", "transcripts", "claude-export", "home", "Downloads", "data-2025-12-01-12-00-00", "conversations.json")
	b, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	one := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(string(b)), "["), "]")
	var convs []string
	for i, w := range words {
		id := fmt.Sprintf("9d8c7b6a-5f4e-4d3c-2b1a-%012x", i)
		convs = append(convs, strings.NewReplacer("claudeokapi", w, okapiID, id).Replace(one))
	}
	if err := os.MkdirAll(filepath.Dir(c.container()), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.container(), []byte("["+strings.Join(convs, ",")+"]"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// mixedSteps change the corpus between syncs: everything new; grown,
// rewritten, gone and new transcripts and a changed container; the gone
// transcript back and the container gone.
func mixedSteps(t *testing.T, c *mixedCorpus) []struct {
	name  string
	write func()
} {
	return []struct {
		name  string
		write func()
	}{
		{"new", func() {
			for i := range 14 {
				writeLines(t, c.line(i), longMsgs(fmt.Sprintf("s%d-", i), 0, 1+i%4), false)
			}
			writeLines(t, c.line(14), longMsgs("long", 0, c.long), false)
			writeLines(t, c.line(15), []lineMsg{{Role: "meta-summary", Text: "a summary of the wombat burrows"}, msgAt("w1", "user", "the wombat burrows", 1)}, false)
			if err := os.WriteFile(c.line(16), []byte("{not json\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			for i := range 6 {
				writeClaude(t, c, fmt.Sprintf("cc%d", i), 0, 2+5*i)
			}
			writeClaude(t, c, "cclong", 0, c.claudeLong)
			writeExport(t, c, "okapi", "quokka", "numbat", "dibbler", "bilby")
		}},
		{"changed", func() {
			writeLines(t, c.line(2), longMsgs("s2-", 3, 4), true)
			writeLines(t, c.line(14), longMsgs("long", c.long, 9), true)
			writeLines(t, c.line(5), longMsgs("r", 0, 1), false) // rewritten shorter
			if err := os.Rename(c.line(7), filepath.Join(t.TempDir(), "gone")); err != nil {
				t.Fatal(err)
			}
			writeLines(t, c.line(20), longMsgs("late", 0, 7), false)
			writeClaude(t, c, "cc2", 12, 5)
			writeClaude(t, c, "cclong", c.claudeLong, c.claudeLong/3)
			writeClaude(t, c, "cc9", 0, 8)
			writeExport(t, c, "okapi", "quokka", "wombat", "dibbler", "bilby", "potoroo")
		}},
		{"back", func() {
			writeLines(t, c.line(7), longMsgs("s7-", 0, 4), false)
			if err := os.Remove(c.container()); err != nil {
				t.Fatal(err)
			}
		}},
	}
}

// storeDump is everything the state store holds but its meta bucket, in
// order, values in hex; a session record's archive time is replaced by a
// mark (when differs between two syncs; that it is archived does not).
func storeDump(t *testing.T, s *Corpus) []string {
	t.Helper()
	var out []string
	err := s.st.db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			if string(name) == string(store.BucketMeta) {
				return nil
			}
			return dumpBucket(string(name), b, &out)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	var recs []string
	if err := s.st.forEachSession(func(r sessionRec) error {
		if r.archived() {
			r.Archived = time.Unix(1, 0)
		}
		recs = append(recs, fmt.Sprintf("%+v", r))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return append(out, recs...)
}

func dumpBucket(path string, b *bolt.Bucket, out *[]string) error {
	return b.ForEach(func(k, v []byte) error {
		if v == nil {
			return dumpBucket(path+"/"+hex.EncodeToString(k), b.Bucket(k), out)
		}
		if path == string(sbSessions) {
			v = []byte("(below)")
		}
		*out = append(*out, path+" "+hex.EncodeToString(k)+" "+hex.EncodeToString(v))
		return nil
	})
}

// answers is what an index answers: the store byte for byte, every
// session in order, the full-text index's count, status and searches.
type answers struct {
	Store    []string
	Messages map[string][]Message
	Docs     uint64
	Status   [3]any
	Skips    map[string][]store.Skip
	Search   map[string]Page
}

func answersOf(t *testing.T, s *Corpus) answers {
	t.Helper()
	a := answers{Store: storeDump(t, s), Messages: map[string][]Message{}, Search: map[string]Page{}}
	s.mu.RLock()
	var ids []string
	for _, ss := range s.sessions {
		ids = append(ids, ss.ID)
	}
	a.Skips = s.skips
	s.mu.RUnlock()
	sort.Strings(ids)
	for _, id := range ids {
		a.Messages[id] = view(t, s, id).Messages
	}
	st, err := s.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	a.Status = [3]any{st.Messages, st.Vectors, st.Coverage}
	if a.Docs, err = s.ft.DocCount(); err != nil {
		t.Fatal(err)
	}
	// Words few messages hold: which of many equally scored messages make a
	// page depends on the order of the documents in Bleve's segments, which
	// its merges set as they go (two serial syncs differ there too).
	for _, q := range []string{"item003", "item017", "item4321", "s7 item002", "summary", "quokka", "potoroo name", "dibbler title"} {
		for _, m := range []rank.Mode{rank.FullText, rank.Hybrid} {
			a.Search[q+"/"+string(m)] = search(t, s, Query{Text: q, Mode: m, Limit: 50})
		}
	}
	return a
}

// TestSessionsPipelineSameIndex: a sync whose workers read ahead (one,
// or four) leaves the store byte for byte, and the index answer for
// answer, as a sync whose committer reads every transcript itself — new
// transcripts short and long (in slices), grown, rewritten, gone
// (archived), back (restored), a container changed and gone, malformed
// lines and a summary — in batches of 5 messages (parts of one) and of
// 4,096 (parts of 512: the Claude Code transcript comes in three).
func TestSessionsPipelineSameIndex(t *testing.T) {
	for _, sc := range []struct {
		batch, long, claudeLong int
		readers                 []int // -1: the committer reads every transcript
	}{{5, 23, 23, []int{-1, 1, 4}}, {batchMessages, batchMessages + 300, 1500, []int{-1, 4}}} {
		t.Run(fmt.Sprint(sc.batch), func(t *testing.T) {
			if sc.batch == batchMessages && testing.Short() {
				t.Skip("long transcripts")
			}
			c := newMixedCorpus(t, sc.long, sc.claudeLong)
			readers := sc.readers
			var dirs []string
			for range readers {
				dirs = append(dirs, t.TempDir())
			}
			var here atomic.Int32
			pipelineTrace = func(what string, n int) {
				if what == "read here" {
					here.Add(1)
				}
			}
			defer func() { pipelineTrace = nil }()
			for _, st := range mixedSteps(t, c) {
				st.write()
				got := make([]answers, len(dirs))
				reps := make([]Report, len(dirs))
				for i, dir := range dirs {
					s := openTestSessions(t, dir, c.sources(dir)...)
					s.batchMsgs, s.readers = sc.batch, readers[i]
					reps[i] = mustSync(t, s)
					reps[i].Total = 0
					got[i] = answersOf(t, s)
					s.Close()
				}
				if n := here.Swap(0); n > 0 {
					t.Errorf("%s: the committer read %d transcripts itself, not read ahead", st.name, n)
				}
				if len(got[0].Messages) < 20 || got[0].Docs < 100 {
					t.Fatalf("%s: %d sessions, %d documents: the corpus is not indexed", st.name, len(got[0].Messages), got[0].Docs)
				}
				for i := 1; i < len(dirs); i++ {
					if !reflect.DeepEqual(reps[0], reps[i]) {
						t.Errorf("%s: reports differ:\nread by the committer %+v\n%d workers %+v", st.name, reps[0], readers[i], reps[i])
					}
					if !reflect.DeepEqual(got[0], got[i]) {
						diffAnswers(t, st.name, got[0], got[i])
					}
				}
			}
		})
	}
}

// diffAnswers reports where two answers differ, briefly.
func diffAnswers(t *testing.T, step string, want, got answers) {
	t.Helper()
	if !reflect.DeepEqual(want.Store, got.Store) {
		n := 0
		w, g := map[string]bool{}, map[string]bool{}
		for _, l := range want.Store {
			w[l] = true
		}
		for _, l := range got.Store {
			g[l] = true
		}
		for _, l := range want.Store {
			if !g[l] && n < 5 {
				t.Errorf("%s: the store lacks %.200s", step, l)
				n++
			}
		}
		for _, l := range got.Store {
			if !w[l] && n < 10 {
				t.Errorf("%s: the store has besides %.200s", step, l)
				n++
			}
		}
	}
	for id, ms := range want.Messages {
		if !reflect.DeepEqual(ms, got.Messages[id]) {
			t.Errorf("%s: session %s shows\n%.300v\nread ahead\n%.300v", step, id, ms, got.Messages[id])
		}
	}
	if len(want.Messages) != len(got.Messages) {
		t.Errorf("%s: %d sessions, read ahead %d", step, len(want.Messages), len(got.Messages))
	}
	if want.Docs != got.Docs || !reflect.DeepEqual(want.Status, got.Status) || !reflect.DeepEqual(want.Skips, got.Skips) {
		t.Errorf("%s: documents, status, skips\n%d %v %v\nread ahead\n%d %v %v", step, want.Docs, want.Status, want.Skips, got.Docs, got.Status, got.Skips)
	}
	for q, p := range want.Search {
		if !reflect.DeepEqual(p, got.Search[q]) {
			t.Errorf("%s: %s finds\n%.600v\nread ahead\n%.600v", step, q, hitIDs(p), hitIDs(got.Search[q]))
		}
	}
}

// countingSource counts the reads under way and cancels the sync when
// the read of a path containing cutAt starts.
type countingSource struct {
	Source
	active *atomic.Int32
	cutAt  string
	cancel func()
}

func (c countingSource) Read(ctx context.Context, path string, cursor []byte, h TranscriptHandler) (TranscriptRead, error) {
	c.active.Add(1)
	defer c.active.Add(-1)
	if c.cutAt != "" && strings.Contains(path, c.cutAt) {
		c.cancel()
	}
	return c.Source.Read(ctx, path, cursor, h)
}

// completesTo syncs the index in dir (batches of 5 messages) and checks
// that it then answers as want.
func completesTo(t *testing.T, c *mixedCorpus, dir string, want answers) {
	t.Helper()
	s := openTestSessions(t, dir, c.sources(dir)...)
	s.batchMsgs = 5
	mustSync(t, s)
	got := answersOf(t, s)
	s.Close()
	if !reflect.DeepEqual(want, got) {
		diffAnswers(t, "completed after the cut", want, got)
	}
}

// cutCorpus is the mixed corpus and the index a sync of it in batches of
// 5 messages, uncut, answers.
func cutCorpus(t *testing.T) (*mixedCorpus, answers) {
	c := newMixedCorpus(t, 23, 23)
	mixedSteps(t, c)[0].write()
	ref := t.TempDir()
	r := openTestSessions(t, ref, c.sources(ref)...)
	r.batchMsgs = 5
	mustSync(t, r)
	want := answersOf(t, r)
	r.Close()
	return c, want
}

// TestSessionsPipelineCancelled: a sync cancelled after its n-th batch
// leaves the store byte for byte as a serial sync cancelled there leaves
// it (pending marks, partial sessions and their cursors, the unfinished
// mark), and the next sync completes it to the index a sync without a cut
// makes.
func TestSessionsPipelineCancelled(t *testing.T) {
	c, want := cutCorpus(t)
	// cutAfter syncs a fresh index with readers workers, cancelled once n
	// batches are committed, and returns its index folder and store.
	cutAfter := func(t *testing.T, n, readers int) (string, []string, error) {
		dir := t.TempDir()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		calls := 0
		s, err := Open(context.Background(), Config{IndexDir: dir, Sources: c.sources(dir),
			Progress: func(done, total int) {
				if calls++; calls == n+1 { // the first call comes before any batch
					cancel()
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		s.batchMsgs, s.readers = 5, readers
		_, err = s.Sync(ctx, false)
		dump := storeDump(t, s)
		if st, _ := s.Status(context.Background()); err != nil && (st.Unfinished == "" || !st.Indexing) {
			t.Errorf("cut after %d batches: status unfinished %q, indexing %v; want set, true", n, st.Unfinished, st.Indexing)
		}
		s.Close()
		return dir, dump, err
	}
	for _, n := range []int{1, 2, 3, 5, 8, 13} {
		t.Run(fmt.Sprintf("after %d batches", n), func(t *testing.T) {
			_, serial, serr := cutAfter(t, n, -1)
			dir, piped, err := cutAfter(t, n, 4)
			if !errors.Is(err, context.Canceled) || !errors.Is(serr, context.Canceled) {
				t.Fatalf("cut syncs: %v and serially %v, want context.Canceled", err, serr)
			}
			if !reflect.DeepEqual(serial, piped) {
				diffAnswers(t, "cut", answers{Store: serial}, answers{Store: piped})
			}
			completesTo(t, c, dir, want)
		})
	}
}

// TestSessionsPipelineCancelledReading: a sync cancelled while the workers
// read ahead (a short transcript, a long one, a Claude Code one, a
// container) returns with no read running, and the next sync completes
// it to the index a sync without a cut makes.
func TestSessionsPipelineCancelledReading(t *testing.T) {
	c, want := cutCorpus(t)
	for _, at := range []string{"s03", "s14", claudeUUID("cc3", 0), claudeUUID("cclong", 0), "conversations.json"} {
		t.Run(at, func(t *testing.T) {
			dir := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var active atomic.Int32
			var srcs []Source
			for _, src := range c.sources(dir) {
				srcs = append(srcs, countingSource{Source: src, active: &active, cutAt: at, cancel: cancel})
			}
			s, err := Open(context.Background(), Config{IndexDir: dir, Sources: srcs})
			if err != nil {
				t.Fatal(err)
			}
			s.batchMsgs = 5
			if _, err := s.Sync(ctx, false); !errors.Is(err, context.Canceled) {
				t.Errorf("sync: %v, want context.Canceled", err)
			}
			if n := active.Load(); n != 0 {
				t.Errorf("%d reads still running after the sync returned", n)
			}
			s.Close()
			completesTo(t, c, dir, want)
		})
	}
}

// TestSessionsPipelineBounded: whatever the corpus, the parts the workers
// hand over and the committer has not replayed hold at most twice a
// batch's messages, besides the parts of the transcript it replays; and
// the workers keep their analysers across batches.
func TestSessionsPipelineBounded(t *testing.T) {
	c := newMixedCorpus(t, 200, 200)
	for i := range 30 {
		writeLines(t, c.line(i), longMsgs(fmt.Sprintf("s%d-", i), 0, 1+(i*37)%90), false)
	}
	for i := range 3 {
		writeLines(t, c.line(40+i), longMsgs(fmt.Sprintf("long%d-", i), 0, 300), false)
	}
	dir := t.TempDir()
	var mu sync.Mutex
	var top, renewed int
	pipelineTrace = func(what string, n int) {
		mu.Lock()
		switch what {
		case "held":
			top = max(top, n)
		case "analyser":
			renewed += n
		}
		mu.Unlock()
	}
	defer func() { pipelineTrace = nil }()
	s := openTestSessions(t, dir, c.sources(dir)...)
	s.batchMsgs, s.readers = 16, 4
	rep := mustSync(t, s)
	part := max(1, s.batchMsgs/8)
	// The workers keep their analysers from batch to batch: a corpus of a
	// few thousand distinct words never fills one's memo (workerMemo).
	if renewed != 0 || rep.Messages < 10*s.batchMsgs {
		t.Errorf("%d messages in batches of %d: the workers renewed their analysers %d times, want none", rep.Messages, s.batchMsgs, renewed)
	}
	if bound := 2*s.batchMsgs + (partsAhead+2)*part; top > bound || top == 0 {
		t.Errorf("the parts held %d messages at most, want at most %d (and some)", top, bound)
	}
}

// TestSessionsFlushWaitsForItsSession: a batch that writes a session the
// batch in flight (Bleve applying it, the store not yet) also writes waits
// for that batch first, so it starts from the session that batch leaves:
// a reset deletes every document the batch before added, and the index
// holds exactly the messages the store holds. Without the wait the reset
// would not know of the first batch's documents and leave them in Bleve.
func TestSessionsFlushWaitsForItsSession(t *testing.T) {
	s := openTestSessions(t, t.TempDir())
	ctx := context.Background()
	const sid = 7
	write := func(reset bool, texts ...string) sessionWrite {
		rec := sessionRec{SID: sid, ID: "x", Agent: "test", Source: "test:/x", Path: "/x/a.jsonl", NextSeq: uint32(len(texts))}
		w := sessionWrite{rec: &rec, reset: reset}
		a := s.ft.NewAnalyser()
		for i, text := range texts {
			pm := pendingMsg{seq: uint32(i), text: text, rec: msgRec{ID: fmt.Sprintf("m%d", i), Role: "user"}}
			pm.doc = fulltext.NewDoc(docID(sid, pm.seq), a.Message(text))
			pm.rec.Lens = fulltext.FieldLens(pm.doc)
			w.msgs = append(w.msgs, pm)
		}
		return w
	}
	bt := &batcher{b: &sessionBatch{}, a: s.ft.NewAnalyser(), progress: func() {}}
	bt.b.add(sid, write(false, "alpha one", "bravo two", "charlie three", "delta four"))
	if err := s.flush(ctx, bt); err != nil {
		t.Fatal(err)
	}
	if bt.fly == nil {
		t.Fatal("no batch in flight after a flush")
	}
	bt.b.add(sid, write(true, "echo five", "foxtrot six"))
	if err := firstErr(s.flush(ctx, bt), s.settle(ctx, bt)); err != nil {
		t.Fatal(err)
	}
	if n, err := s.ft.DocCount(); err != nil || n != 2 {
		t.Errorf("full-text index holds %d documents (%v), want the 2 the reset wrote", n, err)
	}
	for _, word := range []string{"alpha", "charlie", "delta"} {
		if p := search(t, s, Query{Text: word, Mode: rank.FullText}); len(p.Sessions) != 0 {
			t.Errorf("%q still found after the reset: %+v", word, p.Sessions)
		}
	}
	if p := search(t, s, Query{Text: "foxtrot", Mode: rank.FullText}); len(p.Sessions) != 1 {
		t.Errorf("foxtrot: %d sessions found, want 1", len(p.Sessions))
	}
}
