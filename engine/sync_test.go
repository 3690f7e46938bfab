package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"mnemo/engine"
)

func TestSyncReport(t *testing.T) {
	v := newVault(t, nil)
	type want struct {
		added, updated, removed []string
		unchanged               int
		chunksZero              bool
	}
	steps := []struct {
		name   string
		change func()
		want   want
	}{
		{
			name: "initial",
			change: func() {
				v.write("a.md", memo("Alpha", "2025-01-01", nil, "alpha apples"))
				v.write("b.md", memo("Beta", "2025-01-02", nil, "beta bananas"))
				v.write("notes/c.md", memo("Gamma", "2025-01-03", nil, "gamma grapes"))
			},
			want: want{added: []string{"a.md", "b.md", "notes/c.md"}},
		},
		{
			name:   "no-op",
			change: func() {},
			want:   want{unchanged: 3, chunksZero: true},
		},
		{
			name: "edit, add, delete",
			change: func() {
				v.write("a.md", memo("Alpha", "2025-01-01", nil, "alpha apples and apricots"))
				v.write("d.md", memo("Delta", "2025-01-04", nil, "delta dates"))
				v.remove("b.md")
			},
			want: want{added: []string{"d.md"}, updated: []string{"a.md"}, removed: []string{"b.md"}, unchanged: 1},
		},
		{
			name: "touch without change",
			change: func() {
				later := time.Now().Add(time.Hour)
				for _, p := range []string{"a.md", "d.md"} {
					if err := os.Chtimes(v.abs(p), later, later); err != nil {
						t.Fatal(err)
					}
				}
			},
			want: want{unchanged: 3, chunksZero: true},
		},
		{
			name:   "no-op again",
			change: func() {},
			want:   want{unchanged: 3, chunksZero: true},
		},
	}
	for _, s := range steps {
		s.change()
		rep := v.sync()
		if rep.Full {
			t.Errorf("%s: Full = true, want an incremental sync", s.name)
		}
		check := func(what string, got, want []string) {
			if !slices.Equal(sorted(got), sorted(want)) && !(len(got) == 0 && len(want) == 0) {
				t.Errorf("%s: %s = %q, want %q", s.name, what, got, want)
			}
		}
		check("Added", rep.Added, s.want.added)
		check("Updated", rep.Updated, s.want.updated)
		check("Removed", rep.Removed, s.want.removed)
		if rep.Unchanged != s.want.unchanged {
			t.Errorf("%s: Unchanged = %d, want %d", s.name, rep.Unchanged, s.want.unchanged)
		}
		if len(rep.Skipped) != 0 {
			t.Errorf("%s: Skipped = %v, want none", s.name, rep.Skipped)
		}
		if s.want.chunksZero && rep.Chunks != 0 {
			t.Errorf("%s: Chunks = %d, want 0 (nothing re-embedded)", s.name, rep.Chunks)
		}
		if !s.want.chunksZero && rep.Chunks == 0 {
			t.Errorf("%s: Chunks = 0, want the new and edited files embedded", s.name)
		}
	}
	st := v.status()
	if st.Files != 3 {
		t.Errorf("Status.Files = %d, want 3", st.Files)
	}
	if st.LastSync.IsZero() {
		t.Error("Status.LastSync is zero after a sync")
	}
	// The touched file is still searchable with its content.
	if got := v.find(engine.FullText, "apricots"); !slices.Equal(got, []string{"a.md"}) {
		t.Errorf("after touch, apricots → %v, want [a.md]", got)
	}
}

func TestSearchBeforeSync(t *testing.T) {
	v := newVault(t, nil)
	v.write("a.md", "alpha")
	_, err := v.e.Search(context.Background(), engine.Query{Text: "alpha", Now: now0})
	if !errors.Is(err, engine.ErrIndexNotReady) {
		t.Fatalf("Search before the first sync: err = %v, want ErrIndexNotReady", err)
	}
}

