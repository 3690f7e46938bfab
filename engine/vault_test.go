//go:build unix

package engine_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"mnemo/engine"
)

// within runs f and fails the test if it has not returned after limit: the
// defects below hung (a FIFO) or ran out of memory (/dev/zero) instead of
// returning an error.
func within(t *testing.T, what string, limit time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(limit):
		t.Fatalf("%s did not return within %s", what, limit)
	}
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
}

// TestWriteTitleLookupSpecialFiles: Write looks for an existing memory with
// the same title among slug.md, slug-2.md, …. It used to read those with a
// plain read, through links and special files: /dev/zero ran the server out
// of memory, a FIFO hung it holding the write lock, and a link to an outside
// file got that file's title quoted (or, with overwrite, the link replaced).
// Now such names are passed over without being opened.
func TestWriteTitleLookupSpecialFiles(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "outside.md")
	secretText := "---\ntitle: outside\n---\nthe outside secret\n"
	if err := os.WriteFile(secret, []byte(secretText), 0o644); err != nil {
		t.Fatal(err)
	}
	v := newVault(t, nil)
	for link, target := range map[string]string{"zero.md": "/dev/zero", "outside.md": secret, "null.md": "/dev/null"} {
		if err := os.Symlink(target, v.abs(link)); err != nil {
			t.Fatal(err)
		}
	}
	mkfifo(t, v.abs("pipe.md"))
	ctx := context.Background()
	for _, title := range []string{"zero", "pipe", "outside", "null"} {
		for _, overwrite := range []bool{false, true} {
			var m engine.Memory
			var err error
			within(t, "Write "+title, 10*time.Second, func() {
				m, err = v.e.Write(ctx, engine.WriteRequest{Title: title, Content: "mine", Overwrite: overwrite})
			})
			switch {
			case err != nil && strings.Contains(err.Error(), "secret"):
				t.Errorf("Write %q leaked the outside file: %v", title, err)
			case err != nil && !overwrite:
				t.Errorf("Write %q: %v; want it written beside the special file", title, err)
			case err == nil && m.Path == title+".md":
				t.Errorf("Write %q (overwrite %v) replaced the special entry %s", title, overwrite, m.Path)
			}
		}
	}
	// The write lock was not left held: a plain write still goes through.
	within(t, "a later Write", 10*time.Second, func() {
		if _, err := v.e.Write(ctx, engine.WriteRequest{Title: "later", Content: "fine"}); err != nil {
			t.Errorf("later Write: %v", err)
		}
	})
	for _, link := range []string{"zero.md", "outside.md", "null.md"} {
		if fi, err := os.Lstat(v.abs(link)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer a symlink (%v)", link, err)
		}
	}
	if got, _ := os.ReadFile(secret); string(got) != secretText {
		t.Errorf("outside file changed: %q", got)
	}
}

// TestSpecialFilesRefused: every operation that names a link, a FIFO or a
// folder where a memory file belongs refuses it at once with a clear error,
// and never touches what lies outside.
func TestSpecialFilesRefused(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.md")
	os.WriteFile(secret, []byte("---\ntitle: Secret\n---\ntop secret\n"), 0o644)
	v := newVault(t, map[string]string{"real.md": memo("Real", "", nil, "the real one")})
	os.Symlink(secret, v.abs("out.md"))
	os.Symlink("real.md", v.abs("alias.md"))
	mkfifo(t, v.abs("pipe.md"))
	ctx := context.Background()
	cases := []struct {
		id   string
		want error
	}{
		{"pipe", engine.ErrNotRegular},
		{"pipe.md", engine.ErrNotRegular},
		{"out", engine.ErrOutsideRoot},
	}
	for _, c := range cases {
		ops := map[string]func() error{
			"Read": func() error { _, err := v.e.Read(ctx, c.id); return err },
			"Edit": func() error {
				_, err := v.e.Edit(ctx, engine.EditRequest{ID: c.id, Op: engine.Append, Content: "x"})
				return err
			},
			"Move":   func() error { _, err := v.e.Move(ctx, c.id, "moved"); return err },
			"Delete": func() error { return v.e.Delete(ctx, c.id) },
		}
		for name, op := range ops {
			var err error
			within(t, name+" "+c.id, 10*time.Second, func() { err = op() })
			if !errors.Is(err, c.want) {
				t.Errorf("%s(%q) = %v, want %v", name, c.id, err, c.want)
			}
		}
	}
	// An in-vault link resolves to the one real memory, not a second one.
	m, err := v.e.Read(ctx, "alias")
	if err != nil || m.Path != "real.md" {
		t.Errorf("Read(alias) = %q, %v; want real.md", m.Path, err)
	}
	rep := v.sync()
	if len(rep.Added) != 0 {
		t.Errorf("sync added %v; links and FIFOs are not memories", rep.Added)
	}
	skipped := map[string]string{}
	for _, s := range rep.Skipped {
		skipped[s.Path] = s.Reason
	}
	for p, kind := range map[string]string{"pipe.md": "named pipe", "out.md": "symbolic link", "alias.md": "symbolic link"} {
		if !strings.Contains(skipped[p], kind) {
			t.Errorf("sync skipped %s with %q, want it named %s", p, skipped[p], kind)
		}
	}
	if got, _ := os.ReadFile(secret); !bytes.Contains(got, []byte("top secret")) {
		t.Errorf("outside file changed: %q", got)
	}
}

