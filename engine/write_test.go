package engine_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"mnemo/engine"
)

// writable opens an engine on a fresh memory folder holding files
// (path → content) and syncs it. It returns the engine and the folder.
func writable(t *testing.T, files map[string]string) (*engine.Engine, string) {
	t.Helper()
	return writableWith(t, files, nil)
}

// writableWith is writable with the engine's clock set (nil: the wall clock).
func writableWith(t *testing.T, files map[string]string, clock func() time.Time) (*engine.Engine, string) {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "memory")
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	e, err := engine.Open(context.Background(), engine.Config{MemoryDir: dir, IndexDir: filepath.Join(root, "index"), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !closed[e] {
			e.Close()
		}
	})
	if _, err := e.Sync(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	return e, dir
}

// closed marks engines a test closed itself (Close is not idempotent).
var closed = map[*engine.Engine]bool{}

func mustWrite(t *testing.T, e *engine.Engine, req engine.WriteRequest) engine.Memory {
	t.Helper()
	m, err := e.Write(context.Background(), req)
	if err != nil {
		t.Fatalf("Write(%+v): %v", req, err)
	}
	return m
}

// found reports whether a full-text search for text finds rel.
func found(t *testing.T, e *engine.Engine, text, rel string) bool {
	t.Helper()
	p, err := e.Search(context.Background(), engine.Query{Text: text, Mode: engine.FullText, PageSize: 200})
	if err != nil {
		t.Fatalf("Search(%q): %v", text, err)
	}
	for _, r := range p.Results {
		if r.Path == rel {
			return true
		}
	}
	return false
}

func fileText(t *testing.T, dir, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// treeHash is a digest of every path, mode and content under dir.
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, _ := d.Info()
		h.Write([]byte(rel + "\x00" + info.Mode().String() + "\x00"))
		if d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			h.Write(b)
		}
		if d.Type()&fs.ModeSymlink != 0 {
			l, _ := os.Readlink(p)
			h.Write([]byte(l))
		}
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))
}

func TestWriteCreatesIndexedMemory(t *testing.T) {
	e, dir := writable(t, nil)
	before := time.Now().UTC().Add(-time.Second)
	m := mustWrite(t, e, engine.WriteRequest{
		Title: "  Quarterly   Plan ", Content: "We ship the zeppelin in Q3.", Folder: "notes/2025",
		Tags: []string{"#Plan", "q3", "plan", " "},
	})
	if m.Path != "notes/2025/quarterly-plan.md" || m.URI != "memory://notes/2025/quarterly-plan" {
		t.Fatalf("path %q uri %q", m.Path, m.URI)
	}
	if m.Title != "Quarterly Plan" || strings.Join(m.Tags, ",") != "plan,q3" {
		t.Errorf("title %q tags %q", m.Title, m.Tags)
	}
	if m.Created.Before(before) || !m.Modified.Equal(m.Created) {
		t.Errorf("created %v modified %v", m.Created, m.Modified)
	}
	text := fileText(t, dir, m.Path)
	for _, want := range []string{"---\ntitle: Quarterly Plan\ncreated: ", "\nmodified: ", "\ntags: [plan, q3]\n---\nWe ship the zeppelin in Q3.\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("file lacks %q:\n%s", want, text)
		}
	}
	if _, err := time.Parse(time.RFC3339, strings.Fields(text[strings.Index(text, "created: "):])[1]); err != nil {
		t.Errorf("created is not RFC 3339: %v", err)
	}
	sum := sha256.Sum256([]byte(text))
	if m.Checksum != hex.EncodeToString(sum[:]) {
		t.Errorf("checksum %s is not the file's", m.Checksum)
	}
	if !found(t, e, "zeppelin", m.Path) {
		t.Error("a written memory is not searchable at once")
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "notes/2025"))
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestWriteFileNames(t *testing.T) {
	e, _ := writable(t, nil)
	long := strings.Repeat("é", 200)
	cases := []struct{ title, want string }{
		{"Hello, World!", "hello-world.md"},
		{"ADR 001: Use Go", "adr-001-use-go.md"},
		{"会议记录", "会议记录.md"},
		{"数据库迁移会议", "数据库迁移会议.md"},
		{"日本語のメモ", "日本語のメモ.md"},
		{"Ünïcödé Straße", "ünïcödé-straße.md"},
		{"नमस्ते दुनिया", "नमस्ते-दुनिया.md"},
		{"../../etc/passwd", "etc-passwd.md"},
		{`a/b\c`, "a-b-c.md"},
		{"..", "untitled.md"},
		{"???", "untitled-2.md"},
		{"CON", "con-memory.md"},
		{"tab\tand\nnewline", "tab-and-newline.md"},
	}
	for _, c := range cases {
		m := mustWrite(t, e, engine.WriteRequest{Title: c.title, Content: "x"})
		if m.Path != c.want {
			t.Errorf("title %q: file %q, want %q", c.title, m.Path, c.want)
		}
	}
	m := mustWrite(t, e, engine.WriteRequest{Title: long, Content: "x"})
	name := strings.TrimSuffix(m.Path, ".md")
	if len(name) > 96 || !utf8.ValidString(name) || !strings.HasPrefix(long, name) {
		t.Errorf("long title: %d-byte name %q", len(name), name)
	}
}

