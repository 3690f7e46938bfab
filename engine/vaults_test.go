package engine_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"mnemo/engine"
)

// The vaults under testdata/vaults are excerpts of real public vaults
// (testdata/vaults/SOURCES.md), as Foam, Obsidian, Logseq and Dendron
// wrote them. These tests hold mnemo's concept graph to what each tool
// shows for them.

// openVault indexes a vault in place (read from where it is, indexed in a
// temporary folder).
func openVault(t *testing.T, dir string) *engine.Engine {
	t.Helper()
	e, err := engine.Open(context.Background(), engine.Config{MemoryDir: dir, IndexDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if _, err := e.Sync(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestFoamVaultGraph: on a Foam vault, every concept a simple scanner
// finds in the raw files is in the graph, with the same files, and every
// co-occurrence count BuildContext reports is the scanner's. MNEMO_FOAM_VAULT
// names a further vault to hold to the same (a whole Foam workspace).
func TestFoamVaultGraph(t *testing.T) {
	dirs := []string{filepath.Join("..", "testdata", "vaults", "foam")}
	if d := os.Getenv("MNEMO_FOAM_VAULT"); d != "" {
		dirs = append(dirs, d)
	}
	for _, dir := range dirs {
		t.Run(dir, func(t *testing.T) {
			want := scanVault(t, dir)
			if len(want) == 0 {
				t.Fatalf("%s links to nothing: not a vault to test on", dir)
			}
			e := openVault(t, dir)
			cs, err := e.Concepts(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			for _, c := range cs {
				got[c.Name] = c.Files
			}
			wantFiles := map[string]int{}
			for c, fs := range want {
				wantFiles[c] = len(fs)
			}
			if !reflect.DeepEqual(got, wantFiles) {
				for c, n := range wantFiles {
					if got[c] != n {
						t.Errorf("concept %q: in %d memories, the files say %d", c, got[c], n)
					}
				}
				for c := range got {
					if _, ok := wantFiles[c]; !ok {
						t.Errorf("concept %q is in the graph, the files never link to it", c)
					}
				}
			}
			t.Logf("%d concepts linked in %s", len(want), dir)
			for c := range want {
				ctx, err := e.BuildContext(context.Background(), engine.ContextQuery{Concept: c, Depth: 1, MaxEntities: engine.MaxEntities})
				if err != nil {
					t.Errorf("BuildContext(%q): %v", c, err)
					continue
				}
				gotCo := map[string]int{}
				for _, r := range ctx.DirectRelations {
					gotCo[r.Name] = r.CoOccurrenceCount
				}
				if wantCo := coOccurrence(want, c); !reflect.DeepEqual(gotCo, wantCo) {
					t.Errorf("%q: co-occurrences %v, the files say %v", c, gotCo, wantCo)
				}
			}
		})
	}
}

// scanVault is the test's own reading of a vault: for each .md file, the
// concepts its [[WikiLinks]] name (outside fenced code, code spans and
// HTML comments; "[[x]](url)" is a Markdown link), as a concept → files
// map. It shares no code with markdown.Parse.
func scanVault(t *testing.T, dir string) map[string]map[string]bool {
	t.Helper()
	out := map[string]map[string]bool{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != dir && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".md") || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, c := range scanLinks(string(data)) {
			if out[c] == nil {
				out[c] = map[string]bool{}
			}
			out[c][path] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func scanLinks(src string) []string {
	var prose strings.Builder
	fence := ""
	for line := range strings.Lines(src) {
		trim := strings.TrimLeft(line, " \t")
		run := trim[:len(trim)-len(strings.TrimLeft(trim, "`~"))]
		if fence != "" {
			// A fence closes with a run of its character at least as long.
			if strings.HasPrefix(run, fence) && strings.TrimSpace(trim[len(run):]) == "" {
				fence = ""
			}
			continue
		}
		if len(run) >= 3 && strings.Count(run, run[:1]) == len(run) {
			fence = run
			continue
		}
		prose.WriteString(line)
	}
	s := stripBetween(prose.String(), "<!--", "-->")
	s = stripCodeSpans(s)
	var out []string
	for {
		i := strings.Index(s, "[[")
		if i < 0 {
			return out
		}
		j := strings.Index(s[i+2:], "]]")
		if j < 0 {
			return out
		}
		inner, rest := s[i+2:i+2+j], s[i+2+j+2:]
		escaped := i > 0 && s[i-1] == '\\'
		s = s[i+2:]
		if escaped || strings.ContainsAny(inner, "[]\n") || strings.HasPrefix(rest, "(") {
			continue
		}
		s = rest
		target, _, _ := strings.Cut(strings.ReplaceAll(inner, `\|`, "|"), "|")
		name, _, _ := strings.Cut(target, "#")
		name = strings.TrimSpace(name)
		if k := strings.LastIndex(name, "/"); k >= 0 {
			name = name[k+1:]
		}
		name = strings.TrimSuffix(name, ".md")
		if ext := filepath.Ext(name); name == "" || slices.Contains([]string{".png", ".jpg", ".gif", ".svg", ".pdf", ".mp4", ".base"}, strings.ToLower(ext)) {
			continue
		}
		name = strings.ToLower(strings.Join(strings.FieldsFunc(name, func(r rune) bool { return r == ' ' || r == '_' || r == '-' }), "-"))
		if name != "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
}

func stripBetween(s, open, close string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, open)
		if i < 0 {
			return b.String() + s
		}
		b.WriteString(s[:i])
		j := strings.Index(s[i:], close)
		if j < 0 {
			return b.String()
		}
		s = s[i+j+len(close):]
	}
}

// stripCodeSpans removes `code` spans: a run of backticks up to the next
// run of the same length.
func stripCodeSpans(s string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '`')
		if i < 0 {
			return b.String() + s
		}
		n := i
		for n < len(s) && s[n] == '`' {
			n++
		}
		run := s[i:n]
		b.WriteString(s[:i])
		rest := s[n:]
		closed := -1
		for k := 0; k < len(rest); {
			m := strings.Index(rest[k:], run)
			if m < 0 {
				break
			}
			end := k + m + len(run)
			if (k+m == 0 || rest[k+m-1] != '`') && (end == len(rest) || rest[end] != '`') {
				closed = end
				break
			}
			k = end
			for k < len(rest) && rest[k] == '`' {
				k++
			}
		}
		if closed < 0 {
			b.WriteString(run)
			s = rest
			continue
		}
		s = rest[closed:]
	}
}

// coOccurrence counts, for each other concept, the files that link to both.
func coOccurrence(files map[string]map[string]bool, c string) map[string]int {
	out := map[string]int{}
	for o, fs := range files {
		if o == c {
			continue
		}
		for f := range fs {
			if files[c][f] {
				out[o]++
			}
		}
	}
	return out
}

// fileConcepts is the concepts one memory links to, sorted.
func fileConcepts(t *testing.T, e *engine.Engine, rel string) []string {
	t.Helper()
	fc, err := e.FileConcepts(context.Background(), rel)
	if err != nil {
		t.Fatalf("FileConcepts(%s): %v", rel, err)
	}
	var out []string
	for _, c := range fc.Concepts {
		out = append(out, c.Name)
	}
	slices.Sort(out)
	return out
}

// TestToolVaults: each excerpt gives the concepts its tool shows for it
// (Obsidian's links pane and graph, Logseq's linked references, Dendron's
// backlinks), file by file; aliases name the page they belong to.
func TestToolVaults(t *testing.T) {
	tests := []struct {
		vault, rules string
		files        map[string][]string // memory → the concepts it links to
		concepts     int
		aliases      map[string]string // name asked for → the concept it is
		absent       []string          // names that must not be concepts
	}{
		{"obsidian", "obsidian", map[string][]string{
			// property links ("categories: - "[[People]]""), not the .base embeds
			"References/Steph Ango.md":                             {"authors", "obsidian", "people"},
			"References/The Legend of Zelda Breath of the Wild.md": {"2022-04", "games", "nintendo", "nintendo-switch", "open-world"},
			"References/Kyoto.md":                                  {"cities", "japan", "places"},
			"Notes/2023-09-12 Meeting with Steph.md":               {"emergence", "meetings", "obsidian", "out-of-control", "steph-ango"},
			"Categories/People.md":                                 nil,
			"Notes/2023 Japan Trip.md":                             {"japan", "kyoto", "trips"},
		}, 28, nil, []string{"people.base", "daily.base", "botw"}},
		{"logseq", "logseq", map[string][]string{
			// page properties, nested blocks, #tags and #[[tags]], [label]([[page]])
			"pages/page_embed.md":      {"all-platforms", "block-embed", "command", "embed", "feature", "linked-references", "term-page"},
			"pages/block_embed.md":     {"all-platforms", "command", "embed", "feature"},
			"pages/Flashcards.md":      {"academic", "all-platforms", "feature"},
			"pages/Page graph.md":      {"all-platforms", "feature", "knowledge-graph", "right-sidebar"},
			"pages/Whiteboard.md":      {"all-platforms", "feature", "settings", "whiteboard"},
			"pages/Knowledge Graph.md": {"all-platforms", "docs", "feature", "habit-creation", "productivity", "term-network-of-connected-ideas"},
		}, 49, map[string]string{"Graph view": "knowledge-graph", "Whiteboards": "whiteboard", "term/embedded page": "page-embed"},
			[]string{"graph-view", "whiteboards", "card", "page-name"}},
		{"dendron", "dendron", map[string][]string{
			// whole hierarchy names, label|target, dendron://vault/ links, note refs
			"vault/dendron.topic.links.md": {"asset.preview", "dendron.note.name", "dendron.ref.commands", "dendron.ref.config",
				"dendron.topic.links", "dendron.topic.links.wiki-link", "dendron.topic.multi-vault", "dendron.topic.note-reference",
				"dendron.topic.publish", "dendron.topic.refactoring.commands.convert-link", "dendron.topic.workbench", "tags.stage.sprout"},
			"vault/dendron.topic.tags.md": {"dendron.guides.tips"},
		}, 13, nil, []string{"copy-note-link", "tag.foo", "src-index.js", "dendron"}},
	}
	for _, tt := range tests {
		t.Run(tt.vault, func(t *testing.T) {
			e := openVault(t, filepath.Join("..", "testdata", "vaults", tt.vault))
			st, err := e.Status(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if st.Graph.LinkRules != tt.rules || st.Graph.Concepts != tt.concepts {
				t.Errorf("status: %d concepts by %s's rules, want %d by %s's", st.Graph.Concepts, st.Graph.LinkRules, tt.concepts, tt.rules)
			}
			for rel, want := range tt.files {
				if got := fileConcepts(t, e, rel); !slices.Equal(got, want) {
					t.Errorf("%s links to %q, want %q", rel, got, want)
				}
			}
			for name, want := range tt.aliases {
				c, err := e.BuildContext(context.Background(), engine.ContextQuery{Concept: name})
				if want == "page-embed" { // declared, but nobody links to the page: the error names it
					if err == nil || !strings.Contains(err.Error(), "[[page-embed]]") || !strings.Contains(err.Error(), "alias") {
						t.Errorf("%q: %v, want an unknown [[page-embed]] named as the alias's page", name, err)
					}
					continue
				}
				if err != nil || c.Concept != want {
					t.Errorf("%q: concept %q, %v; want %q", name, c.Concept, err, want)
				}
			}
			cs, err := e.Concepts(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cs {
				if slices.Contains(tt.absent, c.Name) {
					t.Errorf("%q should not be a concept", c.Name)
				}
			}
		})
	}
}

// TestLogseqFolderLeftOut: Logseq keeps old copies of pages under
// logseq/bak/ and logseq/version-files/; in a Logseq graph they are not
// memories (each page would show two or three times), elsewhere a folder
// named logseq is as good as any.
func TestLogseqFolderLeftOut(t *testing.T) {
	page := "- see [[Other]]\n"
	v := newVault(t, map[string]string{
		"logseq/config.edn": "{:meta/version 1}\n",
		"pages/Note.md":     page,
		"logseq/bak/pages/Note/2024_01_01.Desktop.md": page,
		"logseq/version-files/base/pages/Note.md":     page,
	})
	if got := sorted(v.find(engine.FullText, "see")); !slices.Equal(got, []string{"pages/Note.md"}) {
		t.Errorf("Logseq graph: found %q, want only the page", got)
	}
	w := newVault(t, map[string]string{"logseq/notes.md": page})
	if got := w.find(engine.FullText, "see"); !slices.Equal(got, []string{"logseq/notes.md"}) {
		t.Errorf("not a Logseq graph: found %q", got)
	}
}

// TestSampleVaultGraph holds the README's graph examples to the bundled
// vault: a concept that is there answers, one that is not suggests the
// memories' concepts nearest in meaning, and the default drawing stays
// readable.
func TestSampleVaultGraph(t *testing.T) {
	e := openVault(t, filepath.Join("..", "testdata", "vault"))
	ctx := context.Background()
	if c, err := e.BuildContext(ctx, engine.ContextQuery{Concept: "recency decay"}); err != nil || len(c.DirectRelations) == 0 {
		t.Errorf("recency decay: %+v, %v", c, err)
	}
	_, err := e.BuildContext(ctx, engine.ContextQuery{Concept: "connection pooling"})
	if !errors.Is(err, engine.ErrUnknownConcept) {
		t.Fatalf("connection pooling: %v, want an unknown concept", err)
	}
	msg := err.Error()
	_, meaning, _ := strings.Cut(msg, "near in meaning: ")
	first := strings.Split(strings.Split(meaning, ":")[0], ", ")
	if len(first) < 2 || !slices.Contains(first[:2], "postgres-pool-exhaustion") || !slices.Contains(first[:2], "postgres-connection-pool-tuning") {
		t.Errorf("connection pooling should suggest the pool notes first: %s", msg)
	}
	if _, err := e.BuildContext(ctx, engine.ContextQuery{Concept: "holiday"}); err == nil || !strings.Contains(err.Error(), "no known concept is near it") {
		t.Errorf("holiday: %v", err)
	}
	d, err := e.Visualize(ctx, "bbolt", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if d.Nodes != engine.DefaultVisualNodes || d.Edges > 2*d.Nodes || d.HiddenEdges == 0 || !strings.Contains(d.Mermaid, "%% ") {
		t.Errorf("default drawing: %d nodes, %d edges, %d hidden", d.Nodes, d.Edges, d.HiddenEdges)
	}
}

// TestAliasNamesTheMemory: an alias is also a way to name the memory
// that declares it, for reads.
func TestAliasNamesTheMemory(t *testing.T) {
	e := openVault(t, filepath.Join("..", "testdata", "vaults", "obsidian"))
	for id, want := range map[string]string{
		"BOTW": "References/The Legend of Zelda Breath of the Wild.md",
		"botw": "References/The Legend of Zelda Breath of the Wild.md",
	} {
		if got, err := e.Resolve(id); err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", id, got, err, want)
		}
	}
	if _, err := e.Resolve("not an alias"); !errors.Is(err, engine.ErrNotFound) || !strings.Contains(err.Error(), "alias") {
		t.Errorf("unknown: %v", err)
	}
}