// TestListStaysInside: List showed (and statted) a link's target outside
// the vault as if it were a memory; it lists regular files only.
func TestListStaysInside(t *testing.T) {
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.md"), []byte("top secret\n"), 0o644)
	os.MkdirAll(filepath.Join(outside, "dir"), 0o755)
	v := newVault(t, map[string]string{"a.md": memo("A", "", nil, "alpha")})
	os.Symlink(filepath.Join(outside, "secret.md"), v.abs("leak.md"))
	os.Symlink(filepath.Join(outside, "dir"), v.abs("outdir"))
	mkfifo(t, v.abs("pipe.md"))
	l, err := v.e.List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	var files, folders []string
	for _, f := range l.Files {
		files = append(files, f.Path)
	}
	for _, f := range l.Folders {
		folders = append(folders, f.Path)
	}
	if !slices.Equal(files, []string{"a.md"}) || len(folders) != 0 {
		t.Errorf("List = files %v folders %v, want [a.md] and no folders", files, folders)
	}
	if _, err := v.e.List(context.Background(), "outdir"); !errors.Is(err, engine.ErrOutsideRoot) {
		t.Errorf("List(outdir) = %v, want ErrOutsideRoot", err)
	}
}

// TestEditNULRefusedBeforeWriting: a memory file with a NUL byte is not
// indexable; Edit used to write it anyway and then report "not indexed".
// It must refuse and leave the file byte for byte as it was.
func TestEditNULRefusedBeforeWriting(t *testing.T) {
	v := newVault(t, nil)
	orig := "---\ntitle: Blob\n---\nbinary \x00 junk\n"
	v.write("blob.md", orig)
	v.sync()
	for _, op := range []engine.EditRequest{
		{ID: "blob.md", Op: engine.Append, Content: "more"},
		{ID: "blob.md", Op: engine.FindReplace, Find: "junk", Content: "stuff"},
	} {
		_, err := v.e.Edit(context.Background(), op)
		if !errors.Is(err, engine.ErrInvalid) {
			t.Errorf("Edit %s of a file with NUL = %v, want ErrInvalid", op.Op, err)
		}
		if got, _ := os.ReadFile(v.abs("blob.md")); string(got) != orig {
			t.Errorf("Edit %s changed the file: %q", op.Op, got)
		}
	}
}