func TestWriteCollisionAndOverwrite(t *testing.T) {
	var now atomic.Int64 // the engine's clock, in Unix seconds
	now.Store(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC).Unix())
	e, dir := writableWith(t, nil, func() time.Time { return time.Unix(now.Load(), 0) })
	a := mustWrite(t, e, engine.WriteRequest{Title: "Foo?", Content: "first"})
	b := mustWrite(t, e, engine.WriteRequest{Title: "Foo!", Content: "second"})
	c := mustWrite(t, e, engine.WriteRequest{Title: "foo.", Content: "third"})
	if a.Path != "foo.md" || b.Path != "foo-2.md" || c.Path != "foo-3.md" {
		t.Fatalf("paths %q %q %q", a.Path, b.Path, c.Path)
	}
	before := fileText(t, dir, "foo.md")
	_, err := e.Write(context.Background(), engine.WriteRequest{Title: "FOO?", Content: "clobber"})
	if !errors.Is(err, engine.ErrExists) {
		t.Fatalf("same title again: %v, want ErrExists", err)
	}
	if fileText(t, dir, "foo.md") != before {
		t.Fatal("a refused write changed the file")
	}
	now.Add(60) // a minute later: the overwrite must move modified, not created
	o := mustWrite(t, e, engine.WriteRequest{Title: "Foo?", Content: "replaced", Overwrite: true})
	if o.Path != "foo.md" || !o.Created.Equal(a.Created) || !o.Modified.After(a.Modified) {
		t.Errorf("overwrite: path %q created %v (was %v) modified %v", o.Path, o.Created, a.Created, o.Modified)
	}
	if found(t, e, "first", "foo.md") || !found(t, e, "replaced", "foo.md") {
		t.Error("the index still holds the overwritten text")
	}
	// The same title in another folder is another memory.
	if m := mustWrite(t, e, engine.WriteRequest{Title: "Foo?", Folder: "other", Content: "x"}); m.Path != "other/foo.md" {
		t.Errorf("other folder: %q", m.Path)
	}
	// A memory written by hand, not yet synced, is found by its title too.
	os.WriteFile(filepath.Join(dir, "manual.md"), []byte("---\ntitle: Manual\n---\nbody\n"), 0o644)
	if _, err := e.Write(context.Background(), engine.WriteRequest{Title: "Manual", Content: "x"}); !errors.Is(err, engine.ErrExists) {
		t.Errorf("unsynced same-title file: %v, want ErrExists", err)
	}
}

