package engine_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"mnemo/engine"
	"mnemo/graph"
	"mnemo/markdown"
)

var graphVault = map[string]string{
	"db/postgres.md": "# Postgres notes\n\nWe use [[PostgreSQL]] with [[Connection Pooling]].\n\n## Tuning\n\n[[connection_pooling]] via [[PgBouncer]].",
	"db/mysql.md":    "# MySQL notes\n\n[[MySQL]] also needs [[connection pooling]]; compare [[PostgreSQL#Replication|postgres]].",
	"db/code.md":     "# Code\n\n`[[Not A Concept]]`\n\n```\n[[Nor This]]\n```\n\n[[PostgreSQL]]",
	"food/pasta.md":  "# Dinner\n\n[[Pasta]] with [[Tomato]] sauce.",
	"plain.md":       "# Plain\n\nNo links at all.",
}

func (v *vault) context(q engine.ContextQuery) engine.ConceptContext {
	v.t.Helper()
	c, err := v.e.BuildContext(context.Background(), q)
	if err != nil {
		v.t.Fatalf("BuildContext(%+v): %v", q, err)
	}
	return c
}

func relNames(rs []engine.Relation) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, fmt.Sprintf("%s:%d", r.Name, r.CoOccurrenceCount))
	}
	return out
}

func TestBuildContext(t *testing.T) {
	v := newVault(t, graphVault)
	c := v.context(engine.ContextQuery{Concept: "Connection Pooling", Depth: 1})
	if c.Concept != "connection-pooling" {
		t.Errorf("concept = %q", c.Concept)
	}
	if got, want := relNames(c.DirectRelations), []string{"postgresql:2", "mysql:1", "pgbouncer:1"}; !slices.Equal(got, want) {
		t.Errorf("direct = %v, want %v", got, want)
	}
	pg := c.DirectRelations[0]
	if !slices.Equal(pg.Files, []string{"memory://db/mysql", "memory://db/postgres"}) && !slices.Equal(pg.Files, []string{"memory://db/postgres", "memory://db/mysql"}) {
		t.Errorf("files = %v", pg.Files)
	}
	if pg.WeightedScore <= 0 || pg.WeightedScore > 2 {
		t.Errorf("weightedScore = %v, want in (0, 2]", pg.WeightedScore)
	}
	if len(c.ExpandedRelations) != 0 {
		t.Errorf("depth 1 expanded = %v", relNames(c.ExpandedRelations))
	}
	c = v.context(engine.ContextQuery{Concept: "pgbouncer", Depth: 2, IncludeContent: true})
	if got, want := relNames(c.ExpandedRelations), []string{"mysql:1"}; !slices.Equal(got, want) {
		t.Errorf("expanded = %v, want %v", got, want)
	}
	if !strings.Contains(c.DirectRelations[0].ContentPreview, "Postgres notes") {
		t.Errorf("contentPreview = %q", c.DirectRelations[0].ContentPreview)
	}
	if slices.Contains(c.CommunitySiblings, "pasta") {
		t.Errorf("pasta is a sibling of pgbouncer: %v", c.CommunitySiblings)
	}

	_, err := v.e.BuildContext(context.Background(), engine.ContextQuery{Concept: "connection-polling"})
	if !errors.Is(err, engine.ErrUnknownConcept) || !strings.Contains(err.Error(), "connection-pooling") {
		t.Errorf("unknown concept: %v, want ErrUnknownConcept suggesting connection-pooling", err)
	}
	for _, bad := range []engine.ContextQuery{{Concept: "pasta", Depth: 5}, {Concept: "pasta", MaxEntities: 101}, {Concept: "  "}} {
		if _, err := v.e.BuildContext(context.Background(), bad); !errors.Is(err, engine.ErrBadGraphArg) {
			t.Errorf("BuildContext(%+v) = %v, want ErrBadGraphArg", bad, err)
		}
	}
	for _, code := range []string{"not-a-concept", "nor-this"} {
		if _, err := v.e.BuildContext(context.Background(), engine.ContextQuery{Concept: code}); !errors.Is(err, engine.ErrUnknownConcept) {
			t.Errorf("%s (only in code) is a concept: %v", code, err)
		}
	}
}

