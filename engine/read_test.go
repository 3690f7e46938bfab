package engine_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"mnemo/engine"
)

func readVault(t *testing.T) (*vault, string) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.md")
	if err := os.WriteFile(secret, []byte("---\ntitle: Secret\n---\ntop secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	v := newVault(t, map[string]string{
		"notes/plan.md":  "---\ntitle: Release Plan\ncreated: 2020-01-01\ntags: [release]\nowner: ana\n---\n# Release Plan\n\nShip it. See [[Rollout]].\n",
		"dup1.md":        memo("Twin", "", nil, "first twin"),
		"sub/dup2.md":    memo("twin", "", nil, "second twin"),
		"Title Case.md":  memo("Spaces In Name", "", nil, "a file name with spaces"),
		"x/old-lore.md":  memo("Old lore", "2020-01-01", nil, "the ancient lore of wyverns"),
		"x/also-lore.md": memo("Also lore", "2020-01-01", nil, "the ancient lore of griffins"),
	})
	if err := os.Symlink(secret, v.abs("link.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, v.abs("outdir")); err != nil {
		t.Fatal(err)
	}
	return v, outside
}

func TestResolve(t *testing.T) {
	v, outside := readVault(t)
	cases := []struct {
		id, want string
		err      error
	}{
		{"memory://notes/plan", "notes/plan.md", nil},
		{"MEMORY://notes/plan", "notes/plan.md", nil},
		{"memory://notes/plan.md", "notes/plan.md", nil},
		{"notes/plan.md", "notes/plan.md", nil},
		{"notes/plan", "notes/plan.md", nil},
		{"./notes/plan", "notes/plan.md", nil},
		{"  notes/plan  ", "notes/plan.md", nil},
		{"notes//plan", "notes/plan.md", nil},
		{"Release Plan", "notes/plan.md", nil},
		{"release plan", "notes/plan.md", nil},
		{"RELEASE PLAN", "notes/plan.md", nil},
		{"Title Case", "Title Case.md", nil},
		{"spaces in name", "Title Case.md", nil},
		{"memory://Title Case", "Title Case.md", nil},
		{"", "", engine.ErrNotFound},
		{"no such memory", "", engine.ErrNotFound},
		{"memory://no/such", "", engine.ErrNotFound},
		{"memory://Release Plan", "", engine.ErrNotFound}, // a URI is a path, never a title
		{"notes", "", engine.ErrNotFound},                 // a folder is not a memory
		{"twin", "", engine.ErrNotFound},                  // ambiguous
		{"../../etc/passwd", "", engine.ErrOutsideRoot},
		{"memory://../x", "", engine.ErrOutsideRoot},
		{"memory://notes/../../x", "", engine.ErrOutsideRoot},
		{"..%2f..%2fetc%2fpasswd", "", engine.ErrOutsideRoot},
		{"/etc/passwd", "", engine.ErrOutsideRoot},
		{filepath.Join(outside, "secret.md"), "", engine.ErrOutsideRoot},
		{v.abs("notes/plan.md"), "", engine.ErrOutsideRoot}, // absolute, even inside
		{"link.md", "", engine.ErrOutsideRoot},
		{"link", "", engine.ErrOutsideRoot},
		{"outdir/secret", "", engine.ErrOutsideRoot},
		{"memory://outdir/secret", "", engine.ErrOutsideRoot},
		{"x\x00y", "", engine.ErrOutsideRoot},
		{strings.Repeat("long/", 2000) + "x", "", engine.ErrNotFound},
		{strings.Repeat("y", 300), "", engine.ErrNotFound},
	}
	for _, c := range cases {
		got, err := v.e.Resolve(c.id)
		if c.err != nil {
			if !errors.Is(err, c.err) {
				t.Errorf("Resolve(%q) = %q, %v; want %v", c.id, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", c.id, got, err, c.want)
		}
	}
	_, err := v.e.Resolve("Twin")
	if err == nil || !strings.Contains(err.Error(), "dup1.md") || !strings.Contains(err.Error(), "sub/dup2.md") {
		t.Errorf("ambiguous title: err %v, want it to name dup1.md and sub/dup2.md", err)
	}
}

func TestRead(t *testing.T) {
	v, _ := readVault(t)
	m, err := v.e.Read(context.Background(), "memory://notes/plan")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(v.abs("notes/plan.md"))
	sum := sha256.Sum256(raw)
	if m.Path != "notes/plan.md" || m.URI != "memory://notes/plan" || m.Title != "Release Plan" {
		t.Errorf("Read: path %q uri %q title %q", m.Path, m.URI, m.Title)
	}
	if m.Checksum != hex.EncodeToString(sum[:]) {
		t.Errorf("Checksum %s, want SHA-256 of the file", m.Checksum)
	}
	if strings.Contains(m.Content, "title:") || !strings.Contains(m.Content, "Ship it.") {
		t.Errorf("Content %q, want the body without frontmatter", m.Content)
	}
	if !slices.Equal(m.Tags, []string{"release"}) || len(m.Links) != 1 || m.Meta["owner"] != "ana" {
		t.Errorf("Tags %v Links %v Meta %v", m.Tags, m.Links, m.Meta)
	}
	if !m.Created.Equal(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)) || m.Modified.IsZero() || m.LastRead.IsZero() {
		t.Errorf("Created %v Modified %v LastRead %v", m.Created, m.Modified, m.LastRead)
	}
	for _, id := range []string{"../../etc/passwd", "memory://../x", "/etc/passwd", "link.md", "outdir/secret.md"} {
		if _, err := v.e.Read(context.Background(), id); !errors.Is(err, engine.ErrOutsideRoot) {
			t.Errorf("Read(%q): err %v, want ErrOutsideRoot", id, err)
		}
	}
	if _, err := v.e.Read(context.Background(), "nope"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("Read(nope): err %v, want ErrNotFound", err)
	}
}

// Read restarts a memory's recency clock; Search does not.
func TestReadRecordsRecencySearchDoesNot(t *testing.T) {
	v, _ := readVault(t)
	now := time.Now().Add(time.Minute) // after any read this test makes
	q := engine.Query{Text: "ancient lore", Mode: engine.Hybrid, Now: now}
	decays := func() map[string]float64 {
		out := map[string]float64{}
		for _, r := range v.search(q).Results {
			out[r.Path] = r.Decay
		}
		return out
	}
	first := decays()
	if first["x/old-lore.md"] >= 0.95 || first["x/also-lore.md"] >= 0.95 {
		t.Fatalf("unread six-year-old memories decay %v, want about 0.9", first)
	}
	// Searching (and reading search results) is not reading.
	for range 3 {
		v.search(q)
	}
	if again := decays(); again["x/old-lore.md"] != first["x/old-lore.md"] {
		t.Errorf("searching changed decay: %v, then %v", first, again)
	}
	if _, err := v.e.Read(context.Background(), "Old lore"); err != nil {
		t.Fatal(err)
	}
	after := decays()
	if after["x/old-lore.md"] != 1 {
		t.Errorf("after Read, old-lore decay %v, want 1", after["x/old-lore.md"])
	}
	if after["x/also-lore.md"] != first["x/also-lore.md"] {
		t.Errorf("reading old-lore changed also-lore's decay: %v → %v", first["x/also-lore.md"], after["x/also-lore.md"])
	}
	// The read survives an edit.
	v.write("x/old-lore.md", memo("Old lore", "2020-01-01", nil, "the ancient lore of wyverns, revised"))
	v.sync()
	if d := decays()["x/old-lore.md"]; d != 1 {
		t.Errorf("after edit, old-lore decay %v, want 1 (the read survives edits)", d)
	}
	// And a restart.
	v.reopen()
	if d := decays()["x/old-lore.md"]; d != 1 {
		t.Errorf("after reopen, old-lore decay %v, want 1", d)
	}
}

// Read's doc says the read boost "survives restarts, edits and moves".
func TestReadSurvivesMove(t *testing.T) {
	v, _ := readVault(t)
	now := time.Now().Add(time.Minute)
	if _, err := v.e.Read(context.Background(), "x/old-lore.md"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(v.abs("x/old-lore.md"), v.abs("x/moved-lore.md")); err != nil {
		t.Fatal(err)
	}
	v.sync()
	p := v.search(engine.Query{Text: "wyverns", Mode: engine.FullText, Now: now})
	r, ok := result(p, "x/moved-lore.md")
	if !ok {
		t.Fatalf("moved memory not found: %v", paths(p))
	}
	if r.Decay != 1 {
		t.Errorf("after Read and a move, decay %v, want 1", r.Decay)
	}
}
