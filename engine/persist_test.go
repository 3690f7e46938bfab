package engine

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	bolt "go.etcd.io/bbolt"

	"mnemo/engine/fulltext"
	"mnemo/engine/store"
)

// envKill9Child makes the test binary, re-run by TestWriteSurvivesKill9,
// the process that writes and is killed; its value is the test's folder.
const envKill9Child = "MNEMO_TEST_KILL9_CHILD"

// TestWriteSurvivesKill9: writes answered while Bleve had not persisted
// them yet (its persister held back) survive kill -9 of the process. At the
// kill, the full-text index on disk lacks the writes, and the pending marks
// name their paths; after the next open and sync — what serve does at
// start — each write is searchable, once, the text it replaced is gone, and
// nothing else is lost. The writes replace memories (an edit, an
// overwrite), so the document count cannot give the loss away.
func TestWriteSurvivesKill9(t *testing.T) {
	if dir := os.Getenv(envKill9Child); dir != "" {
		kill9Child(t, dir)
		return
	}
	var cfg Config
	for attempt := 1; ; attempt++ {
		var persisted []string
		cfg, persisted = kill9Attempt(t)
		if len(persisted) == 0 {
			break
		}
		// The kill must come while the writes are not on disk, or this
		// run proves nothing; a loaded machine has let Bleve persist
		// them first now and then (2 runs in 20), so the run is redone.
		if attempt == 3 {
			t.Fatalf("%v in the full-text index on disk in 3 runs: the test never killed before Bleve persisted", persisted)
		}
		t.Logf("run %d: %v already on disk at the kill; running again", attempt, persisted)
	}
	db, err := bolt.Open(filepath.Join(cfg.IndexDir, "state.db"), 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var marks []string
	db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(store.BucketPending).ForEach(func(k, _ []byte) error {
			marks = append(marks, string(k))
			return nil
		})
	})
	db.Close()
	slices.Sort(marks)
	if !slices.Equal(marks, []string{"a.md", "b.md"}) {
		t.Errorf("pending marks after the kill: %v, want [a.md b.md]", marks)
	}

	e, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("open after kill -9: %v", err)
	}
	defer e.Close()
	if _, err := e.Sync(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	for word, want := range map[string][]string{"zebraword": {"a.md"}, "yakword": {"b.md"}, "aardvark": {"a.md"}, "coyote": {"c.md"}, "badger": nil} {
		if got := repairSearch(t, e, word, FullText); !slices.Equal(got, want) {
			t.Errorf("%s after kill -9, open and sync: %v, want %v", word, got, want)
		}
	}
	if n, err := e.ft.DocCount(); err != nil || n != 3 {
		t.Errorf("full-text index holds %d documents (%v), want 3", n, err)
	}
}

// kill9Attempt runs the child that writes and is killed, over a new
// folder, and returns the folder's config and which of the written words
// Bleve's files on disk hold (none, if the kill came before Bleve
// persisted them, as the child arranges by holding its persister).
func kill9Attempt(t *testing.T) (cfg Config, persisted []string) {
	t.Helper()
	dir := t.TempDir()
	cfg = Config{MemoryDir: filepath.Join(dir, "mem"), IndexDir: filepath.Join(dir, "idx")}
	if err := os.MkdirAll(cfg.MemoryDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg.MemoryDir, "a.md"), []byte("# A\n\nthe aardvark digs\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg.MemoryDir, "b.md"), []byte("---\ntitle: B\n---\nthe badger sleeps\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg.MemoryDir, "c.md"), []byte("# C\n\nthe coyote howls\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	child := exec.Command(os.Args[0], "-test.run=^TestWriteSurvivesKill9$", "-test.v")
	child.Env = append(os.Environ(), envKill9Child+"="+dir)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	answered := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "answered" {
				answered <- true
				return
			}
		}
		answered <- false
	}()
	select {
	case ok := <-answered:
		if !ok {
			child.Wait()
			t.Fatal("the child ended without answering its writes")
		}
	case <-time.After(60 * time.Second):
		child.Process.Kill()
		child.Wait()
		t.Fatal("the child did not answer its writes within 60 s")
	}
	if err := child.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	child.Wait()

	// What the kill left: Bleve's files without the writes, the pending
	// marks naming them.
	idx, err := bleve.OpenUsing(filepath.Join(cfg.IndexDir, fulltext.Dir), map[string]any{"read_only": true})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"zebraword", "yakword"} {
		q := bleve.NewMatchQuery(w)
		q.SetField(fulltext.BodyField)
		res, err := idx.Search(bleve.NewSearchRequest(q))
		if err != nil {
			t.Fatal(err)
		}
		if res.Total != 0 {
			persisted = append(persisted, w)
		}
	}
	idx.Close()
	return cfg, persisted
}

// kill9Child indexes the folder, reopens it with Bleve's persister held
// (by an event callback that never returns), edits a.md and overwrites b.md, says "answered" once both calls have
// returned, and waits to be killed.
func kill9Child(t *testing.T, dir string) {
	ctx := context.Background()
	cfg := Config{MemoryDir: filepath.Join(dir, "mem"), IndexDir: filepath.Join(dir, "idx")}
	e, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Sync(ctx, false); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	// Hold Bleve's persister where it waits for work: nothing introduced
	// after it got there reaches the disk.
	held := make(chan struct{})
	var once sync.Once
	scorch.RegistryEventCallbacks["mnemo-kill9-hold"] = func(ev scorch.Event) bool {
		if ev.Kind == scorch.EventKindPurgerCheck {
			once.Do(func() { close(held) })
			select {} // until killed
		}
		return true
	}
	cfg.scorch = map[string]any{"eventCallbackName": "mnemo-kill9-hold"}
	if e, err = Open(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held:
	case <-time.After(30 * time.Second):
		t.Fatal("Bleve's persister did not come to wait for work within 30 s")
	}
	if _, err := e.Edit(ctx, EditRequest{ID: "a.md", Op: Append, Content: "a zebraword appears"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Write(ctx, WriteRequest{Title: "B", Content: "a yakword here", Overwrite: true}); err != nil {
		t.Fatal(err)
	}
	for word, want := range map[string]string{"zebraword": "a.md", "yakword": "b.md"} {
		if got := repairSearch(t, e, word, FullText); !slices.Equal(got, []string{want}) {
			t.Fatalf("%s right after the write: %v, want [%s]", word, got, want)
		}
	}
	os.Stdout.WriteString("answered\n")
	select {} // until killed
}