func TestDeleteLeavesNoGhost(t *testing.T) {
	v := newVault(t, map[string]string{
		"keep.md":     memo("Keep", "2025-01-01", nil, "shared topic zebra"),
		"gone.md":     memo("Gone", "2025-01-01", nil, "shared topic zebra quokka"),
		"sub/also.md": memo("Also", "2025-01-01", nil, "shared topic zebra"),
	})
	before := v.search(engine.Query{Text: "zebra", Mode: engine.FullText})
	if before.TotalCount != 3 {
		t.Fatalf("zebra before delete: TotalCount = %d, want 3", before.TotalCount)
	}
	v.remove("gone.md")
	rep := v.sync()
	if !slices.Equal(rep.Removed, []string{"gone.md"}) {
		t.Fatalf("Removed = %v, want [gone.md]", rep.Removed)
	}
	for _, m := range allModes {
		if got := v.find(m, "quokka"); slices.Contains(got, "gone.md") {
			t.Errorf("%s: quokka still finds deleted gone.md: %v", m, got)
		}
		if got := v.find(m, "zebra"); slices.Contains(got, "gone.md") {
			t.Errorf("%s: zebra still finds deleted gone.md: %v", m, got)
		}
	}
	after := v.search(engine.Query{Text: "zebra", Mode: engine.FullText})
	if after.TotalCount != 2 {
		t.Errorf("zebra after delete: TotalCount = %d, want 2", after.TotalCount)
	}
	if st := v.status(); st.Files != 2 {
		t.Errorf("Status.Files = %d, want 2", st.Files)
	}
}

