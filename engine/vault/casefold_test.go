package vault

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"testing/fstest"
)

// TestSpellAs: a path is respelled part by part as the folder lists it,
// case- and normalisation-insensitively; a part listed as given wins, and a
// part that is missing or ambiguous ends the respelling.
func TestSpellAs(t *testing.T) {
	fsys := fstest.MapFS{
		"notes/Foo.md":        {},
		"cafe\u0301/Crème.md": {}, // decomposed on disk, as HFS+ stores it
		"both/X.md":           {},
		"both/x.md":           {},
	}
	for _, c := range []struct{ in, want string }{
		{"notes/Foo.md", "notes/Foo.md"},
		{"Notes/foo.md", "notes/Foo.md"},
		{"NOTES/FOO.MD", "notes/Foo.md"},
		{"NOTES/new.md", "notes/new.md"},                     // a new file in an existing folder
		{"NOTES/New/Deeper.md", "notes/New/Deeper.md"},       // new parts stay as given
		{"café/crème.md", "cafe\u0301/Crème.md"},             // composed asks for decomposed
		{"CAFE\u0301/CRE\u0300ME.MD", "cafe\u0301/Crème.md"}, // and the other way round
		{"both/x.md", "both/x.md"},                           // listed as given
		{"BOTH/X.md", "both/X.md"},
		{"both/X.MD", "both/X.MD"}, // two candidates: left as given
		{"elsewhere/Foo.md", "elsewhere/Foo.md"},
	} {
		if got := spellAs(fsys, c.in); got != c.want {
			t.Errorf("spellAs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestFoldsCaseOnLinux: Linux's own file systems tell case apart, and both
// probes (the writer's file, the read-only engine's folder name) say so.
func TestFoldsCaseOnLinux(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the volumes under test tell case apart on Linux only")
	}
	dir := filepath.Join(t.TempDir(), "Memory")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, ro := range []bool{false, true} {
		if foldsCase(dir, ro) {
			t.Errorf("foldsCase(readOnly=%v) = true on a case-sensitive volume", ro)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the probe left %v behind", entries)
	}
}
