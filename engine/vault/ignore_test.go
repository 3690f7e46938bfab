package vault

import (
	"strings"
	"testing"
)

// TestIgnoreRules: the gitignore syntax .mnemoignore accepts — globs, "**",
// a trailing "/" for folders only, "/" anchoring, "!" negation, comments —
// on top of the defaults, hidden names and the index folder.
func TestIgnoreRules(t *testing.T) {
	ir := parseRules("# a comment\n\ndrafts/\n*.tmp.md\n/top.md\ndocs/**/private/\n!vendor/\nnotes/*-old.md\n!notes/keep-old.md\n", "idx")
	cases := []struct {
		rel   string
		isDir bool
		skip  bool
	}{
		{"a.md", false, false},
		{".hidden.md", false, true},
		{"x/.git/config.md", false, true},
		{"idx", true, true},
		{"idx/stray.md", false, true},
		{"node_modules", true, true},
		{"a/b/node_modules/c/readme.md", false, true},
		{"__pycache__/x.md", false, true},
		{"vendor/ours.md", false, false}, // "!vendor/" brings the default back
		{"drafts", true, true},
		{"drafts/x.md", false, true},
		{"a/drafts/x.md", false, true},
		{"drafts.md", false, false}, // "drafts/" is for folders only
		{"x.tmp.md", false, true},
		{"deep/er/y.tmp.md", false, true},
		{"top.md", false, true},
		{"sub/top.md", false, false}, // anchored
		{"docs/a/b/private/p.md", false, true},
		{"docs/private/p.md", false, true},
		{"docs/public/p.md", false, false},
		{"notes/a-old.md", false, true},
		{"notes/keep-old.md", false, false},
		{"# a comment", false, false},
	}
	byName := parseRules("drafts/\n*.tmp.md\n*-old.md\n!keep-old.md\n", "a/idx")
	if !byName.byName || ir.byName {
		t.Fatalf("byName = %v for names only, %v with anchored and ** patterns", byName.byName, ir.byName)
	}
	byNameCases := []struct {
		rel   string
		isDir bool
		skip  bool
	}{
		{"a/idx", true, true},
		{"a/idx/x.md", false, true},
		{"b/idx", true, false},
		{"x/drafts", true, true},
		{"x/drafts.md", false, false},
		{"n/y-old.md", false, true},
		{"n/keep-old.md", false, false},
		{"vendor", true, true},
	}
	for _, set := range []struct {
		ir    *Rules
		cases []struct {
			rel   string
			isDir bool
			skip  bool
		}
	}{{ir, cases}, {byName, byNameCases}} {
		for _, c := range set.cases {
			if got := set.ir.Skip(c.rel, c.isDir); got != c.skip {
				t.Errorf("skip(%q, dir=%v) = %v, want %v", c.rel, c.isDir, got, c.skip)
			}
			// The walk asks skipEntry once the folders above are known
			// not to be skipped; it must then agree with skip.
			parts := strings.Split(c.rel, "/")
			above := false
			for i := 1; i < len(parts); i++ {
				above = above || set.ir.Skip(strings.Join(parts[:i], "/"), true)
			}
			if got := set.ir.skipEntry(c.rel, c.isDir); !above && got != c.skip {
				t.Errorf("skipEntry(%q, dir=%v) = %v, want %v", c.rel, c.isDir, got, c.skip)
			}
		}
	}
}