func TestWriteRefusesHostileInput(t *testing.T) {
	e, dir := writable(t, map[string]string{"keep.md": "# Keep\n"})
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	before := treeHash(t, dir)
	cases := []struct {
		name string
		req  engine.WriteRequest
		want error
	}{
		{"dotdot", engine.WriteRequest{Title: "x", Folder: "../x"}, engine.ErrOutsideRoot},
		{"deep dotdot", engine.WriteRequest{Title: "x", Folder: "a/../../b"}, engine.ErrOutsideRoot},
		{"absolute", engine.WriteRequest{Title: "x", Folder: "/etc"}, engine.ErrOutsideRoot},
		{"windows absolute", engine.WriteRequest{Title: "x", Folder: `C:\Windows`}, engine.ErrOutsideRoot},
		{"backslash dotdot", engine.WriteRequest{Title: "x", Folder: `..\..\x`}, engine.ErrOutsideRoot},
		{"url-encoded", engine.WriteRequest{Title: "x", Folder: "..%2f..%2fetc"}, engine.ErrOutsideRoot},
		{"url-encoded dots", engine.WriteRequest{Title: "x", Folder: "%2e%2e/x"}, engine.ErrOutsideRoot},
		{"NUL", engine.WriteRequest{Title: "x", Folder: "a\x00b"}, engine.ErrOutsideRoot},
		{"encoded NUL", engine.WriteRequest{Title: "x", Folder: "a%00b"}, engine.ErrOutsideRoot},
		{"symlink escape", engine.WriteRequest{Title: "x", Folder: "escape"}, engine.ErrOutsideRoot},
		{"symlink escape below", engine.WriteRequest{Title: "x", Folder: "escape/deeper"}, engine.ErrOutsideRoot},
		{"hidden folder", engine.WriteRequest{Title: "x", Folder: ".git"}, engine.ErrInvalid},
		{"control in folder", engine.WriteRequest{Title: "x", Folder: "a\x01b"}, engine.ErrInvalid},
		{"empty title", engine.WriteRequest{Title: "  "}, engine.ErrInvalid},
		{"control in title", engine.WriteRequest{Title: "a\x07b"}, engine.ErrInvalid},
		{"huge title", engine.WriteRequest{Title: strings.Repeat("t", 10000)}, engine.ErrInvalid},
		{"NUL in content", engine.WriteRequest{Title: "x", Content: "a\x00b"}, engine.ErrInvalid},
		{"huge content", engine.WriteRequest{Title: "x", Content: strings.Repeat("a", 11<<20)}, engine.ErrInvalid},
		{"too many tags", engine.WriteRequest{Title: "x", Tags: make([]string, 100)}, engine.ErrInvalid},
		{"comma tag", engine.WriteRequest{Title: "x", Tags: []string{"a,b"}}, engine.ErrInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.Write(context.Background(), c.req)
			if !errors.Is(err, c.want) {
				t.Errorf("got %v, want %v", err, c.want)
			}
		})
	}
	if treeHash(t, dir) != before {
		t.Error("refused writes changed the memory folder")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("a write escaped through the symlink: %v", entries)
	}
}

func TestWriteIntoIndexFolderRefused(t *testing.T) {
	dir := t.TempDir()
	e, err := engine.Open(context.Background(), engine.Config{MemoryDir: dir, IndexDir: filepath.Join(dir, "index")})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.Write(context.Background(), engine.WriteRequest{Title: "x", Folder: "index"}); !errors.Is(err, engine.ErrOutsideRoot) {
		t.Errorf("write into the index folder: %v", err)
	}
}

const sectioned = `---
title: Runbook
tags:
  - ops   # keep this comment
created: 2025-01-02
modified: 2025-01-03
owner: sam
---
# Runbook

Intro text.

## Deploy

Old deploy steps.

### Rollback

Old rollback.

` + "```sh\n## Not a heading\n```\n" + `
## Monitor

Watch the dashboards.
`