func TestGraphFollowsEdits(t *testing.T) {
	v := newVault(t, graphVault)
	// An edit that removes a link removes the relation.
	v.write("db/mysql.md", "# MySQL notes\n\n[[MySQL]] only.")
	v.syncPaths("db/mysql.md")
	c := v.context(engine.ContextQuery{Concept: "connection-pooling", Depth: 1})
	if got, want := relNames(c.DirectRelations), []string{"pgbouncer:1", "postgresql:1"}; !slices.Equal(got, want) {
		t.Errorf("after edit: direct = %v, want %v", got, want)
	}
	// A delete removes the concepts only it mentioned.
	v.remove("food/pasta.md")
	v.syncPaths("food/pasta.md")
	if _, err := v.e.BuildContext(context.Background(), engine.ContextQuery{Concept: "pasta"}); !errors.Is(err, engine.ErrUnknownConcept) {
		t.Errorf("pasta after delete: %v", err)
	}
	// A move changes the URIs.
	if err := os.Rename(v.abs("db/postgres.md"), v.abs("archive.md")); err != nil {
		t.Fatal(err)
	}
	v.sync()
	c = v.context(engine.ContextQuery{Concept: "pgbouncer", Depth: 1})
	if got := c.DirectRelations[0].Files; !slices.Equal(got, []string{"memory://archive"}) {
		t.Errorf("after move: files = %v", got)
	}
	before := v.concepts()
	st := v.status().Graph
	// The graph survives a restart, and a full rebuild gives the same.
	v.reopen()
	if got := v.concepts(); !reflect.DeepEqual(got, before) {
		t.Errorf("after reopen: %v, want %v", got, before)
	}
	if _, err := v.e.Sync(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	if got := v.concepts(); !reflect.DeepEqual(got, before) {
		t.Errorf("after sync --full: %v, want %v", got, before)
	}
	if st.Concepts != len(before) || st.Mentions == 0 || st.Communities < 1 {
		t.Errorf("status graph = %+v", st)
	}
}

func (v *vault) concepts() []engine.ConceptInfo {
	v.t.Helper()
	cs, err := v.e.Concepts(context.Background())
	if err != nil {
		v.t.Fatal(err)
	}
	return cs
}

func TestFileConcepts(t *testing.T) {
	v := newVault(t, graphVault)
	fc, err := v.e.FileConcepts(context.Background(), "db/postgres")
	if err != nil {
		t.Fatal(err)
	}
	want := []engine.FileConcept{
		{Name: "connection-pooling", Count: 2, Sections: []string{"Postgres notes", "Tuning"}},
		{Name: "pgbouncer", Count: 1, Sections: []string{"Tuning"}},
		{Name: "postgresql", Count: 1, Sections: []string{"Postgres notes"}},
	}
	if fc.URI != "memory://db/postgres" || !reflect.DeepEqual(fc.Concepts, want) {
		t.Errorf("FileConcepts = %+v, want %+v", fc, want)
	}
	if fc, err := v.e.FileConcepts(context.Background(), "plain.md"); err != nil || len(fc.Concepts) != 0 {
		t.Errorf("plain: %+v, %v", fc, err)
	}
	if _, err := v.e.FileConcepts(context.Background(), "nope"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("missing file: %v", err)
	}
}

func TestVisualize(t *testing.T) {
	v := newVault(t, map[string]string{"q.md": `[[Say "Hi"]] [[a|b]] [[<script>]] [[C# notes]] [[x]]`})
	d, err := v.e.Visualize(context.Background(), "x", 2, 30)
	if err != nil {
		t.Fatal(err)
	}
	// [[<script>]] is a link too: names may hold what looks like HTML.
	if d.Nodes != 5 || d.Edges != 10 || !strings.HasPrefix(d.Mermaid, "graph LR\n") {
		t.Errorf("diagram = %+v", d)
	}
	for _, raw := range []string{`"Hi"`, "<script>", "c#-notes"} {
		if strings.Contains(d.Mermaid, raw) {
			t.Errorf("label %s not escaped:\n%s", raw, d.Mermaid)
		}
	}
	if _, err := v.e.Visualize(context.Background(), "x", 2, 101); !errors.Is(err, engine.ErrBadGraphArg) {
		t.Errorf("maxNodes 101: %v", err)
	}
}

func TestFindSimilarConcepts(t *testing.T) {
	v := newVault(t, map[string]string{
		"a.md": "# Databases\n\n[[PostgreSQL]] and [[MySQL]] are relational databases.",
		"b.md": "# SQL servers\n\n## Replication\n\n[[MySQL]] replication; [[PostgreSQL]] replication.",
		"c.md": "# Dinner recipes\n\n[[Pasta]] with [[Tomato]] and basil.",
		"d.md": "# Database indexes\n\n[[SQLite]] is an embedded database.",
	})
	s, err := v.e.FindSimilarConcepts(context.Background(), "mysql", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Similar) != 4 {
		t.Fatalf("similar = %+v", s.Similar)
	}
	rank := map[string]int{}
	for i, r := range s.Similar {
		rank[r.Name] = i
		if r.Similarity < 0 || r.Similarity > 1 || r.Name == "mysql" {
			t.Errorf("bad entry %+v", r)
		}
		if i > 0 && r.Similarity > s.Similar[i-1].Similarity {
			t.Errorf("not sorted: %+v", s.Similar)
		}
	}
	if rank["postgresql"] > rank["pasta"] || rank["postgresql"] > rank["tomato"] {
		t.Errorf("postgresql not more like mysql than pasta/tomato: %+v", s.Similar)
	}
	if _, err := v.e.FindSimilarConcepts(context.Background(), "mysql", 51); !errors.Is(err, engine.ErrBadGraphArg) {
		t.Errorf("maxResults 51: %v", err)
	}
}

func TestGraphNotReady(t *testing.T) {
	v := newVault(t, nil)
	if _, err := v.e.BuildContext(context.Background(), engine.ContextQuery{Concept: "x"}); !errors.Is(err, engine.ErrIndexNotReady) {
		t.Errorf("before the first sync: %v, want ErrIndexNotReady", err)
	}
}

// TestGraphIncrementalEqualsRebuild is the property the graph is built
// for: after any sequence of edits, deletes and moves on disk, synced
// path by path or whole, the engine's graph equals the one the files on
// disk give when parsed from scratch — and so does the graph a reopened
// engine loads from the state store.
func TestGraphIncrementalEqualsRebuild(t *testing.T) {
	concepts := []string{"Alpha", "beta", "Gamma Ray", "gamma_ray", "Δelta", "東京", "Alpha#Sec|alias", "beta|B", "f1", "d0/f2"}
	for seed := range uint64(3) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			v := newVault(t, nil)
			v.sync()
			body := func() string {
				var b strings.Builder
				if r.IntN(3) == 0 { // aliases: links to them move to this file's concept (f0…f5)
					b.WriteString("---\naliases: [")
					for i := range r.IntN(3) {
						if i > 0 {
							b.WriteString(", ")
						}
						fmt.Fprintf(&b, "%q", strings.Split(concepts[r.IntN(6)], "#")[0])
					}
					b.WriteString("]\n---\n")
				}
				for range 1 + r.IntN(3) {
					fmt.Fprintf(&b, "## H%d\n\n", r.IntN(3))
					for range r.IntN(4) {
						c := concepts[r.IntN(len(concepts))]
						switch r.IntN(5) {
						case 0:
							fmt.Fprintf(&b, "`[[%s]]` ", c) // code span: not a link
						default:
							fmt.Fprintf(&b, "[[%s]] ", c)
						}
					}
					b.WriteString("\n\n")
				}
				return b.String()
			}
			for step := range 30 {
				path := fmt.Sprintf("d%d/f%d.md", r.IntN(2), r.IntN(6))
				touched := []string{path}
				switch r.IntN(4) {
				case 0, 1:
					v.write(path, body())
				case 2:
					v.remove(path)
				case 3:
					to := fmt.Sprintf("d%d/f%d.md", r.IntN(2), r.IntN(6))
					if _, err := os.Stat(v.abs(path)); err == nil && to != path {
						os.MkdirAll(filepath.Dir(v.abs(to)), 0o755)
						if err := os.Rename(v.abs(path), v.abs(to)); err != nil {
							t.Fatal(err)
						}
						touched = append(touched, to)
					}
				}
				if r.IntN(2) == 0 {
					v.syncPaths(touched...)
				} else {
					v.sync()
				}
				if step%10 == 9 {
					v.reopen()
				}
				checkGraph(t, v, step)
			}
		})
	}
}

