package engine

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"mnemo/decay"
	"mnemo/engine/rank"
	"mnemo/engine/vault"
	"mnemo/engine/vectors"
)

// stageVault is a synthetic vault big enough that the vector store holds
// more chunks than a first query asks for (so its bound and re-query
// matter), in folders and with tags, with dates over two years.
func stageVault(t *testing.T) *Engine {
	t.Helper()
	root := t.TempDir()
	mem := filepath.Join(root, "mem")
	words := []string{"database", "migration", "schema", "index", "query", "backup", "restore", "replica",
		"billing", "invoice", "customer", "refund", "payment", "tax", "ledger", "account",
		"deploy", "release", "rollout", "canary", "cluster", "container", "registry", "image",
		"hiring", "interview", "onboarding", "team", "mentor", "review", "goal", "feedback",
		"coffee", "mountain", "weather", "garden", "bicycle", "music", "travel", "recipe"}
	r := rand.New(rand.NewPCG(11, 12))
	folders := []string{"notes", "notes/meetings", "projects/alpha", "projects/beta", "people"}
	tags := []string{"db", "ops", "team"}
	for i := range 400 {
		topic := r.IntN(5) * 8
		var body []byte
		for p := range 1 + i%3 { // one to three chunks
			body = fmt.Appendf(body, "\n## Part %d\n\n", p)
			for range 110 {
				w := words[topic+r.IntN(8)]
				if r.IntN(4) == 0 {
					w = words[r.IntN(len(words))]
				}
				body = append(body, w+" "...)
			}
		}
		created := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i*2%730).Format(time.DateOnly)
		content := fmt.Sprintf("---\ncreated: %s\ntags: [%s]\n---\n# Memory %d %s\n%s", created, tags[i%3], i, words[topic], body)
		p := filepath.Join(mem, folders[i%len(folders)], fmt.Sprintf("m%03d.md", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	e, err := Open(ctx, Config{MemoryDir: mem, IndexDir: filepath.Join(root, "idx"), Decay: decay.Default()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if _, err := e.Sync(ctx, false); err != nil {
		t.Fatal(err)
	}
	if n := e.vec.Len(); n <= 4*64 {
		t.Fatalf("the vault holds %d chunks; the test needs more than a first vector query asks for", n)
	}
	return e
}

// exhaustive ranks every memory the slow, obvious way: BM25 for all text
// matches, the nearest chunk of every memory by the store's Nearest, the
// same fusion, decay and order. The staged Search must return its page.
func exhaustive(t *testing.T, e *Engine, q Query) []string {
	t.Helper()
	q, err := q.Validate()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sc := scope{folder: q.Folder, tags: q.Tags, from: q.From, to: q.To}
	textScore := map[string]float64{}
	if q.Mode != Semantic {
		text, err := e.textCandidates(ctx, e.ft.AnalyzeQuery(q.Text), sc)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range text {
			textScore[c.Rec.Path] = c.Text
		}
	}
	qv, err := vectors.EmbedQuery(ctx, e.emb, q.Text, q.Mode)
	if err != nil {
		t.Fatal(err)
	}
	f := rank.NewFuser(e.cfg.Fusion, e.rank)
	var all []*candidate
	for p, r := range e.files {
		if !sc.match(r) {
			continue
		}
		c := &candidate{Rec: r, Text: textScore[p]}
		if q.Mode != FullText {
			if h, ok := e.vec.Nearest(qv, p); ok && h.Similarity > 0 {
				c.Sem = math.Min(float64(h.Similarity), 1)
			}
		}
		_, isText := textScore[p]
		if !isText && c.Sem < e.rank.SemanticFloor {
			c.Sem = 0
		}
		switch q.Mode {
		case FullText:
			c.Fused = c.Text
		case Semantic:
			c.Fused = c.Sem
		default:
			c.Fused = f.Fuse(c.Text, c.Sem, 0, 0)
		}
		if c.Fused <= 0 {
			continue
		}
		c.Score = c.Fused * e.cfg.Decay.Factor(p, decay.Reference(e.reads[p], r.Created, r.mtime()), q.Now)
		if c.Score < q.MinScore {
			continue
		}
		all = append(all, c)
	}
	rank.SortCandidates(all, q.Sort)
	lo := (q.Page - 1) * q.PageSize
	var out []string
	for _, c := range all[min(lo, len(all)):min(lo+q.PageSize, len(all))] {
		out = append(out, c.Rec.Path)
	}
	return out
}

// TestSearchStages tests each stage of Search on its own, and the stages
// together against the exhaustive ranking, on one synthetic vault.
func TestSearchStages(t *testing.T) {
	e := stageVault(t)
	t.Run("matches the exhaustive ranking", func(t *testing.T) { testStagesMatchExhaustive(t, e) })
	t.Run("text candidates", func(t *testing.T) { testTextCandidates(t, e) })
	t.Run("semantic candidates", func(t *testing.T) { testSemanticCandidates(t, e) })
	t.Run("fuse", func(t *testing.T) { testFuse(t, e) })
	t.Run("decay, cut and page", func(t *testing.T) { testDecayAndCutThenPage(t, e) })
}

// countingStore counts the vector queries a search makes.
type countingStore struct {
	vectors.Store
	queries int
}

func (c *countingStore) Query(ctx context.Context, q []float32, n int, scope []string) (vectors.Found, error) {
	c.queries++
	return c.Store.Query(ctx, q, n, scope)
}

func testStagesMatchExhaustive(t *testing.T, e *Engine) {
	ctx := context.Background()
	counter := &countingStore{Store: e.vec}
	e.vec, e.countAll = counter, 0 // the path a large index takes
	defer func() { e.vec, e.countAll = counter.Store, countAllChunks }()
	var none, again int // searches with no vector query, with more than one
	now := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []Query{
		{Text: "database migration backup", Mode: Hybrid},
		{Text: "database migration backup", Mode: Semantic},
		{Text: "database migration backup", Mode: Semantic, Page: 3, PageSize: 20},
		{Text: "coffee garden", Mode: Hybrid, PageSize: 50},
		{Text: "invoice refund", Mode: Semantic, Folder: "projects"},
		{Text: "invoice refund", Mode: Hybrid, Tags: []string{"team"}},
		{Text: "canary rollout", Mode: Semantic, From: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Text: "mentor feedback", Mode: Hybrid, Page: 4},
		{Text: "postgres sql", Mode: Hybrid}, // no text match: only meaning can answer
		{Text: "database invoice deploy interview garden", Mode: Semantic, MinScore: 0.2},
		{Text: "hiring interview", Mode: Semantic, Sort: ByRecency, PageSize: 30},
	}
	for _, q := range tests {
		t.Run(fmt.Sprintf("%s %q page %d folder %q tags %v min %v %s", q.Mode, q.Text, q.Page, q.Folder, q.Tags, q.MinScore, q.Sort), func(t *testing.T) {
			q.Now, q.NoSnippets = now, true
			counter.queries = 0
			p, err := e.Search(ctx, q)
			switch {
			case counter.queries == 0:
				none++
			case counter.queries > 1:
				again++
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range p.Results {
				got = append(got, r.Path)
			}
			want := exhaustive(t, e, q)
			if len(want) == 0 {
				t.Fatal("the exhaustive ranking is empty: the case tests nothing")
			}
			if !slices.Equal(got, want) {
				t.Fatalf("staged search page\n got %v\nwant %v", got, want)
			}
		})
	}
	if none == 0 || again == 0 {
		t.Fatalf("%d searches asked the vector store nothing, %d asked it again: the cases must cover both", none, again)
	}
}

func testTextCandidates(t *testing.T, e *Engine) {
	terms := e.ft.AnalyzeQuery("database backup")
	all, err := e.textCandidates(context.Background(), terms, scope{})
	if err != nil {
		t.Fatal(err)
	}
	in, err := e.textCandidates(context.Background(), terms, scope{folder: "people"})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 || len(in) == 0 || len(in) >= len(all) {
		t.Fatalf("%d matches in all, %d under people/: want some, and fewer in the folder", len(all), len(in))
	}
	for _, cs := range [][]candidate{all, in} {
		best := 0.0
		for _, c := range cs {
			if c.Text <= 0 || c.Text > 1 {
				t.Fatalf("%s: text score %v outside (0, 1]", c.Rec.Path, c.Text)
			}
			best = math.Max(best, c.Text)
		}
		if best != 1 {
			t.Fatalf("best text score %v, want 1 (normalised by the best in scope)", best)
		}
	}
	for _, c := range in {
		if !vault.InFolder(c.Rec.Path, "people") {
			t.Fatalf("%s is outside the folder scope", c.Rec.Path)
		}
	}
}

func testSemanticCandidates(t *testing.T, e *Engine) {
	ctx := context.Background()
	qv, err := vectors.EmbedQuery(ctx, e.emb, "cluster container", Semantic)
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range []scope{{folder: "projects"}, {tags: []string{"ops"}}, {folder: "notes/meetings", tags: []string{"db"}}} {
		f, err := e.semanticCandidates(ctx, qv, sc, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Hits) == 0 || !f.Complete {
			t.Fatalf("%+v: %d hits, complete %v; want every chunk in scope", sc, len(f.Hits), f.Complete)
		}
		want := 0
		for _, r := range e.files {
			if sc.match(r) {
				want++
			}
		}
		if len(f.Hits) != want {
			t.Fatalf("%+v: %d memories, want the %d in scope", sc, len(f.Hits), want)
		}
		for _, h := range f.Hits {
			if !sc.match(e.files[h.ID]) {
				t.Fatalf("%+v: %s is out of scope", sc, h.ID)
			}
		}
	}
}

func testFuse(t *testing.T, e *Engine) {
	ctx := context.Background()
	q := Query{Text: "postgres sql music", Mode: Hybrid}
	q, _ = q.Validate()
	text, err := e.textCandidates(ctx, e.ft.AnalyzeQuery(q.Text), scope{})
	if err != nil {
		t.Fatal(err)
	}
	qv, err := vectors.EmbedQuery(ctx, e.emb, q.Text, q.Mode)
	if err != nil {
		t.Fatal(err)
	}
	p := e.plan(q)
	// With no vector query at all, every text match still gets its
	// similarity, however low: from its own stored chunks.
	cands := e.fuse(p, scope{}, text, qv, vectors.Found{Bound: 1})
	if len(cands) != len(text) {
		t.Fatalf("%d candidates from %d text matches and no vector hits", len(cands), len(text))
	}
	low := 0
	for _, c := range cands {
		h, _ := e.vec.Nearest(qv, c.Rec.Path)
		want := math.Max(0, float64(h.Similarity))
		if math.Abs(c.Sem-want) > 1e-6 {
			t.Fatalf("%s: sem %v, want its nearest chunk's %v", c.Rec.Path, c.Sem, want)
		}
		if c.Sem > 0 && c.Sem < p.Floor {
			low++
		}
		if wf := p.Fuser.Fuse(c.Text, c.Sem, 0, 0); c.Fused != wf {
			t.Fatalf("%s: fused %v, want %v", c.Rec.Path, c.Fused, wf)
		}
	}
	if low == 0 {
		t.Fatal("no text match below the semantic floor: the case tests nothing")
	}
	// Memories found by meaning join once, above the floor only.
	found, err := e.semanticCandidates(ctx, qv, scope{}, 10_000)
	if err != nil {
		t.Fatal(err)
	}
	cands = e.fuse(p, scope{}, text, qv, found)
	seen := map[string]bool{}
	for _, c := range cands {
		if seen[c.Rec.Path] {
			t.Fatalf("%s appears twice", c.Rec.Path)
		}
		seen[c.Rec.Path] = true
		if c.Text == 0 && c.Sem < p.Floor {
			t.Fatalf("%s joined on meaning alone at %v, below the floor %v", c.Rec.Path, c.Sem, p.Floor)
		}
	}
	if len(cands) <= len(text) {
		t.Fatal("no memory joined on meaning alone: the case tests nothing")
	}
}

func testDecayAndCutThenPage(t *testing.T, e *Engine) {
	now := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	var paths []string
	for p := range e.files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var cands []candidate
	for i, p := range paths[:30] {
		cands = append(cands, candidate{Rec: e.files[p], Fused: 1 - float64(i)/40, Text: 1 - float64(i)/40, TextRank: 1})
	}
	cands = append(cands, candidate{Rec: e.files[paths[30]], Fused: 0}) // no evidence: never counted
	q := Query{Text: "x", Page: 2, PageSize: 5, Now: now, NoSnippets: true}
	q, _ = q.Validate()
	p := e.plan(q)
	var page Page
	list := e.decayAndCut(p, cands, &page)
	if page.TotalCount != 30 || page.TextResultCount != 30 || page.SemanticResultCount != 0 {
		t.Fatalf("counts %d/%d/%d, want 30/30/0", page.TotalCount, page.TextResultCount, page.SemanticResultCount)
	}
	// Only what can reach page 2 is decayed; the rest is counted, not scored.
	if len(list) < 10 || len(list) >= 30 {
		t.Fatalf("%d candidates scored, want the page's contenders only (10 ≤ n < 30)", len(list))
	}
	res := e.page(q, e.ft.AnalyzeQuery(q.Text), list)
	if len(res) != 5 {
		t.Fatalf("page 2 has %d results, want 5", len(res))
	}
	for i := 1; i < len(res); i++ {
		if res[i].Score > res[i-1].Score {
			t.Fatalf("page out of order: %v then %v", res[i-1].Score, res[i].Score)
		}
	}
	// MinScore drops what decays below it, and counts only what passes.
	q.MinScore = 0.6
	p = e.plan(q)
	page = Page{}
	list = e.decayAndCut(p, slices.Clone(cands), &page)
	for _, c := range list {
		if c.Score < 0.6 {
			t.Fatalf("%s scored %v, below MinScore", c.Rec.Path, c.Score)
		}
	}
	if page.TotalCount != len(list) || page.TotalCount == 0 || page.TotalCount >= 30 {
		t.Fatalf("TotalCount %d with %d scored: want them equal, and some dropped", page.TotalCount, len(list))
	}
}
