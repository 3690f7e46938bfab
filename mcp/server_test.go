package mcp_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"mnemo/decay"
	"mnemo/engine"
	"mnemo/mcp"
)

// env is an engine on a copy of a memory folder with an MCP client
// connected to it over the in-memory transport.
type env struct {
	t   testing.TB
	dir string // memory folder
	eng *engine.Engine
	cs  *sdk.ClientSession
}

// newEnv copies testdata/vault (vault true) or starts empty, writes files
// (path → content), opens and syncs an engine, and connects a client.
func newEnv(t testing.TB, vault bool, files map[string]string, opts mcp.Options) *env {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "memory")
	if vault {
		copyDir(t, "../testdata/vault", dir)
	}
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		must(t, os.MkdirAll(filepath.Dir(full), 0o755))
		must(t, os.WriteFile(full, []byte(c), 0o644))
	}
	must(t, os.MkdirAll(dir, 0o755))
	ctx := context.Background()
	eng, err := engine.Open(ctx, engine.Config{MemoryDir: dir, IndexDir: filepath.Join(root, "index")})
	must(t, err)
	t.Cleanup(func() { eng.Close() })
	_, err = eng.Sync(ctx, false)
	must(t, err)
	e := &env{t: t, dir: dir, eng: eng}
	e.cs = connect(t, mcp.NewServer(eng, opts))
	return e
}

func connect(t testing.TB, s *sdk.Server) *sdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	must(t, err)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	must(t, err)
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func copyDir(t testing.TB, from, to string) {
	t.Helper()
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatalf("copy %s: %v", from, err)
	}
}

// call calls a tool; the call itself (the protocol) must not fail.
func (e *env) call(name string, args any) *sdk.CallToolResult {
	e.t.Helper()
	res, err := e.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		e.t.Fatalf("%s(%v): protocol error: %v", name, args, err)
	}
	return res
}

// ok calls a tool that must succeed and decodes its structured content.
func ok[T any](e *env, name string, args any) T {
	e.t.Helper()
	res := e.call(name, args)
	if res.IsError {
		e.t.Fatalf("%s(%v): %s", name, args, text(res))
	}
	var out T
	b, err := json.Marshal(res.StructuredContent)
	must(e.t, err)
	if err := json.Unmarshal(b, &out); err != nil {
		e.t.Fatalf("%s: structured content %s: %v", name, b, err)
	}
	return out
}

// fails calls a tool that must fail and returns its one-line message.
func (e *env) fails(name string, args any) string {
	e.t.Helper()
	res := e.call(name, args)
	if !res.IsError {
		e.t.Fatalf("%s(%.200v) succeeded: %.300s", name, args, text(res))
	}
	msg := text(res)
	if msg == "" || strings.ContainsAny(msg, "\n\r") || len(msg) > 300 {
		e.t.Errorf("%s: error is not one short line: %q", name, msg)
	}
	return msg
}

func text(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// treeHash digests every path, mode, content and link target under dir.
func treeHash(t testing.TB, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		h.Write([]byte(rel + "\x00" + info.Mode().String() + "\x00"))
		switch {
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		case d.Type()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			h.Write([]byte(l))
		}
		return nil
	})
	must(t, err)
	return hex.EncodeToString(h.Sum(nil))
}

var allTools = []string{
	"BuildContext", "DeleteMemory", "EditMemory", "ExtractConceptsFromFile", "FindSimilarConcepts", "GetConfig",
	"ListMemories", "MemoryStatus", "MoveMemory", "ReadMemory", "RecentActivity", "SearchMemories", "Sync",
	"Visualize", "WriteMemory",
}

