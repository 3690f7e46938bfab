package transcript

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestFileRule checks the one file rule on every kind of path a home can
// hold under a transcript root: Read refuses, at once, a FIFO, a link (to
// /dev/zero, to a file outside the root), and a file reached through a
// folder link out of the root; Discover names each refusal; files read
// beside a transcript (Gemini's .project_root) are refused the same way.
func TestFileRule(t *testing.T) {
	root := t.TempDir()
	proj := filepath.Join(root, "-home-dev-a")
	outside := t.TempDir()
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(fixture(t, claudeFixture))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(proj, "good.jsonl"), good, 0o644)
	os.WriteFile(filepath.Join(outside, "o.jsonl"), good, 0o644)
	if err := syscall.Mkfifo(filepath.Join(proj, "fifo.jsonl"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Symlink("/dev/zero", filepath.Join(proj, "zero.jsonl"))
	os.Symlink(filepath.Join(outside, "o.jsonl"), filepath.Join(proj, "out.jsonl"))
	os.Symlink(outside, filepath.Join(root, "-home-dev-linked"))
	src := Source{Kind: ClaudeCode, Root: root}
	for _, name := range []string{"-home-dev-a/fifo.jsonl", "-home-dev-a/zero.jsonl", "-home-dev-a/out.jsonl", "-home-dev-linked/o.jsonl"} {
		_, err := Read(t.Context(), src, filepath.Join(root, name), Cursor{}, Options{}, Handler{})
		if err == nil {
			t.Errorf("%s was read", name)
		} else if !errors.Is(err, ErrNotRegular) && !strings.Contains(err.Error(), "escapes") {
			t.Errorf("%s: %v", name, err)
		}
	}
	res, err := Read(t.Context(), src, filepath.Join(proj, "good.jsonl"), Cursor{}, Options{}, Handler{})
	if err != nil || res.Messages == 0 {
		t.Errorf("good transcript: %d messages, %v", res.Messages, err)
	}
	paths, skipped, err := src.Discover(t.Context(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(paths, []string{filepath.Join(proj, "good.jsonl")}) {
		t.Errorf("discovered %q", paths)
	}
	reasons := map[string]string{}
	for _, s := range skipped {
		reasons[filepath.Base(s.Path)] = s.Reason
	}
	if !strings.Contains(reasons["fifo.jsonl"], "named pipe") || !strings.Contains(reasons["zero.jsonl"], "symbolic link") || !strings.Contains(reasons["out.jsonl"], "symbolic link") {
		t.Errorf("skipped %+v", skipped)
	}

	// Gemini: a .project_root that is a link to /dev/zero is not read; the
	// project is known by its folder's hash.
	gem := filepath.Join(t.TempDir(), "tmp")
	hash := "108c7ce6249f9ed669ddf89d9fb2149111c01673d5df630aed6f95165f05667c"
	chats := filepath.Join(gem, hash, "chats")
	os.MkdirAll(chats, 0o755)
	doc, _ := os.ReadFile(fixture(t, geminiFixture))
	os.WriteFile(filepath.Join(chats, "session-x.json"), doc, 0o644)
	os.Symlink("/dev/zero", filepath.Join(gem, hash, ".project_root"))
	res, err = Read(t.Context(), Source{Kind: Gemini, Root: gem}, filepath.Join(chats, "session-x.json"), Cursor{}, Options{}, Handler{})
	if err != nil || res.Session.Project != hash || res.Messages != 4 {
		t.Errorf("gemini beside a /dev/zero .project_root: project %q, %d messages, %v", res.Session.Project, res.Messages, err)
	}
}