// checkGraph compares the engine's graph with one built from the files.
func checkGraph(t *testing.T, v *vault, step int) {
	t.Helper()
	want := graph.New()
	var files []string
	filepath.WalkDir(v.dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return nil
		}
		rel, _ := filepath.Rel(v.dir, p)
		rel = filepath.ToSlash(rel)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := markdown.Parse(rel, data, markdown.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var ms []graph.Mention
		for _, m := range doc.Mentions {
			ms = append(ms, graph.Mention{Concept: m.Concept, Count: m.Count, Sections: m.Sections})
		}
		want.Set(rel, ms)
		want.SetNames(rel, doc.Concept, doc.Aliases)
		files = append(files, rel)
		return nil
	})
	var wantConcepts []engine.ConceptInfo
	for _, c := range want.Concepts() {
		wantConcepts = append(wantConcepts, engine.ConceptInfo{Name: c.Name, Mentions: c.Mentions, Files: c.Files})
	}
	if got := v.concepts(); !reflect.DeepEqual(nonNilSlice(got), nonNilSlice(wantConcepts)) {
		t.Fatalf("step %d: concepts\n%v\nwant\n%v", step, got, wantConcepts)
	}
	for _, f := range files {
		fc, err := v.e.FileConcepts(context.Background(), f)
		if err != nil {
			t.Fatalf("step %d: FileConcepts(%s): %v", step, f, err)
		}
		got := graph.New()
		var ms []graph.Mention
		for _, c := range fc.Concepts {
			ms = append(ms, graph.Mention{Concept: c.Name, Count: c.Count, Sections: c.Sections})
		}
		got.Set(f, ms)
		exp := graph.New()
		exp.Set(f, want.FileMentions(f))
		if !got.Equal(exp) {
			t.Fatalf("step %d: %s mentions %+v, want %+v", step, f, fc.Concepts, want.FileMentions(f))
		}
	}
}

func nonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// TestGraphQueriesDuringSyncs runs the graph queries while edits are
// synced (run with -race): every answer is an answer or a clean
// ErrUnknownConcept for a concept an edit just removed.
func TestGraphQueriesDuringSyncs(t *testing.T) {
	v := newVault(t, graphVault)
	ctx := context.Background()
	done := make(chan struct{})
	errs := make(chan error, 4)
	for q := range 3 {
		go func() {
			for {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				var err error
				switch q {
				case 0:
					_, err = v.e.BuildContext(ctx, engine.ContextQuery{Concept: "postgresql"})
				case 1:
					_, err = v.e.FindSimilarConcepts(ctx, "postgresql", 5)
				case 2:
					_, err = v.e.Visualize(ctx, "postgresql", 2, 10)
				}
				if err != nil && !errors.Is(err, engine.ErrUnknownConcept) {
					errs <- err
					return
				}
			}
		}()
	}
	for i := range 20 {
		v.write("db/new.md", fmt.Sprintf("[[PostgreSQL]] [[Topic %d]]", i))
		v.syncPaths("db/new.md")
	}
	close(done)
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