func TestEdit(t *testing.T) {
	cases := []struct {
		name     string
		req      engine.EditRequest
		contains []string
		lacks    []string
	}{
		{"append", engine.EditRequest{Op: engine.Append, Content: "Appended zebra line."},
			[]string{"Watch the dashboards.\n\nAppended zebra line.\n"}, nil},
		{"prepend", engine.EditRequest{Op: engine.Prepend, Content: "Prepended zebra."},
			[]string{"owner: sam\n---\nPrepended zebra.\n\n# Runbook"}, nil},
		{"find_replace any", engine.EditRequest{Op: engine.FindReplace, Find: "Old", Content: "New zebra"},
			[]string{"New zebra deploy steps.", "New zebra rollback."}, []string{"Old"}},
		{"find_replace expected", engine.EditRequest{Op: engine.FindReplace, Find: "Old", Content: "zebra", ExpectedCount: 2},
			[]string{"zebra deploy steps."}, []string{"Old"}},
		{"replace_section with subsections", engine.EditRequest{Op: engine.ReplaceSection, Section: "deploy", Content: "\nzebra steps\n\n"},
			[]string{"## Deploy\n\nzebra steps\n\n## Monitor\n"}, []string{"Rollback", "Not a heading", "Old deploy"}},
		{"replace_section pinned level", engine.EditRequest{Op: engine.ReplaceSection, Section: "### Rollback", Content: "zebra back"},
			[]string{"### Rollback\n\nzebra back\n\n## Monitor", "Old deploy steps."}, []string{"Old rollback.", "Not a heading"}},
		{"replace_section last", engine.EditRequest{Op: engine.ReplaceSection, Section: "Monitor", Content: "zebra watch"},
			[]string{"## Monitor\n\nzebra watch\n"}, []string{"dashboards"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, dir := writable(t, map[string]string{"ops/runbook.md": sectioned})
			c.req.ID = "ops/runbook"
			m, err := e.Edit(context.Background(), c.req)
			if err != nil {
				t.Fatal(err)
			}
			text := fileText(t, dir, "ops/runbook.md")
			for _, s := range c.contains {
				if !strings.Contains(text, s) {
					t.Errorf("file lacks %q:\n%s", s, text)
				}
			}
			for _, s := range c.lacks {
				if strings.Contains(text, s) {
					t.Errorf("file still has %q:\n%s", s, text)
				}
			}
			// Only "modified" changes in the frontmatter, formatting kept.
			if !strings.Contains(text, "tags:\n  - ops   # keep this comment\ncreated: 2025-01-02\nmodified: 20") ||
				strings.Contains(text, "modified: 2025-01-03") || !strings.Contains(text, "owner: sam\n---\n") {
				t.Errorf("frontmatter:\n%s", text)
			}
			if time.Since(m.Modified) > time.Minute {
				t.Errorf("modified %v not updated", m.Modified)
			}
			if !found(t, e, "zebra", "ops/runbook.md") {
				t.Error("the edit is not searchable at once")
			}
		})
	}
}

