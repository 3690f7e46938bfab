package engine_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"mnemo/engine"
)

var updateGolden = flag.Bool("update", false, "rewrite engine/testdata/*.golden.json from the current output")

// goldenQueries exercise every snippet path on the sample vault: stems,
// several terms, title- and tag-only matches, diacritics folded both ways,
// Chinese and Japanese bigrams, and mixed scripts.
var goldenQueries = []string{
	"search", "indexing", "decay half-life", "database migration", "bleve analyzer",
	"meeting notes", "embedding model", "recency", "sqlite", "postgres", "release",
	"María García", "maria garcia", "Müller", "muller", "café", "cafe", "décision", "reindexation",
	"数据库迁移", "数据库", "検索", "検索 インデックス", "会议记录", "cjk bleve 数据",
	"i18n", "Chen Wei", "bug", "roadmap q1", "tokenizer stemming",
}

// goldenSnippet is one result's excerpts.
type goldenSnippet struct {
	Snippets   []string `json:"snippets"`
	MatchCount int      `json:"matchCount"`
}

// TestSnippetsGolden pins the excerpts of every word match (FullText, all
// pages) on testdata/vault: how snippets are computed may change, what they
// say may not. Run with -update to rewrite the file after a deliberate change.
func TestSnippetsGolden(t *testing.T) {
	v := newVault(t, nil)
	if err := os.CopyFS(v.dir, os.DirFS(filepath.Join("..", "testdata", "vault"))); err != nil {
		t.Fatal(err)
	}
	v.sync()
	got := map[string]map[string]goldenSnippet{}
	for _, q := range goldenQueries {
		p, err := v.e.Search(context.Background(), engine.Query{Text: q, Mode: engine.FullText, PageSize: 200, Now: now0})
		if err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		m := map[string]goldenSnippet{}
		for _, r := range p.Results {
			m[r.Path] = goldenSnippet{Snippets: r.Snippets, MatchCount: r.MatchCount}
		}
		got[q] = m
	}
	file := filepath.Join("testdata", "snippets.golden.json")
	if *updateGolden {
		b, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	var want map[string]map[string]goldenSnippet
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	results := 0
	for _, q := range goldenQueries {
		w, g := want[q], got[q]
		if len(w) != len(g) {
			t.Errorf("%q: %d results, golden has %d", q, len(g), len(w))
		}
		for path, ws := range w {
			results++
			gs, ok := g[path]
			if !ok {
				t.Errorf("%q: %s missing", q, path)
				continue
			}
			if gs.MatchCount != ws.MatchCount {
				t.Errorf("%q %s: matchCount %d, golden %d", q, path, gs.MatchCount, ws.MatchCount)
			}
			if len(gs.Snippets) != len(ws.Snippets) {
				t.Errorf("%q %s: snippets\n got %q\nwant %q", q, path, gs.Snippets, ws.Snippets)
				continue
			}
			for i := range ws.Snippets {
				if gs.Snippets[i] != ws.Snippets[i] {
					t.Errorf("%q %s snippet %d:\n got %q\nwant %q", q, path, i, gs.Snippets[i], ws.Snippets[i])
				}
			}
		}
	}
	if results < 100 {
		t.Errorf("golden file holds %d results: too few to pin anything", results)
	}
}
