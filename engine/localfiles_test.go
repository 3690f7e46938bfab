package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"mnemo/engine"
)

// TestWriterPIDNotFollowed: a writer.pid planted as a link to another
// file (one the attacker wants overwritten) is replaced, not written
// through.
func TestWriterPIDNotFollowed(t *testing.T) {
	dir := t.TempDir()
	mem, idx := filepath.Join(dir, "memory"), filepath.Join(dir, "index")
	os.MkdirAll(mem, 0o755)
	os.MkdirAll(idx, 0o755)
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(idx, "writer.pid")); err != nil {
		t.Fatal(err)
	}
	e, err := engine.Open(context.Background(), engine.Config{MemoryDir: mem, IndexDir: idx})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Errorf("the link's target was written: %q", b)
	}
	fi, err := os.Lstat(filepath.Join(idx, "writer.pid"))
	if err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("writer.pid: %v %v, want a regular file", fi, err)
	}
	if b, _ := os.ReadFile(filepath.Join(idx, "writer.pid")); strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Errorf("writer.pid holds %q", b)
	}
}

// TestStaleTempsRemovedAtOpen: the hidden temporary files a writer killed
// mid-write leaves (.mnemo-*.tmp, in any folder of the vault, and in the
// index folder) are removed when the next writer opens the index, and
// named; other hidden files, and the folders the scan does not enter, are
// left alone.
func TestStaleTempsRemovedAtOpen(t *testing.T) {
	dir := t.TempDir()
	mem, idx := filepath.Join(dir, "memory"), filepath.Join(dir, "index")
	stale := []string{
		filepath.Join(mem, ".mnemo-0123456789abcdef.tmp"),
		filepath.Join(mem, "notes", "deep", ".mnemo-fedcba9876543210.tmp"),
		filepath.Join(idx, ".mnemo-token-abc.tmp"),
	}
	kept := []string{
		filepath.Join(mem, "notes", "keep.md"),
		filepath.Join(mem, ".mnemo-notes"),         // not a temporary file's name
		filepath.Join(mem, ".git", ".mnemo-x.tmp"), // a hidden folder: not ours
		filepath.Join(mem, "notes", "mnemo-x.tmp"), // not hidden: a user's file
		filepath.Join(idx, "sub", ".mnemo-y.tmp"),  // below the index folder: not written there
	}
	for _, p := range append(slices.Clone(stale), kept...) {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("half a write"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e, err := engine.Open(context.Background(), engine.Config{MemoryDir: mem, IndexDir: idx})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, p := range stale {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s left behind (%v)", p, err)
		}
	}
	for _, p := range kept {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
	got := slices.Sorted(slices.Values(e.RemovedTemps()))
	want := slices.Sorted(slices.Values(stale))
	if !slices.Equal(got, want) {
		t.Errorf("RemovedTemps %v, want %v", got, want)
	}
}