func TestEditRefusals(t *testing.T) {
	e, dir := writable(t, map[string]string{"ops/runbook.md": sectioned, "dup.md": "## A\nx\n## A\ny\n"})
	sum := sha256.Sum256([]byte(sectioned))
	good := hex.EncodeToString(sum[:])
	cases := []struct {
		name string
		req  engine.EditRequest
		want error
	}{
		{"stale checksum", engine.EditRequest{ID: "ops/runbook", Op: engine.Append, Content: "x", Checksum: strings.Repeat("0", 64)}, engine.ErrConflict},
		{"count mismatch", engine.EditRequest{ID: "ops/runbook", Op: engine.FindReplace, Find: "Old", Content: "x", ExpectedCount: 1}, engine.ErrNoMatch},
		{"find absent", engine.EditRequest{ID: "ops/runbook", Op: engine.FindReplace, Find: "absent", Content: "x"}, engine.ErrNoMatch},
		{"find empty", engine.EditRequest{ID: "ops/runbook", Op: engine.FindReplace, Content: "x"}, engine.ErrInvalid},
		{"frontmatter is not body", engine.EditRequest{ID: "ops/runbook", Op: engine.FindReplace, Find: "owner: sam", Content: "x"}, engine.ErrNoMatch},
		{"no section", engine.EditRequest{ID: "ops/runbook", Op: engine.ReplaceSection, Section: "Nope", Content: "x"}, engine.ErrNoMatch},
		{"heading in code", engine.EditRequest{ID: "ops/runbook", Op: engine.ReplaceSection, Section: "Not a heading", Content: "x"}, engine.ErrNoMatch},
		{"wrong level", engine.EditRequest{ID: "ops/runbook", Op: engine.ReplaceSection, Section: "# Deploy", Content: "x"}, engine.ErrNoMatch},
		{"ambiguous section", engine.EditRequest{ID: "dup", Op: engine.ReplaceSection, Section: "A", Content: "x"}, engine.ErrNoMatch},
		{"unknown op", engine.EditRequest{ID: "ops/runbook", Op: "truncate", Content: "x"}, engine.ErrInvalid},
		{"empty append", engine.EditRequest{ID: "ops/runbook", Op: engine.Append}, engine.ErrInvalid},
		{"negative count", engine.EditRequest{ID: "ops/runbook", Op: engine.FindReplace, Find: "Old", ExpectedCount: -1}, engine.ErrInvalid},
		{"NUL content", engine.EditRequest{ID: "ops/runbook", Op: engine.Append, Content: "\x00"}, engine.ErrInvalid},
		{"missing memory", engine.EditRequest{ID: "nope", Op: engine.Append, Content: "x"}, engine.ErrNotFound},
		{"traversal", engine.EditRequest{ID: "../../etc/passwd", Op: engine.Append, Content: "x"}, engine.ErrOutsideRoot},
		{"uri traversal", engine.EditRequest{ID: "memory://..%2f..%2fetc/passwd", Op: engine.Append, Content: "x"}, engine.ErrOutsideRoot},
	}
	before := treeHash(t, dir)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := e.Edit(context.Background(), c.req); !errors.Is(err, c.want) {
				t.Errorf("got %v, want %v", err, c.want)
			}
		})
	}
	if treeHash(t, dir) != before {
		t.Fatal("refused edits changed the memory folder")
	}
	// The right checksum passes, and is then stale.
	if _, err := e.Edit(context.Background(), engine.EditRequest{ID: "Runbook", Op: engine.Append, Content: "more", Checksum: strings.ToUpper(good)}); err != nil {
		t.Fatalf("edit with the current checksum: %v", err)
	}
	if _, err := e.Edit(context.Background(), engine.EditRequest{ID: "Runbook", Op: engine.Append, Content: "more", Checksum: good}); !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("edit with the old checksum: %v, want ErrConflict", err)
	}
}

func TestEditAddsFrontmatterWhenMissing(t *testing.T) {
	e, dir := writable(t, map[string]string{"plain.md": "# Plain\n\nbody\n"})
	if _, err := e.Edit(context.Background(), engine.EditRequest{ID: "plain", Op: engine.Append, Content: "tail"}); err != nil {
		t.Fatal(err)
	}
	text := fileText(t, dir, "plain.md")
	if !strings.HasPrefix(text, "---\nmodified: ") || !strings.HasSuffix(text, "---\n# Plain\n\nbody\n\ntail\n") {
		t.Errorf("file:\n%s", text)
	}
}

