package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"mnemo/engine/fulltext"
)

// These tests simulate a crash inside a sync batch, which only the package
// itself can stage: the pending mark is written, the full-text index may
// have been changed, and the state store's commit never happened.

func openRepairVault(t *testing.T, files map[string]string) (Config, *Engine) {
	t.Helper()
	root := t.TempDir()
	cfg := Config{MemoryDir: filepath.Join(root, "mem"), IndexDir: filepath.Join(root, "idx")}
	for p, c := range files {
		full := filepath.Join(cfg.MemoryDir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Sync(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	return cfg, e
}

func repairSearch(t *testing.T, e *Engine, text string, mode Mode) []string {
	t.Helper()
	p, err := e.Search(context.Background(), Query{Text: text, Mode: mode, PageSize: 200, Now: time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatalf("Search %q: %v", text, err)
	}
	var out []string
	for _, r := range p.Results {
		out = append(out, r.Path)
	}
	return out
}

func count(ps []string, p string) int {
	n := 0
	for _, x := range ps {
		if x == p {
			n++
		}
	}
	return n
}

func TestRepairInterruptedBatch(t *testing.T) {
	cfg, e := openRepairVault(t, map[string]string{
		"a.md": "---\ntitle: A\n---\nthe aardvark digs burrows\n",
		"b.md": "---\ntitle: B\n---\nthe badger digs burrows\n",
		"c.md": "---\ntitle: C\n---\nthe coyote howls\n",
	})
	// The crash: a.md marked pending, and the full-text index already holds
	// a half-applied new version of it, plus a file the batch was adding.
	if err := e.st.markPending([]string{"a.md", "ghost.md"}, nil); err != nil {
		t.Fatal(err)
	}
	b := e.ft.NewBatch()
	b.Index("a.md", fulltext.MappedDoc("A", "A\nhalfwritten zeppelin"))
	b.Index("ghost.md", fulltext.MappedDoc("Ghost", "Ghost\nzeppelin"))
	if err := e.ft.Batch(b); err != nil {
		t.Fatal(err)
	}
	crashClose(t, e)

	e, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("reopen after the crash: %v", err)
	}
	defer e.Close()
	e.mu.RLock()
	_, hasA := e.files["a.md"]
	_, hasGhost := e.files["ghost.md"]
	nFiles := len(e.files)
	e.mu.RUnlock()
	if hasA || hasGhost || nFiles != 2 {
		t.Errorf("after repair: a.md indexed %v, ghost.md indexed %v, %d files; want only b.md and c.md until a sync", hasA, hasGhost, nFiles)
	}
	if got := repairSearch(t, e, "zeppelin", FullText); len(got) != 0 {
		t.Errorf("zeppelin → %v, want nothing: the interrupted batch must leave no ghost", got)
	}
	if got := repairSearch(t, e, "burrows", FullText); count(got, "a.md") != 0 || count(got, "b.md") != 1 {
		t.Errorf("burrows before sync → %v, want b.md only", got)
	}
	if l, err := e.st.load(); err != nil || len(l.pending) != 0 {
		t.Errorf("pending marks after repair: %v (err %v), want none", l.pending, err)
	}

	rep, err := e.Sync(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Added) != 1 || rep.Added[0] != "a.md" || rep.Unchanged != 2 || rep.Full {
		t.Errorf("sync after repair: Added %v Unchanged %d Full %v, want [a.md], 2, false", rep.Added, rep.Unchanged, rep.Full)
	}
	for _, m := range []Mode{FullText, Semantic, Hybrid} {
		if got := repairSearch(t, e, "aardvark", m); count(got, "a.md") != 1 {
			t.Errorf("%s: aardvark → %v, want a.md exactly once", m, got)
		}
	}
	if got := repairSearch(t, e, "burrows", FullText); count(got, "a.md") != 1 || len(got) != 2 {
		t.Errorf("burrows after sync → %v, want a.md and b.md once each", got)
	}
	st, _ := e.Status(context.Background())
	if st.Files != 3 {
		t.Errorf("Status.Files %d, want 3", st.Files)
	}
}

// A pending mark alone (the crash came before the full-text batch) is
// repaired the same way.
func TestRepairPendingMarkOnly(t *testing.T) {
	cfg, e := openRepairVault(t, map[string]string{
		"a.md": "the aardvark",
		"b.md": "the badger",
		"c.md": "the coyote",
	})
	if err := e.st.markPending([]string{"a.md"}, nil); err != nil {
		t.Fatal(err)
	}
	crashClose(t, e)
	e, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	e.mu.RLock()
	_, hasA := e.files["a.md"]
	e.mu.RUnlock()
	if hasA {
		t.Error("a.md still in e.files after repair")
	}
	if _, err := e.Sync(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	for _, m := range []Mode{FullText, Hybrid} {
		if got := repairSearch(t, e, "aardvark", m); count(got, "a.md") != 1 {
			t.Errorf("%s: aardvark → %v, want a.md exactly once", m, got)
		}
	}
}

// crashClose closes e as a crash after Bleve's last persist would leave
// it: everything given to the full-text index on disk, and the pending
// marks not cleared (a clean Close clears those of persisted batches).
func crashClose(t *testing.T, e *Engine) {
	t.Helper()
	// Bleve persists in order: once a last, empty batch is on disk, all
	// before it are.
	seq, _ := e.persist.Begin(nil)
	if err := e.ftBatch(e.ft.NewBatch(), seq); err != nil {
		t.Fatal(err)
	}
	if err := e.persist.Wait(persistTimeout); err != nil {
		t.Fatal(err)
	}
	e.closed.Store(true)
	if err := errors.Join(e.ft.Close(), e.st.close()); err != nil {
		t.Fatal(err)
	}
}