// TestNFCTitles: "Café" typed precomposed (NFC) and decomposed (NFD) is one
// title: one file, found by either spelling. It used to make café.md and
// cafe\u0301.md.
func TestNFCTitles(t *testing.T) {
	v := newVault(t, nil)
	ctx := context.Background()
	nfc, nfd := "Caf\u00e9", "Cafe\u0301"
	m, err := v.e.Write(ctx, engine.WriteRequest{Title: nfc, Content: "espresso"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.e.Write(ctx, engine.WriteRequest{Title: nfd, Content: "espresso"}); !errors.Is(err, engine.ErrExists) {
		t.Errorf("Write of the NFD spelling = %v, want ErrExists (same memory)", err)
	}
	if _, err := v.e.Write(ctx, engine.WriteRequest{Title: nfd, Content: "latte", Overwrite: true}); err != nil {
		t.Errorf("overwrite through the NFD spelling: %v", err)
	}
	entries, _ := os.ReadDir(v.dir)
	if len(entries) != 1 || entries[0].Name() != m.Path {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("files %q, want only %q", names, m.Path)
	}
	for _, id := range []string{nfc, nfd, "cafe\u0301.md", m.Path} {
		if got, err := v.e.Resolve(id); err != nil || got != m.Path {
			t.Errorf("Resolve(%q) = %q, %v; want %q", id, got, err, m.Path)
		}
	}
	if _, err := v.e.Write(ctx, engine.WriteRequest{Title: "x", Folder: "caf\u0065\u0301s", Content: "y"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(v.abs("caf\u00e9s")); err != nil {
		t.Errorf("a folder named in NFD was not created in NFC: %v", err)
	}
}

// TestFolderLinkNoDuplicate: a path through an in-vault folder link
// (a/up → ..) names a file the scan already indexes under its real path;
// syncing it by that path used to index it a second time.
func TestFolderLinkNoDuplicate(t *testing.T) {
	v := newVault(t, map[string]string{"x.md": memo("X", "", nil, "the xerus"), "a/y.md": memo("Y", "", nil, "the yak")})
	if err := os.Symlink("..", v.abs("a/up")); err != nil {
		t.Fatal(err)
	}
	rep := v.syncPaths("a/up/x.md", "a/up")
	if len(rep.Added) != 0 {
		t.Errorf("SyncPaths through a/up added %v", rep.Added)
	}
	if got := v.find(engine.FullText, "xerus"); !slices.Equal(got, []string{"x.md"}) {
		t.Errorf("xerus → %v, want [x.md]", got)
	}
	if l, err := v.e.List(context.Background(), "a/up/a"); err != nil || l.Folder != "a" {
		t.Errorf("List(a/up/a) = %q, %v; want the real folder a", l.Folder, err)
	}
}

// TestMnemoignore: the vault's .mnemoignore (gitignore syntax) decides, with
// the defaults, what sync indexes; "!" brings a default back; the watcher
// follows the same rules and re-syncs when the file changes.
func TestMnemoignore(t *testing.T) {
	v := newVault(t, map[string]string{
		"keep.md":               memo("Keep", "", nil, "okapi keep"),
		"drafts/a.md":           memo("A", "", nil, "okapi draft"),
		"notes/scratch-1.md":    memo("S", "", nil, "okapi scratch"),
		"notes/deep/x/tmp.md":   memo("T", "", nil, "okapi deep tmp"),
		"notes/deep/x/fine.md":  memo("F", "", nil, "okapi deep fine"),
		"vendor/ours.md":        memo("V", "", nil, "okapi vendored but wanted"),
		"node_modules/p/r.md":   memo("N", "", nil, "okapi dependency"),
		"notes/important-1.md":  memo("I", "", nil, "okapi important"),
		"archive/2020/old.md":   memo("O", "", nil, "okapi archived"),
		"archive/2020/keep.md":  memo("K", "", nil, "okapi archived keep"),
		"other/archive/also.md": memo("Al", "", nil, "okapi other archive"),
	})
	v.write(".mnemoignore", strings.Join([]string{
		"# drafts are not memories",
		"drafts/",
		"notes/scratch-*.md",
		"**/tmp.md",
		"!vendor/",
		"/archive/",
		"*-1.md",
		"!important-1.md",
		"",
	}, "\n"))
	v.sync()
	want := []string{"archive/2020/keep.md", "keep.md", "notes/deep/x/fine.md", "notes/important-1.md", "other/archive/also.md", "vendor/ours.md"}
	want = slices.DeleteFunc(want, func(s string) bool { return strings.HasPrefix(s, "archive/") })
	if got := sorted(v.find(engine.FullText, "okapi")); !slices.Equal(got, want) {
		t.Errorf("okapi → %v, want %v", got, want)
	}
	if _, err := v.e.Write(context.Background(), engine.WriteRequest{Title: "x", Folder: "drafts", Content: "y"}); !errors.Is(err, engine.ErrInvalid) {
		t.Errorf("Write into an ignored folder = %v, want ErrInvalid", err)
	}
	// The watcher agrees, and a change to .mnemoignore takes effect.
	applied := watching(t, v, engine.WatchOptions{Debounce: 20 * time.Millisecond})
	v.write("drafts/b.md", memo("B", "", nil, "okapi second draft"))
	v.write("keep2.md", memo("Keep2", "", nil, "okapi keep two"))
	eventually(t, applied, "keep2 indexed", func() bool { return slices.Contains(v.find(engine.FullText, "okapi"), "keep2.md") })
	if slices.Contains(v.find(engine.FullText, "okapi"), "drafts/b.md") {
		t.Errorf("the watcher indexed drafts/b.md, which .mnemoignore ignores")
	}
	v.write(".mnemoignore", "keep*.md\n")
	eventually(t, applied, "new rules applied", func() bool {
		got := v.find(engine.FullText, "okapi")
		return slices.Contains(got, "drafts/b.md") && !slices.Contains(got, "keep.md")
	})
}
