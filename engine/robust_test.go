package engine_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"mnemo/engine"
)

// These tests harm an index or a memory folder the way the world does —
// a torn or garbled file, an index from a newer mnemo, a folder removed and
// made again, a symlink loop, a file nobody may read — and check that mnemo
// either repairs itself from the files or refuses clearly.

// robustFiles is the small vault the corruption tests rebuild.
var robustFiles = map[string]string{
	"a.md":        memo("A", "2024-01-01", nil, "the armadillo digs at dusk"),
	"b.md":        memo("B", "2024-01-02", nil, "the badger digs at dawn"),
	"notes/c.md":  memo("C", "2024-01-03", nil, "the coyote howls"),
	"notes/d.md":  memo("D", "2024-01-04", nil, "the dingo howls"),
	"deep/x/e.md": memo("E", "2024-01-05", nil, "the echidna waddles"),
}

// checkRebuilt syncs v and checks that every memory is found exactly once.
func checkRebuilt(t *testing.T, v *vault) engine.Report {
	t.Helper()
	rep := v.sync()
	if st := v.status(); st.Files != len(robustFiles) {
		t.Errorf("Status.Files = %d after the repair, want %d", st.Files, len(robustFiles))
	}
	for word, want := range map[string]string{"armadillo": "a.md", "badger": "b.md", "coyote": "notes/c.md", "dingo": "notes/d.md", "echidna": "deep/x/e.md"} {
		for _, m := range allModes {
			if got := v.find(m, word); count(got, want) != 1 || got[0] != want {
				t.Errorf("%s: %s → %v, want %s first and once", m, word, got, want)
			}
		}
	}
	if got := v.find(engine.FullText, "digs"); !slices.Equal(sorted(got), []string{"a.md", "b.md"}) {
		t.Errorf("digs → %v, want a.md and b.md once each", got)
	}
	return rep
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

// TestCorruptStateStoreIsRebuilt: a state store bbolt cannot read — random
// bytes, torn at any length, garbled pages behind valid meta pages — is set
// aside (state.db.corrupt-<time>, kept for a post-mortem) and the index
// rebuilt from the files at the next sync. Read times live in that file and
// are lost with it.
func TestCorruptStateStoreIsRebuilt(t *testing.T) {
	harms := []struct {
		name string
		harm func(t *testing.T, path string)
	}{
		{"random bytes", func(t *testing.T, p string) {
			b := make([]byte, 64<<10)
			x := uint64(42)
			for i := range b {
				x = x*6364136223846793005 + 1442695040888963407
				b[i] = byte(x >> 56)
			}
			writeFile(t, p, b)
		}},
		{"torn at 5000 bytes", func(t *testing.T, p string) {
			if err := os.Truncate(p, 5000); err != nil {
				t.Fatal(err)
			}
		}},
		{"torn at 16 KiB", func(t *testing.T, p string) {
			if err := os.Truncate(p, 16<<10); err != nil {
				t.Fatal(err)
			}
		}},
		{"garbled pages behind valid meta pages", func(t *testing.T, p string) {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			page := os.Getpagesize()
			for i := 2 * page; i < len(b); i++ { // pages 0 and 1 are bbolt's meta pages
				b[i] = 0xff
			}
			writeFile(t, p, b)
		}},
		{"meta pages garbled", func(t *testing.T, p string) {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			for i := 16; i < 2*os.Getpagesize(); i++ {
				b[i] ^= 0x5a
			}
			writeFile(t, p, b)
		}},
		{"emptied", func(t *testing.T, p string) {
			if err := os.Truncate(p, 0); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, h := range harms {
		t.Run(h.name, func(t *testing.T) {
			v := newVault(t, robustFiles)
			if _, err := v.e.Read(context.Background(), "a.md"); err != nil {
				t.Fatal(err)
			}
			v.close()
			state := filepath.Join(v.cfg.IndexDir, "state.db")
			h.harm(t, state)
			harmed, _ := os.ReadFile(state)

			if len(harmed) > 0 { // a reader says so and leaves the file alone
				ro := v.cfg
				ro.ReadOnly = true
				if e, err := engine.Open(context.Background(), ro); err == nil {
					e.Close()
					t.Error("read-only Open of a corrupt state store succeeded")
				} else if !strings.Contains(err.Error(), "corrupt") || strings.Contains(err.Error(), "\n") {
					t.Errorf("read-only Open: %q; want one line saying the state store is corrupt", err)
				}
				if b, _ := os.ReadFile(state); !bytes.Equal(b, harmed) {
					t.Error("read-only Open changed the corrupt state store")
				}
			}

			e, err := engine.Open(context.Background(), v.cfg)
			if err != nil {
				t.Fatalf("Open with a corrupt state store: %v; want it set aside and the index rebuilt", err)
			}
			v.e, v.closed = e, false
			rep := checkRebuilt(t, v)
			switch {
			case len(harmed) == 0: // bbolt makes an empty file a new store; the full-text index then disagrees with it
				if !rep.Full || rep.Rebuilt == "" {
					t.Errorf("sync after emptying the store: Full %v, Rebuilt %q; want a full rebuild with a reason", rep.Full, rep.Rebuilt)
				}
			case !rep.Full || !strings.Contains(rep.Rebuilt, "corrupt") || !strings.Contains(rep.Rebuilt, "read times are lost"):
				t.Errorf("sync after the repair: Full %v, Rebuilt %q; want a full rebuild that says the store was corrupt and read times are lost", rep.Full, rep.Rebuilt)
			}
			if _, ok := v.readTime("a.md"); ok {
				t.Error("a.md still has a read time; the corrupt store held it, so it should be gone")
			}
			if len(harmed) > 0 {
				kept, _ := filepath.Glob(state + ".corrupt-*")
				if len(kept) != 1 {
					t.Fatalf("corrupt state store kept as %v, want one state.db.corrupt-<time>", kept)
				}
				if b, _ := os.ReadFile(kept[0]); !bytes.Equal(b, harmed) {
					t.Errorf("%s is not the corrupt file byte for byte", kept[0])
				}
			}
			v.reopen() // the new store is sound
			if st := v.status(); st.Files != len(robustFiles) {
				t.Errorf("after reopening the rebuilt index: %d files, want %d", st.Files, len(robustFiles))
			}
		})
	}
}

func writeFile(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// setMeta writes key=value into the meta bucket of a closed index's state
// store, as another version of mnemo would.
func setMeta(t *testing.T, indexDir, key, value string) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(indexDir, "state.db"), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("meta"))
		if err != nil {
			return err
		}
		return b.Put([]byte(key), []byte(value))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// treeSums maps every file below dir to its SHA-256.
func treeSums(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = sha256.Sum256(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFutureSchemaIsRefused: an index written by a newer mnemo is refused
// with ErrIndexIncompatible and a message naming both versions — for
// writers and readers alike — and not one byte of it is changed.
func TestFutureSchemaIsRefused(t *testing.T) {
	v := newVault(t, robustFiles)
	v.close()
	setMeta(t, v.cfg.IndexDir, "schema", "999")
	before := treeSums(t, v.cfg.IndexDir)
	for _, readOnly := range []bool{false, true} {
		cfg := v.cfg
		cfg.ReadOnly = readOnly
		e, err := engine.Open(context.Background(), cfg)
		if err == nil {
			e.Close()
			t.Fatalf("Open(ReadOnly %v) of a schema-999 index succeeded; want it refused", readOnly)
		}
		if !errors.Is(err, engine.ErrIndexIncompatible) || !strings.Contains(err.Error(), "999") || strings.Contains(err.Error(), "\n") {
			t.Errorf("Open(ReadOnly %v): %q; want one line wrapping ErrIndexIncompatible that names schema 999", readOnly, err)
		}
	}
	after := treeSums(t, v.cfg.IndexDir)
	for p, sum := range before {
		if after[p] != sum {
			t.Errorf("%s changed although the index was refused", p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s appeared although the index was refused", p)
		}
	}
}

// getMeta reads a meta value from a closed index's state store.
func getMeta(t *testing.T, indexDir, key string) string {
	t.Helper()
	db, err := bolt.Open(filepath.Join(indexDir, "state.db"), 0o600, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v string
	db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket([]byte("meta")); b != nil {
			v = string(b.Get([]byte(key)))
		}
		return nil
	})
	return v
}

// TestOlderSchemaIsRebuilt: an index of the previous schema is rebuilt from
// the files at the next sync, read times kept, and the report says why.
func TestOlderSchemaIsRebuilt(t *testing.T) {
	v := newVault(t, robustFiles)
	if _, err := v.e.Read(context.Background(), "a.md"); err != nil {
		t.Fatal(err)
	}
	v.close()
	cur, err := strconv.Atoi(getMeta(t, v.cfg.IndexDir, "schema"))
	if err != nil {
		t.Fatalf("schema after a sync: %v", err)
	}
	if cur <= 1 {
		t.Skipf("schema %d: no older schema exists yet (0 means a first sync not finished; see TestUnversionedStateIsCurrent)", cur)
	}
	setMeta(t, v.cfg.IndexDir, "schema", strconv.Itoa(cur-1))
	v.open()
	rep := checkRebuilt(t, v)
	if !rep.Full || !strings.Contains(rep.Rebuilt, "older") {
		t.Errorf("sync of a schema-%d index: Full %v, Rebuilt %q; want a full rebuild saying the schema is older", cur-1, rep.Full, rep.Rebuilt)
	}
	if _, ok := v.readTime("a.md"); !ok {
		t.Error("a.md lost its read time in the rebuild")
	}
	v.close()
	if got := getMeta(t, v.cfg.IndexDir, "schema"); got != strconv.Itoa(cur) {
		t.Errorf("schema after the rebuild = %q, want %d", got, cur)
	}
}

// TestUnversionedStateIsCurrent: schema "0" (or none) is what a state store
// holds before its first sync completes — a first sync killed part-way —
// so it is read as the current version and finished incrementally, not
// rebuilt.
func TestUnversionedStateIsCurrent(t *testing.T) {
	v := newVault(t, robustFiles)
	v.close()
	setMeta(t, v.cfg.IndexDir, "schema", "0")
	v.open()
	rep := checkRebuilt(t, v)
	if rep.Full || rep.Unchanged != len(robustFiles) {
		t.Errorf("sync of a schema-0 index: Full %v, Unchanged %d; want an incremental no-op", rep.Full, rep.Unchanged)
	}
}

// TestTornFullTextIndexIsRebuilt complements TestCorruptFullTextIndexIsRebuilt
// (every file harmed) with one file at a time: the segments torn in half,
// the root bolt file torn, the index metadata gone.
func TestTornFullTextIndexIsRebuilt(t *testing.T) {
	harms := []struct {
		name  string
		match func(name string) bool
		harm  func(p string) error
	}{
		{"segments torn in half", func(n string) bool { return strings.HasSuffix(n, ".zap") }, func(p string) error {
			fi, err := os.Stat(p)
			if err != nil {
				return err
			}
			return os.Truncate(p, fi.Size()/2)
		}},
		{"root.bolt torn", func(n string) bool { return n == "root.bolt" }, func(p string) error { return os.Truncate(p, 100) }},
		{"index_meta.json emptied", func(n string) bool { return n == "index_meta.json" }, func(p string) error { return os.Truncate(p, 0) }},
		{"index_meta.json removed", func(n string) bool { return n == "index_meta.json" }, os.Remove},
	}
	for _, h := range harms {
		t.Run(h.name, func(t *testing.T) {
			v := newVault(t, robustFiles)
			v.close()
			n := 0
			filepath.WalkDir(filepath.Join(v.cfg.IndexDir, "fulltext.bleve"), func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() && h.match(d.Name()) {
					n++
					if err := h.harm(p); err != nil {
						t.Fatal(err)
					}
				}
				return nil
			})
			if n == 0 {
				t.Fatal("no file to harm")
			}
			v.open()
			if rep := checkRebuilt(t, v); !rep.Full {
				t.Error("sync after the harm: Full = false, want a rebuild")
			}
		})
	}
}

// TestFolderDeletedAndRecreated: a folder removed and made again under the
// same name, with one old name and one new one, between two syncs.
func TestFolderDeletedAndRecreated(t *testing.T) {
	v := newVault(t, map[string]string{
		"keep.md":     memo("Keep", "", nil, "the kestrel stays"),
		"box/old.md":  memo("Old", "", nil, "the ocelot was here"),
		"box/same.md": memo("Same", "", nil, "the first salamander"),
	})
	v.remove("box")
	v.write("box/same.md", memo("Same", "", nil, "the second sturgeon"))
	v.write("box/new.md", memo("New", "", nil, "the newt arrived"))
	rep := v.sync()
	if !slices.Equal(rep.Removed, []string{"box/old.md"}) || !slices.Equal(rep.Updated, []string{"box/same.md"}) || !slices.Equal(rep.Added, []string{"box/new.md"}) {
		t.Errorf("sync: removed %v updated %v added %v; want [box/old.md] [box/same.md] [box/new.md]", rep.Removed, rep.Updated, rep.Added)
	}
	for word, want := range map[string][]string{"ocelot": nil, "salamander": nil, "sturgeon": {"box/same.md"}, "newt": {"box/new.md"}, "kestrel": {"keep.md"}} {
		if got := v.find(engine.FullText, word); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("%s → %v, want %v", word, got, want)
		}
	}
}

// watching runs Watch on v's engine until the test ends; batch receives
// every batch's report.
func watching(t *testing.T, v *vault, opts engine.WatchOptions) *engine.Batches {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	first := true
	applied := engine.NewBatches()
	then := opts.OnBatch // the test's own hook, called after the start-up sync
	opts.OnBatch = func(r engine.Report) {
		if first {
			first = false
			close(started)
			return
		}
		if then != nil {
			then(r)
		}
		applied.Done(r)
	}
	done := make(chan error, 1)
	go func() { done <- v.e.Watch(ctx, opts) }()
	select {
	case <-started:
	case err := <-done:
		cancel()
		t.Fatalf("Watch returned before its start-up sync: %v", err)
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatal("no start-up sync")
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Watch: %v", err)
		}
	})
	return applied
}

// eventually waits until cond holds, re-checking it after each of the
// watcher's batches, and fails after 20 s.
func eventually(t *testing.T, applied *engine.Batches, what string, cond func() bool) {
	t.Helper()
	if !applied.Await(20*time.Second, cond) {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// TestWatchFolderDeletedAndRecreated: the same under the watcher, twice in
// a row and faster than the debounce, with files written into the new
// folder the instant it exists (before its watch can be in place).
func TestWatchFolderDeletedAndRecreated(t *testing.T) {
	t.Parallel() // waits on the watcher, not the CPU
	v := newVault(t, map[string]string{
		"keep.md":      memo("Keep", "", nil, "the kestrel stays"),
		"box/old.md":   memo("Old", "", nil, "the ocelot was here"),
		"box/sub/s.md": memo("Sub", "", nil, "the first salamander"),
	})
	applied := watching(t, v, engine.WatchOptions{Debounce: 30 * time.Millisecond})
	for round, word := range []string{"sturgeon", "tarantula"} {
		v.remove("box")
		v.write("box/sub/s.md", memo("Sub", "", nil, "the "+word))
		v.write("box/new.md", memo("New", "", nil, "the newt number "+word))
		eventually(t, applied, word+" indexed", func() bool {
			return slices.Equal(v.find(engine.FullText, word), []string{"box/new.md", "box/sub/s.md"}) ||
				slices.Equal(v.find(engine.FullText, word), []string{"box/sub/s.md", "box/new.md"})
		})
		for _, gone := range []string{"ocelot", "salamander"} {
			if got := v.find(engine.FullText, gone); len(got) != 0 {
				t.Errorf("round %d: %s → %v, want nothing", round, gone, got)
			}
		}
		if st := v.status(); st.Files != 3 {
			t.Errorf("round %d: %d files indexed, want 3", round, st.Files)
		}
	}
	// The recreated folder is watched: a later write in it is seen.
	v.write("box/sub/late.md", memo("Late", "", nil, "the late lemur"))
	eventually(t, applied, "lemur indexed", func() bool { return slices.Equal(v.find(engine.FullText, "lemur"), []string{"box/sub/late.md"}) })
}

// TestSymlinkLoop: folder symlinks that point back up the tree (to the
// parent, to the root, to themselves) are not followed: sync and the
// watcher terminate, and each real file is indexed once, under its own path.
func TestSymlinkLoop(t *testing.T) {
	v := newVault(t, nil)
	v.write("a/x.md", memo("X", "", nil, "the xerus burrows"))
	v.write("a/b/y.md", memo("Y", "", nil, "the yak grazes"))
	for link, target := range map[string]string{"a/b/up": "..", "a/root": "../", "a/b/self": "self", "a/b/loop.md": "loop.md"} {
		if err := os.Symlink(target, v.abs(link)); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan engine.Report, 1)
	go func() { done <- v.sync() }()
	var rep engine.Report
	select {
	case rep = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("sync did not terminate on a symlink loop")
	}
	if got := sorted(rep.Added); !slices.Equal(got, []string{"a/b/y.md", "a/x.md"}) {
		t.Errorf("sync added %v, want each real file once: [a/b/y.md a/x.md]", got)
	}
	applied := watching(t, v, engine.WatchOptions{Debounce: 20 * time.Millisecond})
	v.write("a/b/z.md", memo("Z", "", nil, "the zebu chews"))
	eventually(t, applied, "zebu indexed", func() bool { return slices.Equal(v.find(engine.FullText, "zebu"), []string{"a/b/z.md"}) })
	for word, want := range map[string]string{"xerus": "a/x.md", "yak": "a/b/y.md"} {
		if got := v.find(engine.FullText, word); !slices.Equal(got, []string{want}) {
			t.Errorf("%s → %v, want [%s]", word, got, want)
		}
	}
	if st := v.status(); st.Files != 3 {
		t.Errorf("%d files indexed, want 3", st.Files)
	}
}

// TestUnreadableFile: a memory the process may not read is skipped with the
// reason, the rest of the sync goes on, and it is indexed once it is
// readable again. Root reads anything, so the test needs another user.
func TestUnreadableFile(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root, which can read a file with mode 000")
	}
	v := newVault(t, nil)
	v.write("ok.md", memo("OK", "", nil, "the okapi"))
	v.write("locked.md", memo("Locked", "", nil, "the lynx"))
	if err := os.Chmod(v.abs("locked.md"), 0); err != nil {
		t.Fatal(err)
	}
	rep := v.sync()
	if !slices.Equal(rep.Added, []string{"ok.md"}) {
		t.Errorf("added %v, want [ok.md]", rep.Added)
	}
	if len(rep.Skipped) != 1 || rep.Skipped[0].Path != "locked.md" || !strings.Contains(rep.Skipped[0].Reason, "permission denied") {
		t.Errorf("skipped %+v, want locked.md with a permission-denied reason", rep.Skipped)
	}
	if st := v.status(); len(st.Skipped) != 1 || st.Skipped[0].Path != "locked.md" {
		t.Errorf("Status.Skipped %+v, want locked.md", st.Skipped)
	}
	os.Chmod(v.abs("locked.md"), 0o644)
	rep = v.sync()
	if !slices.Equal(rep.Added, []string{"locked.md"}) {
		t.Errorf("after chmod back: added %v, want [locked.md]", rep.Added)
	}
	if got := v.find(engine.FullText, "lynx"); !slices.Equal(got, []string{"locked.md"}) {
		t.Errorf("lynx → %v, want [locked.md]", got)
	}
	if st := v.status(); len(st.Skipped) != 0 {
		t.Errorf("Status.Skipped %+v after the fix, want none", st.Skipped)
	}
}

// readTime is a memory's recorded read time, as Recent reports it.
func (v *vault) readTime(rel string) (time.Time, bool) {
	v.t.Helper()
	acts, err := v.e.Recent(context.Background(), 1000, 0)
	if err != nil {
		v.t.Fatal(err)
	}
	for _, a := range acts {
		if a.Path == rel {
			return a.LastRead, !a.LastRead.IsZero()
		}
	}
	return time.Time{}, false
}

// TestUnreadableFolder: a folder the process may not list is skipped with a
// reason, like an unreadable file, not dropped in silence: what it holds is
// unknown, not gone, so its memories stay indexed as they were. It runs only
// as a user other than root (root can list a folder with mode 000).
func TestUnreadableFolder(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root, which can list a folder with mode 000")
	}
	v := newVault(t, map[string]string{
		"ok.md":         memo("OK", "", nil, "the okapi"),
		"shut/inner.md": memo("Inner", "", nil, "the ibex"),
	})
	if err := os.Chmod(v.abs("shut"), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(v.abs("shut"), 0o755) })
	rep := v.sync()
	reported := false
	for _, s := range rep.Skipped {
		if strings.HasPrefix(s.Path, "shut") && strings.Contains(s.Reason, "unreadable") {
			reported = true
		}
	}
	if !reported {
		t.Errorf("sync with shut/ unreadable: skipped %+v, removed %v; want shut/ reported as skipped with the reason", rep.Skipped, rep.Removed)
	}
	if len(rep.Removed) != 0 {
		t.Errorf("sync with shut/ unreadable removed %v: what it held is unknown, not gone", rep.Removed)
	}
	if got := v.find(engine.FullText, "ibex"); !slices.Equal(got, []string{"shut/inner.md"}) {
		t.Errorf("ibex → %v while shut/ is unreadable, want it kept as last indexed", got)
	}
	// Status, in this process or a later one, says so too.
	shutInStatus := func() bool {
		for _, s := range v.status().Skipped {
			if s.Path == "shut/" && strings.Contains(s.Reason, "unreadable") {
				return true
			}
		}
		return false
	}
	if v.reopen(); !shutInStatus() {
		t.Errorf("status after the sync: skipped %+v, want shut/ listed as unreadable", v.status().Skipped)
	}
	os.Chmod(v.abs("shut"), 0o755)
	v.sync()
	if shutInStatus() {
		t.Errorf("status once shut/ is readable again still lists it: %+v", v.status().Skipped)
	}
	if got := v.find(engine.FullText, "ibex"); !slices.Equal(got, []string{"shut/inner.md"}) {
		t.Errorf("ibex → %v once shut/ is readable again, want [shut/inner.md]", got)
	}
}

// TestWriteThroughFolderSymlink: a memory written into a folder that is a
// symlink back up the tree lands in the real folder, and is indexed once,
// under one path, with the watcher running too. (It once failed: Write
// indexed it under the symlinked path it was given, the watcher indexed the
// real file under its real path, and search returned both until the next
// full sync dropped the first.)
func TestWriteThroughFolderSymlink(t *testing.T) {

	v := newVault(t, map[string]string{"a/x.md": memo("X", "", nil, "the xerus")})
	if err := os.Symlink("..", v.abs("a/up")); err != nil {
		t.Fatal(err)
	}
	batches := make(chan engine.Report, 16)
	watching(t, v, engine.WatchOptions{Debounce: 20 * time.Millisecond, OnBatch: func(r engine.Report) { batches <- r }})
	m, err := v.e.Write(context.Background(), engine.WriteRequest{Folder: "a/up", Title: "Alias", Content: "the quokka"})
	if err != nil {
		t.Fatalf("Write into a/up: %v", err)
	}
	select { // the watcher's batch for the file the write created
	case <-batches:
	case <-time.After(20 * time.Second):
		t.Fatal("the watcher never reported a batch for the written file")
	}
	got := v.find(engine.FullText, "quokka")
	if len(got) != 1 {
		t.Errorf("Write returned %s; quokka → %v, want one memory", m.Path, got)
	}
	v.sync()
	if got := v.find(engine.FullText, "quokka"); len(got) != 1 {
		t.Errorf("after a sync: quokka → %v, want one memory", got)
	}
}
