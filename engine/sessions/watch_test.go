//go:build unix

package sessions

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"mnemo/engine/rank"
	"mnemo/engine/transcript"
)

// claudeRecord is one Claude Code transcript line holding a user prompt.
func claudeRecord(t *testing.T, session, uuid, text string) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"type": "user", "uuid": uuid, "parentUuid": nil, "sessionId": session, "cwd": "/home/dev/app",
		"timestamp": day.Format(time.RFC3339), "message": map[string]any{"role": "user", "content": text},
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

// TestSessionsWatchHostileLinks: links that appear in a watched transcript
// root while the watcher runs — to /dev/zero, to a FIFO, to a transcript
// outside the tree, a folder link that loops back up — and a FIFO named like
// a transcript are left out, each named in status with its reason and
// counted; the watcher goes on (a transcript written after them is
// indexed) and stops when asked.
func TestSessionsWatchHostileLinks(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "projects")
	outside := filepath.Join(dir, "outside")
	proj := filepath.Join(root, "-home-dev-app")
	for _, d := range []string{proj, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const first, later = "11111111-2222-4333-8444-555566667777", "88888888-2222-4333-8444-555566667777"
	if err := os.WriteFile(filepath.Join(proj, first+".jsonl"), []byte(claudeRecord(t, first, "a1", "the first transcript mentions damsons")), 0o644); err != nil {
		t.Fatal(err)
	}
	src := TranscriptSource(transcript.Source{Kind: transcript.ClaudeCode, Root: root}, transcript.Options{})
	s := openTestSessions(t, t.TempDir(), src)

	batches := make(chan Report, 64)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- s.Watch(ctx, WatchOptions{Debounce: 20 * time.Millisecond, OnBatch: func(r Report) { batches <- r }})
	}()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			if err := <-done; err != nil {
				t.Errorf("watch: %v", err)
			}
		}
	}
	defer stop()
	if r := <-batches; r.Added != 1 { // the start-up sync
		t.Fatalf("start-up sync: %+v", r)
	}

	if err := os.WriteFile(filepath.Join(outside, "o.jsonl"), []byte(claudeRecord(t, "0e0e0e0e-1111-4222-8333-444455556666", "x1", "outsidemarker lives outside the tree")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(outside, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	hostile := map[string]string{ // link → target
		filepath.Join(proj, "zero.jsonl"):     "/dev/zero",
		filepath.Join(proj, "pipe.jsonl"):     filepath.Join(outside, "pipe"),
		filepath.Join(proj, "outside.jsonl"):  filepath.Join(outside, "o.jsonl"),
		filepath.Join(root, "-home-dev-loop"): "..",
	}
	for link, target := range hostile {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	fifo := filepath.Join(proj, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	// Written after them: once it is indexed, every event before it has
	// been handled.
	if err := os.WriteFile(filepath.Join(proj, later+".jsonl"), []byte(claudeRecord(t, later, "b1", "the later transcript mentions medlars")), 0o644); err != nil {
		t.Fatal(err)
	}
	for added := 0; added == 0; {
		r := <-batches
		added = r.Added
		if r.Added > 1 {
			t.Errorf("batch %+v: only the later transcript is new", r)
		}
	}
	if got := hitIDs(search(t, s, Query{Text: "medlars", Mode: rank.FullText})); strings.Join(got, ",") != later+"/b1" {
		t.Errorf("the transcript written after the links: hits %v", got)
	}
	if got := hitIDs(search(t, s, Query{Text: "outsidemarker", Mode: rank.FullText})); len(got) != 0 {
		t.Errorf("the transcript outside the tree was indexed: %v", got)
	}
	st, err := s.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, k := range st.Sources[0].Skipped {
		reasons[k.Path] = k.Reason
	}
	want := map[string]string{
		filepath.Join(proj, "zero.jsonl"):     "symbolic link",
		filepath.Join(proj, "pipe.jsonl"):     "symbolic link",
		filepath.Join(proj, "outside.jsonl"):  "symbolic link",
		filepath.Join(root, "-home-dev-loop"): "symbolic link to a folder",
		fifo:                                  "named pipe",
	}
	for p, w := range want {
		if !strings.Contains(reasons[p], w) {
			t.Errorf("status names %s with %q, want a reason saying %q (all: %v)", p, reasons[p], w, reasons)
		}
	}
	if n := len(st.Sources[0].Skipped); n != len(want) {
		t.Errorf("status skips %d files, want %d: %v", n, len(want), reasons)
	}
	total := 0
	for _, n := range st.Sources[0].SkippedBy {
		total += n
	}
	if total != len(want) {
		t.Errorf("status counts %v, want %d in all", st.Sources[0].SkippedBy, len(want))
	}
	if st.Sessions != 2 {
		t.Errorf("status: %d sessions, want 2", st.Sessions)
	}
	stop()
}