func TestListToolsAndSchemas(t *testing.T) {
	e := newEnv(t, false, nil, mcp.Options{})
	res, err := e.cs.ListTools(context.Background(), nil)
	must(t, err)
	var names []string
	tools := map[string]*sdk.Tool{}
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		tools[tl.Name] = tl
	}
	slices.Sort(names)
	if !slices.Equal(names, allTools) {
		t.Fatalf("tools %v, want %v", names, allTools)
	}
	schema := func(v any) *jsonschema.Schema {
		var s jsonschema.Schema
		b, _ := json.Marshal(v)
		must(t, json.Unmarshal(b, &s))
		return &s
	}
	for _, tl := range res.Tools {
		in, out := schema(tl.InputSchema), schema(tl.OutputSchema)
		if in.Type != "object" || in.AdditionalProperties == nil || in.AdditionalProperties.Not == nil {
			t.Errorf("%s: input schema must be a closed object: %+v", tl.Name, in)
		}
		if out.Type != "object" || len(out.Properties) == 0 {
			t.Errorf("%s: no output schema", tl.Name)
		}
		if tl.Description == "" || tl.Annotations == nil {
			t.Errorf("%s: no description or annotations", tl.Name)
		}
	}
	// SearchMemories: the arguments and result fields agents rely on.
	in, out := schema(tools["SearchMemories"].InputSchema), schema(tools["SearchMemories"].OutputSchema)
	for _, p := range []string{"query", "mode", "pageSize", "page", "folder", "tags", "minScore", "from", "to", "sort"} {
		if in.Properties[p] == nil {
			t.Errorf("SearchMemories lacks argument %s", p)
		}
	}
	if !slices.Equal(in.Required, []string{"query"}) {
		t.Errorf("SearchMemories requires %v", in.Required)
	}
	if string(in.Properties["pageSize"].Default) != "10" || *in.Properties["pageSize"].Maximum != 200 || string(in.Properties["page"].Default) != "1" {
		t.Errorf("pageSize/page bounds: %+v %+v", in.Properties["pageSize"], in.Properties["page"])
	}
	for _, p := range []string{"mode", "query", "totalCount", "page", "pageSize", "textResultCount", "semanticResultCount", "indexing", "results"} {
		if out.Properties[p] == nil {
			t.Errorf("SearchMemories result lacks %s", p)
		}
	}
	item := out.Properties["results"].Items
	for _, p := range []string{"uri", "title", "score", "textScore", "semanticScore", "snippets", "matchCount", "created", "modified", "tags"} {
		if item == nil || item.Properties[p] == nil {
			t.Errorf("SearchMemories results lack %s", p)
		}
	}
	read := schema(tools["ReadMemory"].OutputSchema)
	for _, p := range []string{"title", "uri", "created", "modified", "tags", "checksum", "content"} {
		if read.Properties[p] == nil {
			t.Errorf("ReadMemory result lacks %s", p)
		}
	}
	for name, req := range map[string][]string{
		"ReadMemory": {"identifier"}, "WriteMemory": {"title", "content"}, "EditMemory": {"identifier", "operation", "content"},
		"DeleteMemory": {"identifier", "confirm"}, "MoveMemory": {"identifier", "destination"},
	} {
		if got := schema(tools[name].InputSchema).Required; !slices.Equal(got, req) {
			t.Errorf("%s requires %v, want %v", name, got, req)
		}
	}
	if a := tools["SearchMemories"].Annotations; !a.ReadOnlyHint || *a.OpenWorldHint {
		t.Errorf("SearchMemories annotations %+v", a)
	}
	if a := tools["DeleteMemory"].Annotations; a.ReadOnlyHint || !*a.DestructiveHint {
		t.Errorf("DeleteMemory annotations %+v", a)
	}
}

type ref struct {
	URI, Path, Title, Checksum string
	Tags                       []string
}

type searchPage struct {
	Mode                string
	Query               string
	TotalCount, Page    int
	PageSize            int
	TextResultCount     int
	SemanticResultCount int
	Results             []searchHit
	Truncated           bool
	Note                string
}

type searchHit struct {
	URI, Title                      string
	Score, TextScore, SemanticScore float64
	Snippets                        []string
	MatchCount                      int
	Tags                            []string
}

type readResult struct {
	URI, Title, Checksum, Content string
	Tags                          []string
	Size                          int
	Truncated                     bool
	Note                          string
}