func TestDelete(t *testing.T) {
	e, dir := writable(t, map[string]string{"a.md": "# Alpha\naardvark\n", "b.md": "# Beta\naardvark\n"})
	if _, err := e.Read(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	if err := e.Delete(context.Background(), "memory://a"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("file still there: %v", err)
	}
	if found(t, e, "aardvark", "a.md") || !found(t, e, "aardvark", "b.md") {
		t.Error("the index does not reflect the delete")
	}
	if _, err := e.Read(context.Background(), "a"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("read after delete: %v", err)
	}
	recent, _ := e.Recent(context.Background(), 0, 0)
	for _, a := range recent {
		if a.Path == "a.md" {
			t.Error("a deleted memory is still recent")
		}
	}
	before := treeHash(t, dir)
	for _, id := range []string{"", "a", "../b", "/etc/passwd", "memory://../../etc/passwd", "b\x00", "%2e%2e/b"} {
		if err := e.Delete(context.Background(), id); err == nil {
			t.Errorf("Delete(%q) succeeded", id)
		}
	}
	if treeHash(t, dir) != before {
		t.Error("refused deletes changed the memory folder")
	}
}

// TestChangesAfterCloseRefused: a closed engine changes no memory file. A
// serve that stops hands the index to another, which may write the same
// files at once; a write, edit, delete or move that reached the old one
// late must be refused, not made behind the new writer's back.
func TestChangesAfterCloseRefused(t *testing.T) {
	e, dir := writable(t, map[string]string{"a.md": "# Alpha\naardvark\n"})
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	before := treeHash(t, dir)
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		change func() error
	}{
		{"write", func() error {
			_, err := e.Write(ctx, engine.WriteRequest{Title: "Late", Content: "late words"})
			return err
		}},
		{"edit", func() error {
			_, err := e.Edit(ctx, engine.EditRequest{ID: "a", Op: engine.Append, Content: "late words"})
			return err
		}},
		{"delete", func() error { return e.Delete(ctx, "a") }},
		{"move", func() error {
			_, err := e.Move(ctx, "a", "elsewhere/a")
			return err
		}},
	} {
		if err := c.change(); !errors.Is(err, engine.ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", c.name, err)
		}
	}
	if treeHash(t, dir) != before {
		t.Error("changes refused after Close changed the memory folder")
	}
}

func TestMoveKeepsReadTime(t *testing.T) {
	e, dir := writable(t, map[string]string{"inbox/idea.md": "---\ntitle: Idea\ncreated: 2020-01-01\n---\nwombat\n", "taken.md": "# Taken\n"})
	r, err := e.Read(context.Background(), "Idea")
	if err != nil {
		t.Fatal(err)
	}
	m, err := e.Move(context.Background(), "inbox/idea", "archive/")
	if err != nil {
		t.Fatal(err)
	}
	if m.Path != "archive/idea.md" || !m.LastRead.Equal(r.LastRead) {
		t.Fatalf("moved to %q, last read %v (was %v)", m.Path, m.LastRead, r.LastRead)
	}
	if found(t, e, "wombat", "inbox/idea.md") || !found(t, e, "wombat", "archive/idea.md") {
		t.Error("the index does not reflect the move")
	}
	m, err = e.Move(context.Background(), m.URI, "archive/2020/old idea")
	if err != nil || m.Path != "archive/2020/old idea.md" {
		t.Fatalf("move with a new name: %q, %v", m.Path, err)
	}
	recent, err := e.Recent(context.Background(), 1, time.Hour)
	if err != nil || len(recent) != 1 || recent[0].Path != m.Path || recent[0].Event != "read" || !recent[0].At.Equal(r.LastRead) {
		t.Fatalf("recent after moves: %+v, %v", recent, err)
	}
	before := treeHash(t, dir)
	for _, c := range []struct {
		dst  string
		want error
	}{
		{"taken", engine.ErrExists},
		{"taken.md", engine.ErrExists},
		{"../outside", engine.ErrOutsideRoot},
		{"/tmp/x", engine.ErrOutsideRoot},
		{"..%2foutside", engine.ErrOutsideRoot},
		{"a\x00b", engine.ErrOutsideRoot},
		{".hidden/x", engine.ErrInvalid},
		{"", engine.ErrInvalid},
	} {
		if _, err := e.Move(context.Background(), m.Path, c.dst); !errors.Is(err, c.want) {
			t.Errorf("Move to %q: %v, want %v", c.dst, err, c.want)
		}
	}
	if treeHash(t, dir) != before {
		t.Error("refused moves changed the memory folder")
	}
}

