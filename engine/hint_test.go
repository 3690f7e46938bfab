package engine_test

import (
	"errors"
	"testing"

	"mnemo/engine"
)

// A semantic or hybrid query none of whose words the embedder knows, which
// finds nothing, says why (Page.Hint) instead of a bare "0 results"; a
// query that finds something, or a full-text one, has no hint.
func TestUnknownWordsHint(t *testing.T) {
	v := newVault(t, map[string]string{
		"a.md": memo("Deploy", "", nil, "we deploy the server with systemd"),
	})
	for _, c := range []struct {
		mode     engine.Mode
		text     string
		wantHint bool
	}{
		{engine.Semantic, "qwzxv blorptang", true},
		{engine.Hybrid, "qwzxv blorptang", true},
		{engine.FullText, "qwzxv blorptang", false},
		{engine.Semantic, "deploy server", false},
		{engine.Hybrid, "deploy server", false},
	} {
		p := v.search(engine.Query{Text: c.text, Mode: c.mode})
		if (p.Hint != "") != c.wantHint || (c.wantHint && p.TotalCount != 0) {
			t.Errorf("%s %q: %d results, hint %q; want hint %v", c.mode, c.text, p.TotalCount, p.Hint, c.wantHint)
		}
	}
}

// A memory can be read by its file name alone (without folder or .md),
// also when it has a title; a name two memories share is refused, naming both.
func TestResolveByFileName(t *testing.T) {
	v := newVault(t, map[string]string{
		"decisions/use-bbolt.md": memo("Use bbolt for state", "", nil, "bbolt"),
		"a/notes.md":             memo("Notes A", "", nil, "a"),
		"b/notes.md":             memo("Notes B", "", nil, "b"),
	})
	for _, id := range []string{"use-bbolt", "USE-BBOLT", "use-bbolt.md", "Use bbolt for state", "decisions/use-bbolt"} {
		if got, err := v.e.Resolve(id); err != nil || got != "decisions/use-bbolt.md" {
			t.Errorf("Resolve(%q) = %q, %v; want decisions/use-bbolt.md", id, got, err)
		}
	}
	if _, err := v.e.Resolve("notes"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("Resolve(notes), a name two memories share: %v, want ErrNotFound naming both", err)
	}
}