func uris(p searchPage) []string {
	var out []string
	for _, r := range p.Results {
		out = append(out, r.URI)
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	e := newEnv(t, true, nil, mcp.Options{})
	before := ok[searchPage](e, "SearchMemories", map[string]any{"query": "quokka", "mode": "FullText"})
	if before.TotalCount != 0 {
		t.Fatalf("the vault already knows quokkas: %v", uris(before))
	}

	w := ok[ref](e, "WriteMemory", map[string]any{
		"title": "Quokka migration plan", "content": "# Quokka migration\n\n## Steps\n\nMove the quokkas.\n\n## Risks\n\nNone yet.\n",
		"folder": "projects", "tags": []string{"Quokka", "#plan"},
	})
	if w.URI != "memory://projects/quokka-migration-plan" || !slices.Equal(w.Tags, []string{"quokka", "plan"}) {
		t.Fatalf("write: %+v", w)
	}
	// Searchable in the very next call, in every mode.
	for _, mode := range []string{"hybrid", "SEMANTIC", "FullText"} {
		p := ok[searchPage](e, "SearchMemories", map[string]any{"query": "quokka migration", "mode": mode})
		if len(p.Results) == 0 || p.Results[0].URI != w.URI {
			t.Errorf("%s: %v", mode, uris(p))
		}
	}
	p := ok[searchPage](e, "SearchMemories", map[string]any{"query": "quokka", "tags": []string{"plan"}, "folder": "projects"})
	if p.Mode != "Hybrid" || len(p.Results) != 1 || p.Results[0].Title != "Quokka migration plan" || len(p.Results[0].Snippets) == 0 {
		t.Errorf("filtered search: %+v", p)
	}

	r := ok[readResult](e, "ReadMemory", map[string]any{"identifier": w.URI})
	if r.Checksum != w.Checksum || !strings.Contains(r.Content, "Move the quokkas.") || strings.Contains(r.Content, "title:") {
		t.Fatalf("read: %+v", r)
	}
	for _, id := range []string{"projects/quokka-migration-plan", "projects/quokka-migration-plan.md", "Quokka Migration Plan"} {
		if got := ok[readResult](e, "ReadMemory", map[string]any{"identifier": id}); got.URI != w.URI {
			t.Errorf("read %q: %s", id, got.URI)
		}
	}

	ed := ok[ref](e, "EditMemory", map[string]any{
		"identifier": w.URI, "operation": "replace_section", "section": "Risks", "content": "Wombats may object.", "checksum": r.Checksum,
	})
	if ed.Checksum == r.Checksum {
		t.Error("edit did not change the checksum")
	}
	msg := e.fails("EditMemory", map[string]any{"identifier": w.URI, "operation": "append", "content": "late", "checksum": r.Checksum})
	if !strings.Contains(msg, "checksum") {
		t.Errorf("stale checksum: %s", msg)
	}
	msg = e.fails("EditMemory", map[string]any{"identifier": w.URI, "operation": "find_replace", "find": "quokkas", "content": "x", "expectedCount": 3})
	if !strings.Contains(msg, "occurs 1 times, expected 3") {
		t.Errorf("count mismatch: %s", msg)
	}
	if p := ok[searchPage](e, "SearchMemories", map[string]any{"query": "wombats object", "mode": "FullText"}); len(p.Results) == 0 || p.Results[0].URI != w.URI {
		t.Errorf("edit not searchable: %v", uris(p))
	}

	mv := ok[ref](e, "MoveMemory", map[string]any{"identifier": w.URI, "destination": "archive/"})
	if mv.URI != "memory://archive/quokka-migration-plan" {
		t.Fatalf("move: %+v", mv)
	}
	if p := ok[searchPage](e, "SearchMemories", map[string]any{"query": "quokka", "mode": "FullText"}); !slices.Equal(uris(p), []string{mv.URI}) {
		t.Errorf("after move: %v", uris(p))
	}
	type recent struct {
		Memories []struct {
			URI, Event string
			LastRead   time.Time
		}
	}
	// The moved memory is the most recent, and its read time moved with it.
	// (Whether its event says "read" or "modified" depends on whether the
	// edit fell in the same second as the read: frontmatter dates have
	// second precision.)
	rc := ok[recent](e, "RecentActivity", map[string]any{"limit": 1})
	if len(rc.Memories) != 1 || rc.Memories[0].URI != mv.URI || rc.Memories[0].LastRead.IsZero() {
		t.Errorf("recent after move: %+v", rc)
	}

	msg = e.fails("DeleteMemory", map[string]any{"identifier": mv.URI, "confirm": false})
	if !strings.Contains(msg, "confirm") {
		t.Errorf("delete without confirm: %s", msg)
	}
	e.fails("DeleteMemory", map[string]any{"identifier": mv.URI})
	ok[struct{ Deleted bool }](e, "DeleteMemory", map[string]any{"identifier": mv.URI, "confirm": true})
	if p := ok[searchPage](e, "SearchMemories", map[string]any{"query": "quokka", "mode": "FullText"}); p.TotalCount != 0 {
		t.Errorf("deleted memory still found: %v", uris(p))
	}
	e.fails("ReadMemory", map[string]any{"identifier": mv.URI})
	if _, err := os.Stat(filepath.Join(e.dir, "archive", "quokka-migration-plan.md")); err == nil {
		t.Error("file still there")
	}
}

func TestWriteRefusesSameTitle(t *testing.T) {
	e := newEnv(t, false, nil, mcp.Options{})
	a := ok[ref](e, "WriteMemory", map[string]any{"title": "会议记录", "content": "第一次"})
	b := ok[ref](e, "WriteMemory", map[string]any{"title": "会议纪要", "content": "第二次"})
	if a.Path == b.Path || strings.Contains(a.Path, "untitled") {
		t.Errorf("CJK titles: %q and %q", a.Path, b.Path)
	}
	msg := e.fails("WriteMemory", map[string]any{"title": "会议记录", "content": "again"})
	if !strings.Contains(msg, "overwrite") {
		t.Errorf("same title: %s", msg)
	}
	if c := ok[ref](e, "WriteMemory", map[string]any{"title": "会议记录", "content": "again", "overwrite": true}); c.Path != a.Path {
		t.Errorf("overwrite wrote %q", c.Path)
	}
}

func TestSearchPagingFiltersMinScore(t *testing.T) {
	e := newEnv(t, true, nil, mcp.Options{})
	all := ok[searchPage](e, "SearchMemories", map[string]any{"query": "search index ranking", "pageSize": 200})
	if all.TotalCount < 6 || len(all.Results) != all.TotalCount {
		t.Fatalf("need a query with several results: %d", all.TotalCount)
	}
	var paged []string
	for page := 1; ; page++ {
		p := ok[searchPage](e, "SearchMemories", map[string]any{"query": "search index ranking", "pageSize": 4, "page": page})
		if p.Page != page || p.PageSize != 4 || p.TotalCount != all.TotalCount {
			t.Fatalf("page %d: %+v", page, p)
		}
		if len(p.Results) == 0 {
			break
		}
		paged = append(paged, uris(p)...)
	}
	if !slices.Equal(paged, uris(all)) {
		t.Errorf("pages %v\nall   %v", paged, uris(all))
	}
	// minScore drops exactly the results below it.
	cut := all.Results[len(all.Results)/2].Score
	p := ok[searchPage](e, "SearchMemories", map[string]any{"query": "search index ranking", "pageSize": 200, "minScore": cut})
	for _, r := range p.Results {
		if r.Score < cut {
			t.Errorf("minScore %v kept %s at %v", cut, r.URI, r.Score)
		}
	}
	if len(p.Results) == 0 || len(p.Results) >= len(all.Results) {
		t.Errorf("minScore %v kept %d of %d", cut, len(p.Results), len(all.Results))
	}
	// Folder, tags, dates.
	p = ok[searchPage](e, "SearchMemories", map[string]any{"query": "search", "folder": "decisions", "pageSize": 50})
	for _, u := range uris(p) {
		if !strings.HasPrefix(u, "memory://decisions/") {
			t.Errorf("folder filter let %s through", u)
		}
	}
	p = ok[searchPage](e, "SearchMemories", map[string]any{"query": "search", "tags": []string{"adr", "ranking"}, "pageSize": 50})
	if len(p.Results) == 0 {
		t.Error("tag filter found nothing")
	}
	for _, r := range p.Results {
		if !slices.Contains(r.Tags, "adr") || !slices.Contains(r.Tags, "ranking") {
			t.Errorf("tag filter let %s %v through", r.URI, r.Tags)
		}
	}
	p = ok[searchPage](e, "SearchMemories", map[string]any{"query": "search", "from": "2099-01-01"})
	if p.TotalCount != 0 {
		t.Errorf("from 2099: %v", uris(p))
	}
	p = ok[searchPage](e, "SearchMemories", map[string]any{"query": "bbolt", "sort": "recency", "to": "2030-12-31", "mode": "fulltext"})
	if p.TotalCount == 0 {
		t.Error("sort by recency found nothing")
	}
}

func TestSearchDoesNotCountAsRead(t *testing.T) {
	e := newEnv(t, true, nil, mcp.Options{})
	type recent struct {
		Memories []struct{ URI, Event string }
	}
	ok[searchPage](e, "SearchMemories", map[string]any{"query": "bbolt sqlite"})
	for _, m := range ok[recent](e, "RecentActivity", map[string]any{"limit": 200}).Memories {
		if m.Event == "read" {
			t.Errorf("search recorded a read of %s", m.URI)
		}
	}
	ok[readResult](e, "ReadMemory", map[string]any{"identifier": "decisions/adr-001-bbolt-over-sqlite"})
	rc := ok[recent](e, "RecentActivity", map[string]any{"limit": 1, "timespan": "1h"})
	if len(rc.Memories) != 1 || rc.Memories[0].Event != "read" || rc.Memories[0].URI != "memory://decisions/adr-001-bbolt-over-sqlite" {
		t.Errorf("read not recorded: %+v", rc)
	}
}

func TestResponseLimits(t *testing.T) {
	big := strings.Repeat("Zebras graze on the savanna at dawn. ", 4000) // ~150 KB
	files := map[string]string{"big.md": "# Big\n\n" + big}
	for i := range 80 {
		files[fmt.Sprintf("many/zebra-%02d.md", i)] = "# Zebra note\n\n" + strings.Repeat("zebra stripes and more zebra facts ", 40)
	}
	e := newEnv(t, false, files, mcp.Options{MaxResponseBytes: 8 << 10, MaxSnippetBytes: 120})
	p := ok[searchPage](e, "SearchMemories", map[string]any{"query": "zebra", "pageSize": 50})
	if !p.Truncated || !strings.Contains(p.Note, "cut to") || len(p.Results) == 0 || len(p.Results) >= 50 {
		t.Errorf("search not cut: %d results, truncated %v, note %q", len(p.Results), p.Truncated, p.Note)
	}
	for _, r := range p.Results {
		for _, s := range r.Snippets {
			if len(s) > 120 {
				t.Errorf("snippet of %d bytes", len(s))
			}
		}
	}
	res := e.call("SearchMemories", map[string]any{"query": "zebra", "pageSize": 50})
	if n := size(t, res); n > 8<<10+512 {
		t.Errorf("search response is %d bytes", n)
	}
	r := ok[readResult](e, "ReadMemory", map[string]any{"identifier": "big"})
	if !r.Truncated || r.Size != len("# Big\n\n"+big) || len(r.Content) >= r.Size || !strings.HasPrefix(big, strings.TrimPrefix(r.Content, "# Big\n\n")) {
		t.Errorf("read not cut: %d of %d bytes, truncated %v", len(r.Content), r.Size, r.Truncated)
	}
	if n := size(t, e.call("ReadMemory", map[string]any{"identifier": "big"})); n > 8<<10+512 {
		t.Errorf("read response is %d bytes", n)
	}
	type listing struct {
		Files     []struct{ URI string }
		Truncated bool
	}
	if l := ok[listing](e, "ListMemories", map[string]any{"folder": "many"}); !l.Truncated || len(l.Files) == 0 || len(l.Files) >= 80 {
		t.Errorf("list not cut: %d files, truncated %v", len(l.Files), l.Truncated)
	}
	// Under the limit nothing is cut.
	if p := ok[searchPage](e, "SearchMemories", map[string]any{"query": "zebra", "pageSize": 1}); p.Truncated || p.Note != "" {
		t.Errorf("a small page was cut: %+v", p)
	}
}

// size is the wire size of a result's content and structured content.
func size(t testing.TB, res *sdk.CallToolResult) int {
	b, err := json.Marshal(res)
	must(t, err)
	return len(b)
}

func TestSyncStatusConfig(t *testing.T) {
	env := map[string]string{
		"MAENIFOLD_DECAY_HALF_LIFE_DAYS": "45", "MAENIFOLD_DECAY_FUNCTION": "power-law", "MAENIFOLD_EXTRA": "x",
		"MAENIFOLD_OPENAI_API_KEY": "sk-secret", "HOME": "/home/x",
	}
	e := newEnv(t, true, nil, mcp.Options{
		Lookup: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Environ: func() []string {
			var kv []string
			for k, v := range env {
				kv = append(kv, k+"="+v)
			}
			return kv
		},
		Settings: []decay.Setting{
			{Name: "MAENIFOLD_DECAY_FUNCTION", Value: "exponential", Source: "flag --decay-function"},
			{Name: "MAENIFOLD_ROOT", Value: "/somewhere", Source: "env", Help: "folder holding memory/ and index/"},
		},
	})
	must(t, os.WriteFile(filepath.Join(e.dir, "new.md"), []byte("# New\n\nnarwhal\n"), 0o644))
	must(t, os.Remove(filepath.Join(e.dir, "people", "bob-tanaka.md")))
	type report struct {
		Full                    bool
		Added, Updated, Removed []string
		Unchanged               int
		DurationMs              float64
	}
	r := ok[report](e, "Sync", map[string]any{})
	if r.Full || !slices.Equal(r.Added, []string{"new.md"}) || !slices.Equal(r.Removed, []string{"people/bob-tanaka.md"}) || r.Unchanged == 0 {
		t.Errorf("sync: %+v", r)
	}
	if r := ok[report](e, "Sync", map[string]any{"full": true}); !r.Full || len(r.Added) == 0 {
		t.Errorf("full sync: %+v", r)
	}
	type status struct {
		Memories, Chunks int
		Embedder         string
		Warnings         []struct{ Path, Message string }
	}
	st := ok[status](e, "MemoryStatus", nil)
	if st.Memories != 36 || st.Chunks == 0 || st.Embedder == "" {
		t.Errorf("status: %+v", st)
	}
	type config struct {
		MemoryDir string
		Variables []struct{ Name, Value, Source string }
		Limits    struct{ MaxResponseBytes int }
	}
	c := ok[config](e, "GetConfig", map[string]any{})
	if strings.Contains(text(e.call("GetConfig", nil)), "sk-secret") {
		t.Error("GetConfig shows a secret")
	}
	got := map[string]string{}
	for _, v := range c.Variables {
		got[v.Name] = v.Value + " (" + v.Source + ")"
	}
	for name, want := range map[string]string{
		"MAENIFOLD_DECAY_HALF_LIFE_DAYS": "45 (env)",
		"MAENIFOLD_DECAY_FUNCTION":       "exponential (flag --decay-function)",
		"MAENIFOLD_ROOT":                 "/somewhere (env)",
		"MAENIFOLD_EXTRA":                "x (env)",
		"MAENIFOLD_OPENAI_API_KEY":       "(set, hidden) (env)",
	} {
		if got[name] != want {
			t.Errorf("%s = %q, want %q", name, got[name], want)
		}
	}
	if !strings.HasSuffix(got["MAENIFOLD_DECAY_STRENGTH"], " (default)") {
		t.Errorf("MAENIFOLD_DECAY_STRENGTH = %q", got["MAENIFOLD_DECAY_STRENGTH"])
	}
	if _, ok := got["HOME"]; ok || c.MemoryDir != e.dir || c.Limits.MaxResponseBytes != mcp.DefaultMaxResponseBytes {
		t.Errorf("config: %+v", c)
	}
}

// TestGetConfigHidesSecrets: a variable whose name suggests a credential
// shows only that it is set, and a URL's user and password never show.
func TestGetConfigHidesSecrets(t *testing.T) {
	env := map[string]string{
		"MAENIFOLD_PASSWD":           "hunter2",
		"MAENIFOLD_DB_PASS":          "hunter3",
		"MAENIFOLD_GIT_CREDENTIALS":  "hunter4",
		"MAENIFOLD_AUTH_HEADER":      "hunter5",
		"MAENIFOLD_HTTP_TOKEN":       "hunter6",
		"MAENIFOLD_EMBEDDER_URL":     "https://alice:hunter7@embed.example/v1",
		"MAENIFOLD_PROXIES":          "http://bob:hunter8@proxy:3128, http://plain:8080",
		"MAENIFOLD_DECAY_GRACE_DAYS": "7",
	}
	e := newEnv(t, false, nil, mcp.Options{
		Lookup: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Environ: func() []string {
			var kv []string
			for k, v := range env {
				kv = append(kv, k+"="+v)
			}
			return kv
		},
	})
	out := text(e.call("GetConfig", nil))
	for i := 2; i <= 8; i++ {
		if s := fmt.Sprintf("hunter%d", i); strings.Contains(out, s) {
			t.Errorf("GetConfig shows %s:\n%s", s, out)
		}
	}
	if strings.Contains(out, "alice") || strings.Contains(out, "bob") {
		t.Errorf("GetConfig shows a URL's user:\n%s", out)
	}
	for _, want := range []string{"https://(hidden)@embed.example/v1", "http://(hidden)@proxy:3128, http://plain:8080", "MAENIFOLD_PASSWD=(set, hidden)"} {
		if !strings.Contains(out, want) {
			t.Errorf("GetConfig lacks %q:\n%s", want, out)
		}
	}
}