func TestRename(t *testing.T) {
	v := newVault(t, map[string]string{
		"old/name.md": memo("Platypus", "2025-01-01", nil, "the platypus lays eggs"),
		"other.md":    memo("Other", "2025-01-01", nil, "nothing to see"),
	})
	if err := os.MkdirAll(v.abs("new"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(v.abs("old/name.md"), v.abs("new/name.md")); err != nil {
		t.Fatal(err)
	}
	rep := v.sync()
	if !slices.Equal(rep.Added, []string{"new/name.md"}) || !slices.Equal(rep.Removed, []string{"old/name.md"}) {
		t.Errorf("rename: Added %v Removed %v, want [new/name.md] and [old/name.md]", rep.Added, rep.Removed)
	}
	for _, m := range allModes {
		got := v.find(m, "platypus eggs")
		if !slices.Contains(got, "new/name.md") || slices.Contains(got, "old/name.md") {
			t.Errorf("%s: platypus → %v, want new/name.md and not old/name.md", m, got)
		}
	}
}

func TestEditReindexesAndReembeds(t *testing.T) {
	v := newVault(t, map[string]string{
		"pets.md":  memo("Pets", "2025-05-01", nil, "My cats and kittens purr. The kitten chases the cat; felines nap all day."),
		"dogs.md":  memo("Dogs", "2025-05-01", nil, "Dogs and puppies bark in the park. A puppy fetches sticks."),
		"birds.md": memo("Birds", "2025-05-01", nil, "Kitten-sized birds? Sparrows and parrots sing; a cat watches the birds."),
		"money.md": memo("Money", "2025-05-01", nil, "Bank loans and interest rates."),
	}, noDecay)
	if got := v.find(engine.Semantic, "kitten"); len(got) == 0 || got[0] != "pets.md" {
		t.Fatalf("before edit, semantic kitten → %v, want pets.md first", got)
	}
	before, _ := result(v.search(engine.Query{Text: "kitten", Mode: engine.Semantic}), "pets.md")

	v.write("pets.md", memo("Pets", "2025-05-01", nil, "Quarterly finance report: revenue grew, profit margins and earnings beat the forecast."))
	rep := v.sync()
	if !slices.Equal(rep.Updated, []string{"pets.md"}) || rep.Chunks == 0 {
		t.Fatalf("edit: Updated %v Chunks %d, want [pets.md] re-embedded", rep.Updated, rep.Chunks)
	}
	if got := v.find(engine.FullText, "kittens"); slices.Contains(got, "pets.md") {
		t.Errorf("fulltext kittens still finds edited pets.md: %v", got)
	}
	if got := v.find(engine.FullText, "revenue"); !slices.Equal(got, []string{"pets.md"}) {
		t.Errorf("fulltext revenue → %v, want [pets.md]", got)
	}
	sem := v.search(engine.Query{Text: "kitten", Mode: engine.Semantic})
	if len(sem.Results) == 0 || sem.Results[0].Path == "pets.md" {
		t.Errorf("after edit, semantic kitten → %v, want something other than pets.md first", paths(sem))
	}
	if after, ok := result(sem, "pets.md"); ok && after.SemanticScore >= before.SemanticScore {
		t.Errorf("semantic kitten score of pets.md: %v after edit, %v before; the old vector is still used", after.SemanticScore, before.SemanticScore)
	}
	if got := v.find(engine.Semantic, "revenue profit"); len(got) == 0 || got[0] != "pets.md" {
		t.Errorf("semantic revenue profit → %v, want pets.md first", got)
	}
	if st := v.status(); st.Chunks != 4 {
		t.Errorf("Status.Chunks = %d, want 4 (one per short memory, no stale chunk)", st.Chunks)
	}
}

func TestFullSyncKeepsReads(t *testing.T) {
	v := newVault(t, map[string]string{
		"old.md":   memo("Ancient lore", "2020-01-01", nil, "the ancient lore of the archive"),
		"other.md": memo("Other lore", "2020-01-01", nil, "the ancient lore retold"),
	})
	now := time.Now().Add(time.Minute)
	q := engine.Query{Text: "ancient lore", Mode: engine.FullText, Now: now}
	if r, _ := result(v.search(q), "old.md"); r.Decay >= 0.95 {
		t.Fatalf("unread five-year-old memory has decay %v, want about 0.9", r.Decay)
	}
	if _, err := v.e.Read(context.Background(), "old.md"); err != nil {
		t.Fatal(err)
	}
	rep, err := v.e.Sync(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Full || len(rep.Added) != 2 {
		t.Errorf("full sync: Full %v Added %v, want true and both files", rep.Full, rep.Added)
	}
	p := v.search(q)
	if r, ok := result(p, "old.md"); !ok || r.Decay != 1 {
		t.Errorf("after Read and a full sync, old.md decay = %v (found %v), want 1", r.Decay, ok)
	}
	if r, ok := result(p, "other.md"); !ok || r.Decay >= 0.95 {
		t.Errorf("unread other.md decay = %v (found %v), want about 0.9", r.Decay, ok)
	}
}

func TestReopen(t *testing.T) {
	v := newVault(t, map[string]string{
		"a.md":     memo("Alpha", "2020-01-01", []string{"x"}, "the walrus sleeps on ice"),
		"b/c.md":   memo("Gamma", "2020-01-01", nil, "penguins huddle in the cold"),
		"b/d/e.md": memo("Epsilon", "2020-01-01", nil, "seals swim under the ice"),
		"zh.md":    memo("会议", "2020-01-01", nil, "数据库迁移计划"), // no word the embedder knows
	})
	if _, err := v.e.Read(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	before := v.status()
	v.reopen()
	after := v.status()
	if after.Files != before.Files || after.Chunks != before.Chunks || after.Files != 4 {
		t.Errorf("after reopen: Files %d Chunks %d, before %d %d", after.Files, after.Chunks, before.Files, before.Chunks)
	}
	if !after.LastSync.Equal(before.LastSync) {
		t.Errorf("LastSync %v after reopen, %v before", after.LastSync, before.LastSync)
	}
	now := time.Now().Add(time.Minute)
	for _, m := range allModes {
		p := v.search(engine.Query{Text: "walrus ice", Mode: m, Now: now})
		if len(p.Results) == 0 || p.Results[0].Path != "a.md" {
			t.Errorf("%s after reopen without sync: walrus → %v, want a.md first", m, paths(p))
			continue
		}
		if d := p.Results[0].Decay; d != 1 {
			t.Errorf("%s: a.md was read before reopen, decay = %v, want 1", m, d)
		}
	}
	// Nothing changed on disk, so a sync after reopen has nothing to do.
	rep := v.sync()
	if rep.Full || rep.Unchanged != 4 || len(rep.Added)+len(rep.Updated)+len(rep.Removed) != 0 {
		t.Errorf("sync after reopen: %+v, want 4 unchanged", rep)
	}
}

func TestSkips(t *testing.T) {
	big := memo("Big", "", nil, strings.Repeat("enormous ", 200))
	v := newVault(t, nil, maxBytes(1000))
	v.writeAll(map[string]string{
		"ok.md":     memo("Ok", "", nil, "ordinary hedgehog"),
		"binary.md": "hedgehog\x00binary",
		"big.md":    big,
	})
	rep := v.sync()
	check := func(label string, skips []engine.Skip) {
		t.Helper()
		got := map[string]string{}
		for _, s := range skips {
			got[s.Path] = s.Reason
		}
		if len(got) != 2 {
			t.Errorf("%s: skipped %v, want binary.md and big.md", label, skips)
		}
		if r := got["binary.md"]; !strings.Contains(strings.ToLower(r), "nul") && !strings.Contains(strings.ToLower(r), "binary") {
			t.Errorf("%s: binary.md reason %q, want it to say NUL or binary", label, r)
		}
		if r := got["big.md"]; !strings.Contains(r, "1000") {
			t.Errorf("%s: big.md reason %q, want it to name the 1000-byte limit", label, r)
		}
	}
	check("Report.Skipped", rep.Skipped)
	check("Status.Skipped", v.status().Skipped)
	if got := v.find(engine.FullText, "hedgehog"); !slices.Equal(got, []string{"ok.md"}) {
		t.Errorf("hedgehog → %v, want only ok.md", got)
	}
	if got := v.find(engine.FullText, "enormous"); len(got) != 0 {
		t.Errorf("enormous → %v, want nothing (big.md is skipped)", got)
	}

	// Fix both: they are indexed and no longer skipped.
	v.write("binary.md", memo("Binary", "", nil, "hedgehog text now"))
	v.write("big.md", memo("Big", "", nil, "enormous no more"))
	rep = v.sync()
	if !slices.Equal(sorted(rep.Added), []string{"big.md", "binary.md"}) || len(rep.Skipped) != 0 {
		t.Errorf("after fix: Added %v Skipped %v, want both added, none skipped", rep.Added, rep.Skipped)
	}
	if s := v.status().Skipped; len(s) != 0 {
		t.Errorf("Status.Skipped after fix = %v, want none", s)
	}
	if got := v.find(engine.FullText, "enormous"); !slices.Equal(got, []string{"big.md"}) {
		t.Errorf("enormous after fix → %v, want [big.md]", got)
	}

	// An indexed file that grows over the limit leaves the index.
	v.write("ok.md", big)
	rep = v.sync()
	if len(rep.Skipped) != 1 || rep.Skipped[0].Path != "ok.md" {
		t.Errorf("grown ok.md: Skipped %v, want [ok.md]", rep.Skipped)
	}
	if got := v.find(engine.FullText, "ordinary"); len(got) != 0 {
		t.Errorf("ordinary → %v after ok.md was skipped, want nothing", got)
	}
	// A skipped file that is deleted is no longer reported.
	v.remove("ok.md")
	v.sync()
	if s := v.status().Skipped; len(s) != 0 {
		t.Errorf("Status.Skipped after deleting the skipped file = %v, want none", s)
	}
}

func TestMalformedFrontmatterWarns(t *testing.T) {
	v := newVault(t, map[string]string{
		"bad.md":  "---\ntitle: [unclosed\ntags: {\n---\nThe capybara is indexed anyway.\n",
		"good.md": memo("Good", "", nil, "fine"),
	})
	if got := v.find(engine.FullText, "capybara"); !slices.Equal(got, []string{"bad.md"}) {
		t.Errorf("capybara → %v, want [bad.md]", got)
	}
	ws := v.status().Warnings
	if len(ws) == 0 || ws[0].Path != "bad.md" || !strings.Contains(ws[0].Message, "frontmatter") {
		t.Errorf("Status.Warnings = %v, want a frontmatter warning for bad.md", ws)
	}
	for _, w := range ws {
		if w.Path == "good.md" {
			t.Errorf("unexpected warning for good.md: %v", w)
		}
	}
	// Fixing the file clears its warning; the sync that indexed it reported it.
	v.write("bad.md", memo("Fixed", "", nil, "The capybara is fine now."))
	rep := v.sync()
	if len(rep.Warnings) != 0 {
		t.Errorf("sync of the fixed file warned: %v", rep.Warnings)
	}
	if ws := v.status().Warnings; len(ws) != 0 {
		t.Errorf("Status.Warnings after the fix = %v, want none", ws)
	}
	v.write("bad.md", "---\ntitle: broken\nno closing fence\n")
	rep = v.sync()
	if len(rep.Warnings) != 1 || rep.Warnings[0].Path != "bad.md" {
		t.Errorf("Report.Warnings = %v, want one for bad.md", rep.Warnings)
	}
}

// TestScanIgnores: hidden entries, the index folder, files without a memory
// extension and dependency folders (node_modules, vendor, at any depth) are
// not indexed; .md and .markdown files in any case are. (node_modules/**
// was indexed and .markdown ignored before the ignore rules.)
func TestScanIgnores(t *testing.T) {
	root := t.TempDir()
	mem := filepath.Join(root, "mem")
	files := map[string]string{
		"visible.md":                      "ocelot visible",
		".obsidian/workspace.md":          "ocelot hidden folder",
		"sub/.hidden/x.md":                "ocelot nested hidden",
		".dotfile.md":                     "ocelot dot file",
		"notes.txt":                       "ocelot text file",
		"readme.markdown":                 "ocelot other extension",
		"UPPER.MD":                        "ocelot upper case extension",
		"idx/stray.md":                    "ocelot inside the index folder",
		"node_modules/pkg/README.md":      "ocelot dependency readme",
		"app/node_modules/x/CHANGELOG.md": "ocelot nested dependency",
		"vendor/lib/doc.md":               "ocelot vendored",
		"notes/vendor.md":                 "ocelot a file named vendor is not a folder",
	}
	for p, c := range files {
		full := filepath.Join(mem, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e, err := engine.Open(context.Background(), engine.Config{MemoryDir: mem, IndexDir: filepath.Join(mem, "idx")})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	rep, err := e.Sync(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"UPPER.MD", "notes/vendor.md", "readme.markdown", "visible.md"}
	if !slices.Equal(sorted(rep.Added), want) {
		t.Errorf("Added = %v, want %v", rep.Added, want)
	}
	p, err := e.Search(context.Background(), engine.Query{Text: "ocelot", Mode: engine.FullText, Now: now0})
	if err != nil {
		t.Fatal(err)
	}
	if got := sorted(paths(p)); !slices.Equal(got, want) {
		t.Errorf("ocelot → %v, want %v", got, want)
	}
	// SyncPaths on an ignored path indexes nothing either.
	rep, err = e.SyncPaths(context.Background(), []string{".obsidian/workspace.md", "idx/stray.md", "notes.txt", "node_modules/pkg/README.md", "app/node_modules"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Added) != 0 {
		t.Errorf("SyncPaths on ignored paths added %v", rep.Added)
	}
}

func TestSyncPaths(t *testing.T) {
	v := newVault(t, map[string]string{
		"a.md":           memo("A", "", nil, "aardvark"),
		"proj/x.md":      memo("X", "", nil, "xylophone"),
		"proj/deep/y.md": memo("Y", "", nil, "yak"),
		"project2/z.md":  memo("Z", "", nil, "zither"),
	})
	// A new file is searchable as soon as SyncPaths returns.
	v.write("new.md", memo("New", "", nil, "narwhal"))
	rep := v.syncPaths("new.md")
	if !slices.Equal(rep.Added, []string{"new.md"}) {
		t.Errorf("SyncPaths(new.md): Added %v", rep.Added)
	}
	if got := v.find(engine.Hybrid, "narwhal"); len(got) == 0 || got[0] != "new.md" {
		t.Errorf("narwhal → %v, want new.md first", got)
	}
	// Other unsynced changes are left alone.
	v.write("later.md", memo("Later", "", nil, "lemur"))
	v.syncPaths("a.md")
	if got := v.find(engine.FullText, "lemur"); len(got) != 0 {
		t.Errorf("SyncPaths(a.md) indexed later.md: lemur → %v", got)
	}
	// A deleted file leaves.
	v.remove("new.md")
	rep = v.syncPaths("new.md")
	if !slices.Equal(rep.Removed, []string{"new.md"}) {
		t.Errorf("SyncPaths(deleted new.md): Removed %v", rep.Removed)
	}
	for _, m := range allModes {
		if got := v.find(m, "narwhal"); slices.Contains(got, "new.md") {
			t.Errorf("%s: narwhal still finds deleted new.md", m)
		}
	}
	// A removed folder takes everything under it, and nothing beside it
	// ("proj" is a prefix of "project2" as a string, not as a folder).
	v.remove("proj")
	rep = v.syncPaths("proj")
	if got := sorted(rep.Removed); !slices.Equal(got, []string{"proj/deep/y.md", "proj/x.md"}) {
		t.Errorf("SyncPaths(removed proj): Removed %v", got)
	}
	if got := v.find(engine.FullText, "xylophone yak"); len(got) != 0 {
		t.Errorf("xylophone yak → %v after removing proj/", got)
	}
	if got := v.find(engine.FullText, "zither"); !slices.Equal(got, []string{"project2/z.md"}) {
		t.Errorf("zither → %v, want project2/z.md untouched", got)
	}
	// "" means the whole folder.
	rep = v.syncPaths("")
	if !slices.Equal(rep.Added, []string{"later.md"}) {
		t.Errorf(`SyncPaths(""): Added %v, want [later.md]`, rep.Added)
	}
	// Escapes are refused.
	for _, p := range []string{"../x.md", "/etc/passwd", "a/../../b", "..%2f..%2fetc", "x\x00y"} {
		if _, err := v.e.SyncPaths(context.Background(), []string{p}); !errors.Is(err, engine.ErrOutsideRoot) {
			t.Errorf("SyncPaths(%q): err = %v, want ErrOutsideRoot", p, err)
		}
	}
}

func TestReadOnly(t *testing.T) {
	v := newVault(t, map[string]string{
		"a.md": memo("A", "2020-01-01", nil, "the okapi grazes"),
		"b.md": memo("B", "2020-01-01", nil, "the giraffe grazes"),
	})
	want := v.status()
	v.close()
	cfg := v.cfg
	cfg.ReadOnly = true
	ro, err := engine.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("read-only Open: %v", err)
	}
	defer ro.Close()
	st, err := ro.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !st.ReadOnly || st.Files != want.Files || st.Chunks != want.Chunks {
		t.Errorf("read-only Status: ReadOnly %v Files %d Chunks %d, want true %d %d", st.ReadOnly, st.Files, st.Chunks, want.Files, want.Chunks)
	}
	for _, m := range allModes {
		p, err := ro.Search(context.Background(), engine.Query{Text: "okapi", Mode: m, Now: now0})
		if err != nil || len(p.Results) == 0 || p.Results[0].Path != "a.md" {
			t.Errorf("read-only %s search: %v, err %v; want a.md first", m, paths(p), err)
		}
	}
	if _, err := ro.Sync(context.Background(), false); !errors.Is(err, engine.ErrReadOnly) {
		t.Errorf("read-only Sync: err = %v, want ErrReadOnly", err)
	}
	if _, err := ro.SyncPaths(context.Background(), []string{"a.md"}); !errors.Is(err, engine.ErrReadOnly) {
		t.Errorf("read-only SyncPaths: err = %v, want ErrReadOnly", err)
	}
	// Read works but records nothing.
	if _, err := ro.Read(context.Background(), "a.md"); err != nil {
		t.Errorf("read-only Read: %v", err)
	}
	p, _ := ro.Search(context.Background(), engine.Query{Text: "okapi", Mode: engine.FullText, Now: time.Now().Add(time.Minute)})
	if r, ok := result(p, "a.md"); !ok || r.Decay == 1 {
		t.Errorf("read-only Read recorded a read: decay %v", r.Decay)
	}
}

func TestReadOnlyWithoutIndex(t *testing.T) {
	idx := filepath.Join(t.TempDir(), "index")
	_, err := engine.Open(context.Background(), engine.Config{MemoryDir: t.TempDir(), IndexDir: idx, ReadOnly: true})
	if !errors.Is(err, engine.ErrIndexNotReady) {
		t.Errorf("read-only Open of a missing index: err = %v, want ErrIndexNotReady", err)
	}
}

// Two read-only engines (two "mnemo search" processes, say) must be able to
// share an index.
func TestTwoReadOnlyEngines(t *testing.T) {
	v := newVault(t, map[string]string{"a.md": memo("A", "", nil, "the okapi grazes")})
	v.close()
	cfg := v.cfg
	cfg.ReadOnly = true
	first, err := engine.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var closeOnce sync.Once
	defer closeOnce.Do(func() { first.Close() })
	type opened struct {
		e   *engine.Engine
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		e, err := engine.Open(context.Background(), cfg)
		ch <- opened{e, err}
	}()
	select {
	case o := <-ch:
		if o.err != nil {
			t.Fatalf("second read-only Open: %v", o.err)
		}
		defer o.e.Close()
		p, err := o.e.Search(context.Background(), engine.Query{Text: "okapi", Now: now0})
		if err != nil || len(p.Results) != 1 {
			t.Errorf("second read-only engine search: %v, err %v", paths(p), err)
		}
	case <-time.After(2 * time.Second):
		t.Error("second read-only Open blocked for 2 s while the first read-only engine is open")
		// Let the blocked Open finish before the folders go away.
		closeOnce.Do(func() { first.Close() })
		if o := <-ch; o.err == nil {
			o.e.Close()
		}
	}
}

// Close twice (a deferred Close after an explicit one) must not panic.
func TestCloseTwice(t *testing.T) {
	v := newVault(t, map[string]string{"a.md": "alpha"})
	v.close()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("second Close panicked: %v", r)
		}
	}()
	v.e.Close()
}

func TestSecondWriterIsRefused(t *testing.T) {
	t.Parallel() // waits on the lock, not the CPU
	v := newVault(t, map[string]string{"a.md": "alpha"})
	start := time.Now()
	e2, err := engine.Open(context.Background(), v.cfg)
	if err == nil {
		e2.Close()
		t.Fatal("a second writer opened the index while the first is open")
	}
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Errorf("second writer took %v to fail, want about 1 s at most", d)
	}
	if !strings.Contains(err.Error(), "in use") {
		t.Errorf("second writer error %q does not say the index is in use", err)
	}
	if !strings.Contains(err.Error(), fmt.Sprint(os.Getpid())) {
		t.Errorf("second writer error %q does not name the holder's PID %d", err, os.Getpid())
	}
	// The first engine is unaffected.
	if got := v.find(engine.FullText, "alpha"); len(got) != 1 {
		t.Errorf("first engine after refused second writer: %v", got)
	}
}

func TestCorruptFullTextIndexIsRebuilt(t *testing.T) {
	corruptions := []struct {
		name string
		harm func(t *testing.T, dir string)
	}{
		{"truncate every file", func(t *testing.T, dir string) {
			eachFile(t, dir, func(p string) error { return os.Truncate(p, 0) })
		}},
		{"garble every file", func(t *testing.T, dir string) {
			eachFile(t, dir, func(p string) error {
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				for i := range b {
					b[i] ^= 0x5a
				}
				return os.WriteFile(p, b, 0o644)
			})
		}},
		{"remove the folder", func(t *testing.T, dir string) {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range corruptions {
		t.Run(c.name, func(t *testing.T) {
			v := newVault(t, map[string]string{
				"a.md": memo("A", "", nil, "the armadillo digs"),
				"b.md": memo("B", "", nil, "the badger digs"),
			})
			v.close()
			c.harm(t, filepath.Join(v.cfg.IndexDir, "fulltext.bleve"))
			v.open()
			rep := v.sync()
			if !rep.Full || len(rep.Added) != 2 {
				t.Errorf("sync after corruption: Full %v Added %v, want a full rebuild of both", rep.Full, rep.Added)
			}
			for _, m := range allModes {
				if got := v.find(m, "armadillo"); len(got) == 0 || got[0] != "a.md" {
					t.Errorf("%s: armadillo → %v after rebuild, want a.md first", m, got)
				}
			}
			if got := v.find(engine.FullText, "digs"); len(got) != 2 {
				t.Errorf("digs → %v after rebuild, want both files once", got)
			}
		})
	}
}

func eachFile(t *testing.T, dir string, fn func(string) error) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		return fn(p)
	})
	if err != nil || n == 0 {
		t.Fatalf("corrupting %s: %d files, err %v", dir, n, err)
	}
}

func TestConcurrentSearchDuringSync(t *testing.T) {
	for _, full := range []bool{false, true} {
		t.Run(fmt.Sprintf("full=%v", full), func(t *testing.T) {
			v := newVault(t, map[string]string{
				"seed/a.md": memo("Seed", "2025-01-01", []string{"seed"}, "project meeting about the database migration"),
			})
			for i := range 200 {
				v.write(fmt.Sprintf("gen/%03d.md", i), memo(fmt.Sprintf("Note %d", i), "2025-01-01", []string{"gen"}, synthetic(uint64(i), 60)))
			}
			ctx := context.Background()
			done := make(chan struct{})
			var wg sync.WaitGroup
			errs := make(chan error, 100)
			queries := []engine.Query{
				{Text: "database migration", Mode: engine.Hybrid},
				{Text: "project meeting", Mode: engine.FullText, Folder: "gen"},
				{Text: "coffee weather", Mode: engine.Semantic, Tags: []string{"gen"}},
				{Text: "release schedule", Mode: engine.Hybrid, Sort: engine.ByRecency, PageSize: 50},
			}
			searches := make([]int, len(queries))
			for i, q := range queries {
				wg.Add(1)
				go func() {
					defer wg.Done()
					q.Now = now0
					for {
						select {
						case <-done:
							return
						default:
						}
						p, err := v.e.Search(ctx, q)
						if err != nil {
							errs <- fmt.Errorf("%s %q: %w", q.Mode, q.Text, err)
							return
						}
						for _, r := range p.Results {
							if r.Score < 0 || r.Score > 1 {
								errs <- fmt.Errorf("%s %q: score %v outside 0–1", q.Mode, q.Text, r.Score)
								return
							}
						}
						searches[i]++
					}
				}()
			}
			var rep engine.Report
			var syncErr error
			go func() {
				rep, syncErr = v.e.Sync(ctx, full)
				// Keep searching a moment after the sync to see its end state.
				time.Sleep(20 * time.Millisecond)
				close(done)
			}()
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if syncErr != nil {
				t.Fatalf("Sync: %v", syncErr)
			}
			wantAdded := 200
			if full {
				wantAdded = 201
			}
			if len(rep.Added) != wantAdded {
				t.Errorf("Added %d, want %d", len(rep.Added), wantAdded)
			}
			for i, n := range searches {
				if n == 0 {
					t.Errorf("query %d never completed during the sync", i)
				}
			}
			if st := v.status(); st.Files != 201 || st.Indexing {
				t.Errorf("after sync: Files %d Indexing %v, want 201 false", st.Files, st.Indexing)
			}
		})
	}
}

// Searches during the very first sync never fail: they return what is
// indexed so far, or an empty page marked Indexing.
func TestSearchDuringFirstSync(t *testing.T) {
	v := newVault(t, nil)
	for i := range 200 {
		v.write(fmt.Sprintf("gen/%03d.md", i), memo(fmt.Sprintf("Note %d", i), "", nil, synthetic(uint64(i), 40)))
	}
	v.close()
	started := make(chan struct{})
	var once sync.Once
	v.cfg.Progress = func(done, total int) { once.Do(func() { close(started) }) }
	v.open()
	ctx := context.Background()
	syncDone := make(chan error, 1)
	go func() { _, err := v.e.Sync(ctx, false); syncDone <- err }()
	<-started
	sawIndexing := false
	for finished := false; !finished; {
		select {
		case err := <-syncDone:
			if err != nil {
				t.Fatal(err)
			}
			finished = true
		default:
		}
		p, err := v.e.Search(ctx, engine.Query{Text: "project meeting", Now: now0})
		if err != nil {
			t.Fatalf("search during the first sync: %v", err)
		}
		sawIndexing = sawIndexing || p.Indexing
	}
	if !sawIndexing {
		t.Log("no search saw Indexing (the sync was too quick to observe)")
	}
	if p := v.search(engine.Query{Text: "project meeting"}); p.Indexing || p.TotalCount == 0 {
		t.Errorf("after the first sync: Indexing %v TotalCount %d", p.Indexing, p.TotalCount)
	}
}