func TestList(t *testing.T) {
	e, dir := writable(t, map[string]string{
		"top.md":            "---\ntitle: Top\ncreated: 2020-01-01\n---\nx\n",
		"notes/a.md":        "# A\n",
		"notes/deep/b.md":   "# B\n",
		"notes/.hidden.md":  "# Hidden\n",
		".obsidian/conf.md": "x",
		"notes/readme.txt":  "not a memory",
	})
	os.WriteFile(filepath.Join(dir, "new.md"), []byte("# New\n"), 0o644) // not synced
	l, err := e.List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Folders) != 1 || l.Folders[0] != (engine.FolderEntry{Path: "notes", Memories: 2}) {
		t.Errorf("folders %+v", l.Folders)
	}
	if len(l.Files) != 2 || l.Files[0].Path != "new.md" || l.Files[1].Path != "top.md" {
		t.Fatalf("files %+v", l.Files)
	}
	if n, top := l.Files[0], l.Files[1]; n.Indexed || !top.Indexed || top.Title != "Top" || top.DecayWeight >= 1 || top.DecayWeight < 0 || n.DecayWeight != 1 {
		t.Errorf("entries %+v", l.Files)
	}
	l, err = e.List(context.Background(), "notes")
	if err != nil || len(l.Files) != 1 || l.Files[0].Path != "notes/a.md" || len(l.Folders) != 1 || l.Folders[0].Path != "notes/deep" {
		t.Errorf("notes: %+v, %v", l, err)
	}
	for _, f := range []string{"../", "/etc", "nope", "%2e%2e", "top.md"} {
		if _, err := e.List(context.Background(), f); err == nil {
			t.Errorf("List(%q) succeeded", f)
		}
	}
}

func TestRecent(t *testing.T) {
	e, _ := writable(t, map[string]string{
		"old.md":   "---\ntitle: Old\nmodified: 2020-01-01\n---\nx\n",
		"older.md": "---\ntitle: Older\nmodified: 2019-01-01\n---\nx\n",
	})
	w := mustWrite(t, e, engine.WriteRequest{Title: "Fresh", Content: "x"})
	if _, err := e.Read(context.Background(), "older"); err != nil {
		t.Fatal(err)
	}
	all, err := e.Recent(context.Background(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range all {
		got = append(got, a.Path+":"+a.Event)
	}
	if strings.Join(got, " ") != "older.md:read "+w.Path+":modified old.md:modified" {
		t.Errorf("recent: %v", got)
	}
	if day, _ := e.Recent(context.Background(), 0, 24*time.Hour); len(day) != 2 {
		t.Errorf("last day: %+v", day)
	}
	if one, _ := e.Recent(context.Background(), 1, 0); len(one) != 1 || one[0].Path != "older.md" {
		t.Errorf("limit 1: %+v", one)
	}
	if _, err := e.Recent(context.Background(), -1, 0); !errors.Is(err, engine.ErrInvalid) {
		t.Errorf("negative limit: %v", err)
	}
}

func TestWriteOpsReadOnly(t *testing.T) {
	e, dir := writable(t, map[string]string{"a.md": "# A\n"})
	e.Close()
	closed[e] = true
	ro, err := engine.Open(context.Background(), engine.Config{MemoryDir: dir, IndexDir: filepath.Join(filepath.Dir(dir), "index"), ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	ctx := context.Background()
	_, werr := ro.Write(ctx, engine.WriteRequest{Title: "x"})
	_, eerr := ro.Edit(ctx, engine.EditRequest{ID: "a", Op: engine.Append, Content: "x"})
	_, merr := ro.Move(ctx, "a", "b")
	for _, err := range []error{werr, eerr, merr, ro.Delete(ctx, "a")} {
		if !errors.Is(err, engine.ErrReadOnly) {
			t.Errorf("got %v, want ErrReadOnly", err)
		}
	}
}
