//go:build unix

package engine_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"mnemo/engine"
)

// treeDigest hashes a folder tree — names, types, modes, link targets and
// contents — so a test can prove nothing in it changed.
func treeDigest(t *testing.T, root string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %v %d\n", p, fi.Mode(), fi.Size())
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			fmt.Fprintf(h, "-> %s\n", l)
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestHostileVault: a memory folder holding every kind of entry an agent,
// a careless user or an attacker can leave there — links in and out of it,
// links to devices, device nodes, FIFOs, sockets, unreadable files and
// folders, 50 MB files, invalid UTF-8 in names and contents, deep nesting,
// a folder of 10,000 entries. Sync, search, list, read, write, edit and the
// watcher over it never hang, crash, index anything but regular files
// inside it, or touch anything outside it (hashed before and after).
func TestHostileVault(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 10,000-entry folder and two 50 MB files")
	}
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.md"), []byte("---\ntitle: hostile secret\n---\nhostile outside secret\n"), 0o644)
	os.MkdirAll(filepath.Join(outside, "dir"), 0o755)
	os.WriteFile(filepath.Join(outside, "dir", "inner.md"), []byte("hostile outside inner\n"), 0o644)
	outsideBefore := treeDigest(t, outside)
	t0 := time.Now()
	t.Cleanup(func() { t.Logf("cleanup starts at %s", time.Since(t0)) })

	v := newVault(t, map[string]string{
		"ok.md":                      memo("Fine", "", nil, "hostile regular memory"),
		"sub/ok2.md":                 memo("Fine two", "", nil, "hostile regular nested"),
		"node_modules/pkg/README.md": "hostile dependency readme",
		"bad-utf8.md":                "---\ntitle: broken\n---\nhostile \xff\xfe bytes\n",
		"name-\xff.md":               "hostile invalid file name",
	})
	links := map[string]string{
		"out.md":      filepath.Join(outside, "secret.md"),
		"outdir":      filepath.Join(outside, "dir"),
		"rel-out.md":  "../../" + filepath.Base(outside) + "/secret.md",
		"zero.md":     "/dev/zero",
		"null.md":     "/dev/null",
		"urandom.md":  "/dev/urandom",
		"alias.md":    "ok.md",
		"dangling.md": "nowhere.md",
		"sub/up":      "..",
		"sub/self.md": "self.md",
	}
	for l, target := range links {
		if err := os.Symlink(target, v.abs(l)); err != nil {
			t.Fatal(err)
		}
	}
	mkfifo(t, v.abs("pipe.md"))
	mkfifo(t, v.abs("sub/pipe.md"))
	sock, err := net.Listen("unix", v.abs("sock.md"))
	if err != nil {
		t.Fatalf("socket: %v", err)
	}
	defer sock.Close()
	if os.Geteuid() == 0 {
		// A device node inside the vault: /dev/zero's (char 1,5).
		if err := syscall.Mknod(v.abs("dev.md"), syscall.S_IFCHR|0o644, 1<<8|5); err != nil {
			t.Logf("mknod: %v (no device node in this run)", err)
		}
	}
	v.write("locked.md", memo("Locked", "", nil, "hostile locked"))
	os.Chmod(v.abs("locked.md"), 0)
	v.write("shut/in.md", memo("Shut", "", nil, "hostile shut"))
	os.Chmod(v.abs("shut"), 0)
	t.Cleanup(func() { os.Chmod(v.abs("shut"), 0o755) })
	// 50 MB files, sparse so the test does not write 100 MB: one that
	// starts like a memory, one all zeros.
	for name, head := range map[string]string{"big.md": memo("Big", "", nil, "hostile big"), "sparse.md": ""} {
		v.write(name, head)
		if err := os.Truncate(v.abs(name), 50<<20); err != nil {
			t.Fatal(err)
		}
	}
	deep := strings.Repeat("d/", 100) + "deep.md"
	v.write(deep, memo("Deep", "", nil, "hostile deep"))
	// A folder of 10,000 entries: 100 memories, and 9,900 hard links to
	// one text file (creating 9,900 files costs seconds on a busy disk).
	v.write("many/f00000.txt", "not a memory")
	for i := range 10000 {
		var err error
		if i%100 == 0 {
			err = os.WriteFile(v.abs(fmt.Sprintf("many/m%05d.md", i)), []byte(memo(fmt.Sprintf("Many %d", i), "", nil, "hostile many")), 0o644)
		} else {
			err = os.Link(v.abs("many/f00000.txt"), v.abs(fmt.Sprintf("many/f%05d.txt", i)))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	wantIndexed := []string{"bad-utf8.md", deep, "name-\xff.md", "ok.md", "sub/ok2.md"}
	for i := 0; i < 10000; i += 100 {
		wantIndexed = append(wantIndexed, fmt.Sprintf("many/m%05d.md", i))
	}
	if os.Geteuid() == 0 {
		wantIndexed = append(wantIndexed, "locked.md", "shut/in.md") // root reads mode 000
	}
	slices.Sort(wantIndexed)

	ctx := context.Background()
	start := time.Now()
	t.Logf("vault built in %s", time.Since(t0))
	guard := func(what string, f func()) {
		within(t, what, 60*time.Second, f)
		t.Logf("%s done at %s", what, time.Since(start))
	}
	var rep engine.Report
	guard("Sync", func() { rep = v.sync() })
	guard("second Sync", func() { v.sync() })
	var st engine.Status
	guard("Status", func() { st = v.status() })
	if st.Files != len(wantIndexed) {
		t.Errorf("%d files indexed, want %d", st.Files, len(wantIndexed))
	}
	skipped := map[string]string{}
	for _, s := range rep.Skipped {
		skipped[s.Path] = s.Reason
	}
	for _, p := range []string{"out.md", "rel-out.md", "zero.md", "null.md", "urandom.md", "alias.md", "dangling.md", "pipe.md", "sub/pipe.md", "sock.md", "big.md", "sparse.md"} {
		if skipped[p] == "" {
			t.Errorf("%s not reported as skipped (skipped: %v)", p, sortedKeys(skipped))
		}
	}
	if os.Geteuid() != 0 && !strings.Contains(skipped["locked.md"], "permission denied") {
		t.Errorf("locked.md skipped with %q, want permission denied", skipped["locked.md"])
	}

	var found []string
	guard("Search", func() {
		for _, mode := range []engine.Mode{engine.FullText, engine.Hybrid, engine.Semantic} {
			p := v.search(engine.Query{Text: "hostile", Mode: mode, PageSize: 200})
			for _, r := range p.Results {
				if !slices.Contains(wantIndexed, r.Path) {
					t.Errorf("%s search found %s, which is not a regular memory inside the vault", mode, r.Path)
				}
			}
			if mode == engine.FullText {
				found = sorted(paths(p))
			}
		}
	})
	if len(found) < len(wantIndexed)-2 { // bad-utf8 and the invalid name may not say "hostile" intact
		t.Errorf("full-text search found %d of %d memories: %v", len(found), len(wantIndexed), found)
	}
	guard("List", func() {
		for _, folder := range []string{"", "sub", "many", "d", "sub/up", "node_modules"} {
			l, err := v.e.List(ctx, folder)
			if err != nil {
				if folder != "node_modules" {
					t.Errorf("List(%q): %v", folder, err)
				}
				continue
			}
			for _, f := range l.Files {
				// Files over the size limit are regular memories too,
				// listed as not indexed.
				tooBig := (f.Path == "big.md" || f.Path == "sparse.md") && !f.Indexed
				if !slices.Contains(wantIndexed, f.Path) && !tooBig {
					t.Errorf("List(%q) shows %s", folder, f.Path)
				}
			}
		}
	})
	specials := []string{"out", "rel-out", "zero", "null", "urandom", "dangling", "pipe", "sock", "big", "sparse", "dev", "outdir/inner", "sub/up/ok", "sub/self"}
	guard("Read, Edit, Write over the special entries", func() {
		for _, id := range specials {
			if m, err := v.e.Read(ctx, id); err == nil && m.Path != "ok.md" {
				t.Errorf("Read(%q) = %s", id, m.Path) // only the in-vault link sub/up → .. resolves
			}
			if _, err := v.e.Edit(ctx, engine.EditRequest{ID: id, Op: engine.Append, Content: "x"}); err == nil && id != "sub/up/ok" {
				t.Errorf("Edit(%q) succeeded", id)
			}
			title := strings.TrimPrefix(id, "sub/")
			if _, err := v.e.Write(ctx, engine.WriteRequest{Title: title, Content: "mine", Overwrite: true}); err != nil && !strings.Contains(err.Error(), "invalid") {
				t.Logf("Write(%q): %v", title, err)
			}
		}
	})
	guard("Edit of a regular memory", func() {
		if _, err := v.e.Edit(ctx, engine.EditRequest{ID: "ok.md", Op: engine.Append, Content: "hostile appended"}); err != nil {
			t.Errorf("Edit(ok.md): %v", err)
		}
	})
	applied := watching(t, v, engine.WatchOptions{Debounce: 20 * time.Millisecond})
	t.Logf("watching at %s", time.Since(start))
	v.write("late.md", memo("Late", "", nil, "hostile late lemur"))
	eventually(t, applied, "late.md indexed by the watcher", func() bool {
		return slices.Equal(v.find(engine.FullText, "lemur"), []string{"late.md"})
	})

	t.Logf("late.md indexed at %s", time.Since(start))
	if got := treeDigest(t, outside); got != outsideBefore {
		t.Errorf("the tree outside the vault changed")
	}
	for l := range links {
		if fi, err := os.Lstat(v.abs(l)); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%s is no longer a symlink (%v)", l, err)
		}
	}
	for _, p := range []string{"pipe.md", "sub/pipe.md"} {
		if fi, err := os.Lstat(v.abs(p)); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
			t.Errorf("%s is no longer a FIFO (%v)", p, err)
		}
	}
}
