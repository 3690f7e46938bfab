package engine

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"mnemo/engine/vault"
)

// TestCaseFoldingVolume: on a volume that folds case (simulated: the engine
// is told so on a volume that does not, where only the respelling can find
// the files), every id, folder and path in another case or normalisation
// form reaches the memory under the one key the scan gave it — a read is
// recorded for it, an edit does not index it twice, a write goes into the
// existing folder, a folder filter finds it.
func TestCaseFoldingVolume(t *testing.T) {
	_, e := openRepairVault(t, map[string]string{
		"notes/Foo.md":      "---\ntitle: Foo\n---\nplatypus\n",
		"cafe\u0301/Bar.md": "---\ntitle: Bar\n---\nechidna\n",
	})
	defer e.Close()
	opts := e.vaultOptions()
	opts.FoldsCase = true
	var err error
	if e.vault, err = vault.Open(e.root, opts); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for id, want := range map[string]string{
		"Notes/foo":             "notes/Foo.md",
		"memory://NOTES/FOO.md": "notes/Foo.md",
		"café/bar":              "cafe\u0301/Bar.md",
		"memory://CAFÉ/BAR.md":  "cafe\u0301/Bar.md",
		"CAFE\u0301/bar.md":     "cafe\u0301/Bar.md",
	} {
		got, err := e.Resolve(id)
		if err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", id, got, err, want)
		}
	}
	if _, err := e.Read(ctx, "NOTES/foo"); err != nil {
		t.Fatal(err)
	}
	e.mu.RLock()
	_, read := e.reads["notes/Foo.md"]
	e.mu.RUnlock()
	if !read {
		t.Error("a read through another case was not recorded for the memory")
	}
	if _, err := e.Edit(ctx, EditRequest{ID: "Notes/FOO", Op: Append, Content: "wombat"}); err != nil {
		t.Fatal(err)
	}
	if got := repairSearch(t, e, "wombat", FullText); !slices.Equal(got, []string{"notes/Foo.md"}) {
		t.Errorf("the edit is indexed as %v, want once as notes/Foo.md", got)
	}
	m, err := e.Write(ctx, WriteRequest{Title: "Quokka", Content: "quokka", Folder: "NOTES"})
	if err != nil {
		t.Fatal(err)
	}
	if m.Path != "notes/quokka.md" {
		t.Errorf("a write into NOTES made %s, want it in the existing folder notes", m.Path)
	}
	if _, err := os.Stat(filepath.Join(e.root, "NOTES")); !os.IsNotExist(err) {
		t.Errorf("a write made a second spelling of the folder: %v", err)
	}
	p, err := e.Search(ctx, Query{Text: "platypus", Mode: FullText, Folder: "Notes"})
	if err != nil || len(p.Results) != 1 || p.Results[0].Path != "notes/Foo.md" {
		t.Errorf("a folder filter in another case: %+v, %v", p.Results, err)
	}
	if n := len(e.files); n != 3 {
		t.Errorf("the index holds %d memories, want 3 (no second key for one file)", n)
	}
	// A case-only rename keeps the new spelling of the name, in the folder
	// as listed, and the read time goes with it.
	moved, err := e.Move(ctx, "notes/Foo.md", "NOTES/foo.md")
	if err != nil || moved.Path != "notes/foo.md" {
		t.Fatalf("case-only rename: %q, %v; want notes/foo.md", moved.Path, err)
	}
	e.mu.RLock()
	_, read = e.reads["notes/foo.md"]
	e.mu.RUnlock()
	if got := repairSearch(t, e, "platypus", FullText); !slices.Equal(got, []string{"notes/foo.md"}) || !read {
		t.Errorf("after the rename: indexed as %v, read time moved: %v", got, read)
	}
}
