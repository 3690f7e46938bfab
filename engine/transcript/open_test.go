//go:build unix

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
// beside a transcript (Gemini's .project_root) are refused the same way and
// named too, and Aider's search for projects through them follows no link
// and opens no FIFO.
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
	// Discover names it, and a FIFO beside it, with why.
	os.MkdirAll(filepath.Join(gem, "other"), 0o755)
	if err := syscall.Mkfifo(filepath.Join(gem, "other", ".project_root"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, skipped, err = Source{Kind: Gemini, Root: gem}.Discover(t.Context(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	reasons = map[string]string{}
	for _, s := range skipped {
		reasons[s.Path] = s.Reason
	}
	if !strings.Contains(reasons[filepath.Join(gem, hash, ".project_root")], "symbolic link") ||
		!strings.Contains(reasons[filepath.Join(gem, "other", ".project_root")], "named pipe") {
		t.Errorf("gemini: skipped %+v", skipped)
	}

	// Aider finds projects through Gemini's .project_root files too, under
	// the same rule: a link is not followed, a FIFO not opened.
	home := t.TempDir()
	project := filepath.Join(t.TempDir(), "proj")
	os.MkdirAll(project, 0o755)
	os.WriteFile(filepath.Join(project, ".aider.chat.history.md"), []byte("# aider chat started at 2026-01-01 10:00:00\n\n#### hello\n"), 0o644)
	os.WriteFile(filepath.Join(outside, "root.txt"), []byte(project), 0o644)
	for _, d := range []string{"linked", "fifo"} {
		os.MkdirAll(filepath.Join(home, ".gemini", "tmp", d), 0o755)
	}
	os.Symlink(filepath.Join(outside, "root.txt"), filepath.Join(home, ".gemini", "tmp", "linked", ".project_root"))
	paths, _, err = Source{Kind: Aider, Root: home}.Discover(t.Context(), Options{})
	if err != nil || len(paths) != 0 {
		t.Fatalf("aider through a linked .project_root: %q, %v", paths, err)
	}
	if err := syscall.Mkfifo(filepath.Join(home, ".gemini", "tmp", "fifo", ".project_root"), 0o644); err != nil {
		t.Fatal(err)
	}
	if paths, _, err = (Source{Kind: Aider, Root: home}).Discover(t.Context(), Options{}); err != nil || len(paths) != 0 {
		t.Errorf("aider beside a FIFO .project_root: %q, %v", paths, err)
	}
}
