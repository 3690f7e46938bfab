package engine_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"mnemo/decay"
	"mnemo/engine"
)

func TestQueryValidation(t *testing.T) {
	outside := t.TempDir()
	v := newVault(t, map[string]string{"a.md": memo("A", "", nil, "alpha beta")})
	if err := os.Symlink(outside, v.abs("escape")); err != nil {
		t.Fatal(err)
	}
	day := func(d int) time.Time { return time.Date(2025, 1, d, 0, 0, 0, 0, time.UTC) }
	cases := []struct {
		name string
		q    engine.Query
		want error
	}{
		{"empty", engine.Query{Text: ""}, engine.ErrEmptyQuery},
		{"blank", engine.Query{Text: " \t\n "}, engine.ErrEmptyQuery},
		{"stopwords", engine.Query{Text: "the of and"}, engine.ErrNoTerms},
		{"punctuation", engine.Query{Text: "?!… --"}, engine.ErrNoTerms},
		{"semantic, nothing to embed (numbers, initials)", engine.Query{Text: "42 1917 x", Mode: engine.Semantic}, engine.ErrNoTerms},
		{"page -1", engine.Query{Text: "alpha", Page: -1}, engine.ErrBadPage},
		{"page that would overflow", engine.Query{Text: "alpha", Page: math.MaxInt / 100}, engine.ErrBadPage},
		{"pageSize 201", engine.Query{Text: "alpha", PageSize: 201}, engine.ErrBadPageSize},
		{"pageSize -1", engine.Query{Text: "alpha", PageSize: -1}, engine.ErrBadPageSize},
		{"mode fuzzy", engine.Query{Text: "alpha", Mode: "fuzzy"}, engine.ErrBadMode},
		{"sort x", engine.Query{Text: "alpha", Sort: "x"}, engine.ErrBadSort},
		{"minScore 1.5", engine.Query{Text: "alpha", MinScore: 1.5}, engine.ErrBadMinScore},
		{"minScore -0.1", engine.Query{Text: "alpha", MinScore: -0.1}, engine.ErrBadMinScore},
		{"minScore NaN", engine.Query{Text: "alpha", MinScore: math.NaN()}, engine.ErrBadMinScore},
		{"from after to", engine.Query{Text: "alpha", From: day(2), To: day(1)}, engine.ErrBadRange},
		{"folder ../x", engine.Query{Text: "alpha", Folder: "../x"}, engine.ErrOutsideRoot},
		{"folder /etc", engine.Query{Text: "alpha", Folder: "/etc"}, engine.ErrOutsideRoot},
		{"folder ..%2f..", engine.Query{Text: "alpha", Folder: "..%2f.."}, engine.ErrOutsideRoot},
		{"folder a/../../b", engine.Query{Text: "alpha", Folder: "a/../../b"}, engine.ErrOutsideRoot},
		{"folder NUL", engine.Query{Text: "alpha", Folder: "x\x00y"}, engine.ErrOutsideRoot},
		{"folder backslashes", engine.Query{Text: "alpha", Folder: `..\..\etc`}, engine.ErrOutsideRoot},
		{"folder symlink outside", engine.Query{Text: "alpha", Folder: "escape"}, engine.ErrOutsideRoot},
		{"folder under symlink outside", engine.Query{Text: "alpha", Folder: "escape/sub"}, engine.ErrOutsideRoot},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.q.Now = now0
			_, err := v.e.Search(context.Background(), c.q)
			if !errors.Is(err, c.want) {
				t.Errorf("Search(%+v): err = %v, want %v", c.q, err, c.want)
			}
		})
	}
	ok := []struct {
		name string
		q    engine.Query
	}{
		{"mode FullText", engine.Query{Text: "alpha", Mode: "FullText"}},
		{"mode SEMANTIC padded", engine.Query{Text: "alpha", Mode: " SEMANTIC "}},
		{"sort Recency", engine.Query{Text: "alpha", Sort: "Recency"}},
		{"pageSize 200", engine.Query{Text: "alpha", PageSize: 200}},
		{"minScore 1", engine.Query{Text: "alpha", MinScore: 1}},
		{"from equals to", engine.Query{Text: "alpha", From: day(1), To: day(1)}},
		{"folder that does not exist", engine.Query{Text: "alpha", Folder: "nowhere"}},
		{"folder . is the root", engine.Query{Text: "alpha", Folder: "."}},
		{"fulltext unknown word", engine.Query{Text: "qqzxvw", Mode: engine.FullText}},
	}
	for _, c := range ok {
		t.Run(c.name, func(t *testing.T) {
			c.q.Now = now0
			if _, err := v.e.Search(context.Background(), c.q); err != nil {
				t.Errorf("Search(%+v): %v", c.q, err)
			}
		})
	}
	// Defaults are filled in.
	q, err := engine.Query{Text: "  alpha ", Mode: "FullText"}.Validate()
	if err != nil || q.Mode != engine.FullText || q.Page != 1 || q.PageSize != 10 || q.Sort != engine.ByRelevance || q.Text != "alpha" || q.Now.IsZero() {
		t.Errorf("Validate defaults: %+v, %v", q, err)
	}
	if p := v.search(engine.Query{Text: "alpha", Mode: "FullText"}); p.Mode != engine.FullText || len(p.Results) != 1 {
		t.Errorf(`mode "FullText": page mode %q, %d results`, p.Mode, len(p.Results))
	}
	if p := v.search(engine.Query{Text: "alpha", Folder: "nowhere"}); p.TotalCount != 0 {
		t.Errorf("folder that does not exist: %d results", p.TotalCount)
	}
}

// filterVault: every file but other.md mentions "heron".
func filterVault(t *testing.T) *vault {
	v := newVault(t, nil)
	v.writeAll(map[string]string{
		"decisions/db.md":        memo("Database choice", "2025-01-10", []string{"db", "arch"}, "The heron picked Postgres."),
		"decisions/api.md":       memo("API versioning", "2025-03-05", []string{"api"}, "The heron versions the API."),
		"decisions/sub/cache.md": memo("Cache layer", "2025-05-01", []string{"db", "cache"}, "The heron adds a cache."),
		"decisions-old/db.md":    memo("Old database", "2024-06-01", []string{"db"}, "The heron once chose MySQL."),
		"notes/meet.md":          memo("Meeting", "2025-02-15", []string{"Meeting", "DB"}, "The heron met the team. #standup"),
		"notes/nodate.md":        memo("Undated", "", []string{"db"}, "The heron forgot the date."),
		"other.md":               memo("Other", "2025-02-20", []string{"db"}, "A kingfisher by the river."),
	})
	mtime := time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(v.abs("notes/nodate.md"), mtime, mtime); err != nil {
		t.Fatal(err)
	}
	v.sync()
	return v
}

func TestFilters(t *testing.T) {
	v := filterVault(t)
	date := func(s string) time.Time {
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	cases := []struct {
		name     string
		q        engine.Query
		scope    []string // every file inside the filters
		skipText bool     // other.md lacks "heron"
	}{
		{"none", engine.Query{}, []string{"decisions/db.md", "decisions/api.md", "decisions/sub/cache.md", "decisions-old/db.md", "notes/meet.md", "notes/nodate.md", "other.md"}, false},
		{"folder decisions", engine.Query{Folder: "decisions"}, []string{"decisions/db.md", "decisions/api.md", "decisions/sub/cache.md"}, false},
		{"folder decisions/", engine.Query{Folder: "decisions/"}, []string{"decisions/db.md", "decisions/api.md", "decisions/sub/cache.md"}, false},
		{"folder ./decisions/sub", engine.Query{Folder: "./decisions/sub"}, []string{"decisions/sub/cache.md"}, false},
		{"folder decisions-old", engine.Query{Folder: "decisions-old"}, []string{"decisions-old/db.md"}, false},
		{"folder decis (a prefix, not a folder)", engine.Query{Folder: "decis"}, nil, false},
		{"tag db", engine.Query{Tags: []string{"db"}}, []string{"decisions/db.md", "decisions/sub/cache.md", "decisions-old/db.md", "notes/meet.md", "notes/nodate.md", "other.md"}, false},
		{"tags #DB and Cache", engine.Query{Tags: []string{"#DB", "Cache"}}, []string{"decisions/sub/cache.md"}, false},
		{"tags db and api", engine.Query{Tags: []string{"db", "api"}}, nil, false},
		{"inline tag", engine.Query{Tags: []string{"standup"}}, []string{"notes/meet.md"}, false},
		{"tag meeting (frontmatter Meeting)", engine.Query{Tags: []string{"meeting"}}, []string{"notes/meet.md"}, false},
		{"from", engine.Query{From: date("2025-02-01")}, []string{"decisions/api.md", "decisions/sub/cache.md", "notes/meet.md", "notes/nodate.md", "other.md"}, false},
		{"to", engine.Query{To: date("2025-02-01")}, []string{"decisions/db.md", "decisions-old/db.md"}, false},
		{"from and to", engine.Query{From: date("2025-02-01"), To: date("2025-04-15")}, []string{"decisions/api.md", "notes/meet.md", "notes/nodate.md", "other.md"}, false},
		{"from equals to (inclusive)", engine.Query{From: date("2025-03-05"), To: date("2025-03-05")}, []string{"decisions/api.md"}, false},
		{"folder, tag and from", engine.Query{Folder: "decisions", Tags: []string{"db"}, From: date("2025-02-01")}, []string{"decisions/sub/cache.md"}, false},
		{"folder notes and tag db", engine.Query{Folder: "notes", Tags: []string{"db"}}, []string{"notes/meet.md", "notes/nodate.md"}, false},
	}
	for _, c := range cases {
		inScope := map[string]bool{}
		var withHeron []string
		for _, p := range c.scope {
			inScope[p] = true
			if p != "other.md" {
				withHeron = append(withHeron, p)
			}
		}
		for _, m := range allModes {
			t.Run(fmt.Sprintf("%s/%s", c.name, m), func(t *testing.T) {
				q := c.q
				q.Text, q.Mode, q.PageSize = "heron", m, 200
				p := v.search(q)
				got := paths(p)
				for _, g := range got {
					if !inScope[g] {
						t.Errorf("result %s is outside the filters", g)
					}
				}
				if p.TotalCount != len(p.Results) {
					t.Errorf("TotalCount %d, %d results on a 200-page", p.TotalCount, len(p.Results))
				}
				switch m {
				case engine.FullText:
					if !slices.Equal(sorted(got), sorted(withHeron)) {
						t.Errorf("got %v, want exactly %v", sorted(got), sorted(withHeron))
					}
					if p.TextResultCount != len(withHeron) {
						t.Errorf("TextResultCount %d, want %d", p.TextResultCount, len(withHeron))
					}
				case engine.Hybrid:
					for _, w := range withHeron {
						if !slices.Contains(got, w) {
							t.Errorf("hybrid misses %s, which contains the word", w)
						}
					}
					if len(withHeron) > 0 && !slices.Contains(withHeron, got[0]) {
						t.Errorf("hybrid top %s is not a text match", got[0])
					}
				}
			})
		}
	}
}

// pageVault has n memories that all mention "osprey", with varied weight.
func pageVault(t *testing.T, n int) *vault {
	files := map[string]string{}
	for i := range n {
		body := strings.Repeat("osprey ", 1+i%5) + synthetic(uint64(i), 20+i%7)
		created := now0.AddDate(0, 0, -10*i).Format(time.DateOnly)
		files[fmt.Sprintf("f%02d.md", i)] = memo(fmt.Sprintf("Osprey note %d", i), created, nil, body)
	}
	return newVault(t, files)
}

func TestPagination(t *testing.T) {
	const n = 23
	v := pageVault(t, n)
	for _, m := range allModes {
		for _, sort := range []engine.Sort{engine.ByRelevance, engine.ByRecency} {
			t.Run(fmt.Sprintf("%s/%s", m, sort), func(t *testing.T) {
				base := engine.Query{Text: "osprey", Mode: m, Sort: sort}
				all := base
				all.PageSize = 200
				whole := v.search(all)
				if m != engine.Semantic && whole.TotalCount != n {
					t.Fatalf("TotalCount %d, want %d", whole.TotalCount, n)
				}
				var joined []string
				for page := 1; ; page++ {
					q := base
					q.Page, q.PageSize = page, 5
					p := v.search(q)
					if p.TotalCount != whole.TotalCount {
						t.Fatalf("page %d: TotalCount %d, want %d", page, p.TotalCount, whole.TotalCount)
					}
					if p.Page != page || p.PageSize != 5 {
						t.Errorf("page %d: Page %d PageSize %d", page, p.Page, p.PageSize)
					}
					if len(p.Results) == 0 {
						if page != (whole.TotalCount+4)/5+1 {
							t.Errorf("empty page %d, want the first empty page to be %d", page, (whole.TotalCount+4)/5+1)
						}
						break
					}
					if len(p.Results) > 5 {
						t.Fatalf("page %d has %d results", page, len(p.Results))
					}
					joined = append(joined, paths(p)...)
				}
				if !slices.Equal(joined, paths(whole)) {
					t.Errorf("pages joined:\n%v\nwant the one big page:\n%v", joined, paths(whole))
				}
				far := base
				far.Page = 100
				if p := v.search(far); len(p.Results) != 0 || p.TotalCount != whole.TotalCount {
					t.Errorf("page 100: %d results, TotalCount %d, want 0 and %d", len(p.Results), p.TotalCount, whole.TotalCount)
				}
			})
		}
	}
}

func TestScoresAndMinScore(t *testing.T) {
	v := pageVault(t, 23)
	for _, m := range allModes {
		all := v.search(engine.Query{Text: "osprey", Mode: m, PageSize: 200})
		for _, r := range all.Results {
			for name, s := range map[string]float64{"Score": r.Score, "TextScore": r.TextScore, "SemanticScore": r.SemanticScore, "Decay": r.Decay} {
				if s < 0 || s > 1 || math.IsNaN(s) {
					t.Errorf("%s: %s %s = %v, outside 0–1", m, r.Path, name, s)
				}
			}
			if r.Decay < 1-v.cfg.Decay.Strength-1e-9 {
				t.Errorf("%s: %s decay %v below 1 − strength", m, r.Path, r.Decay)
			}
		}
		if m == engine.FullText {
			top := 0
			for _, r := range all.Results {
				if r.TextScore == 1 {
					top++
					if math.Abs(r.Score-r.Decay) > 1e-6 {
						t.Errorf("fulltext best match %s: Score %v, want 1 × decay %v", r.Path, r.Score, r.Decay)
					}
				}
			}
			if top == 0 {
				t.Errorf("fulltext: no result has TextScore 1")
			}
		}
		for _, min := range []float64{0, 0.2, 0.5, 0.8, 0.95, 1} {
			want := 0
			for _, r := range all.Results {
				if r.Score >= min {
					want++
				}
			}
			p := v.search(engine.Query{Text: "osprey", Mode: m, PageSize: 200, MinScore: min})
			for _, r := range p.Results {
				if r.Score < min {
					t.Errorf("%s minScore %v: %s scores %v", m, min, r.Path, r.Score)
				}
			}
			// Scores are rounded to 6 places in results; allow a result
			// that sits exactly on the boundary either way.
			if d := p.TotalCount - want; d < -1 || d > 1 || p.TotalCount != len(p.Results) {
				t.Errorf("%s minScore %v: TotalCount %d (%d results), want %d", m, min, p.TotalCount, len(p.Results), want)
			}
		}
	}
}

func TestSortByRecency(t *testing.T) {
	v := newVault(t, nil)
	v.writeAll(map[string]string{
		"m.md": "---\ntitle: M\ncreated: 2024-01-01\nmodified: 2025-05-20\n---\nthe pelican flies\n",
		"c.md": memo("C", "2025-05-10", nil, "the pelican dives"),
		"t.md": "---\ntitle: T\n---\nthe pelican sleeps\n",
		"o.md": "---\ntitle: O\ncreated: 2023-01-01\nmodified: 2025-01-01\n---\nthe pelican pelican pelican eats\n",
	})
	mtime := time.Date(2025, 5, 15, 0, 0, 0, 0, time.UTC)
	for _, p := range []string{"m.md", "c.md", "t.md", "o.md"} {
		// Only t.md has no dates of its own; the others' mtimes must not matter.
		mt := mtime
		if p != "t.md" {
			mt = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		}
		if err := os.Chtimes(v.abs(p), mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	v.sync()
	want := []string{"m.md", "t.md", "c.md", "o.md"}
	for _, m := range allModes {
		got := paths(v.search(engine.Query{Text: "pelican", Mode: m, Sort: engine.ByRecency}))
		var present []string
		for _, w := range want {
			if slices.Contains(got, w) {
				present = append(present, w)
			}
		}
		if !slices.Equal(got, present) || len(got) < 3 {
			t.Errorf("%s by recency: %v, want order %v", m, got, want)
		}
	}
	// By relevance, o.md (three pelicans) is first instead.
	if got := paths(v.search(engine.Query{Text: "pelican", Mode: engine.FullText})); got[0] != "o.md" {
		t.Errorf("fulltext by relevance: %v, want o.md first", got)
	}
	// Results report modified, else the file's mtime.
	p := v.search(engine.Query{Text: "pelican", Mode: engine.FullText})
	if r, _ := result(p, "t.md"); !r.Modified.Equal(mtime) {
		t.Errorf("t.md Modified = %v, want its mtime %v", r.Modified, mtime)
	}
	if r, _ := result(p, "m.md"); !r.Modified.Equal(time.Date(2025, 5, 20, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("m.md Modified = %v, want 2025-05-20", r.Modified)
	}
}

// Two memories with the same text are equally relevant; the newer one
// (by created) comes first, whatever their names.
func TestTiesNewerFirst(t *testing.T) {
	files := map[string]string{
		// Both inside the 28-day grace period, so decay cannot separate them.
		"a-older.md": memo("Same", "2025-05-15", nil, "the identical text about llamas and alpacas"),
		"b-newer.md": memo("Same", "2025-05-25", nil, "the identical text about llamas and alpacas"),
		"c.md":       memo("Other", "2025-05-20", nil, "camels cross the desert"),
	}
	cases := []struct {
		name   string
		mode   engine.Mode
		fusion engine.Fusion
	}{
		{"fulltext", engine.FullText, ""},
		{"semantic", engine.Semantic, ""},
		{"hybrid weighted", engine.Hybrid, engine.WeightedSum},
		{"hybrid rrf", engine.Hybrid, engine.RRF},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := newVault(t, files, func(cfg *engine.Config) { cfg.Fusion = c.fusion })
			p := v.search(engine.Query{Text: "llamas alpacas", Mode: c.mode})
			got := paths(p)
			if len(got) < 2 || got[0] != "b-newer.md" || got[1] != "a-older.md" {
				t.Fatalf("got %v, want b-newer.md then a-older.md", got)
			}
			if p.Results[0].Score != p.Results[1].Score {
				t.Errorf("identical memories score %v and %v", p.Results[0].Score, p.Results[1].Score)
			}
		})
	}
}

func TestDecay(t *testing.T) {
	files := map[string]string{
		// The old one sorts first by name, so only decay can put it second.
		"a-old.md": memo("Same", now0.AddDate(-2, 0, 0).Format(time.DateOnly), nil, "the identical text about wombats"),
		"b-new.md": memo("Same", now0.AddDate(0, 0, -3).Format(time.DateOnly), nil, "the identical text about wombats"),
		"c.md":     memo("Other", now0.Format(time.DateOnly), nil, "unrelated marsupials"),
	}
	dc := decay.Default()
	dc.Strength = 0.1 // strong enough to see; the default is gentler
	oldCreated := time.Date(now0.Year()-2, now0.Month(), now0.Day(), 0, 0, 0, 0, time.UTC)
	wantOld := dc.Factor("a-old.md", oldCreated, now0)
	if wantOld > 0.91 || wantOld < 0.9 {
		t.Fatalf("test premise: factor of a two-year-old memory is %v, want about 0.9", wantOld)
	}
	v := newVault(t, files, func(cfg *engine.Config) { cfg.Decay = dc })
	for _, m := range allModes {
		p := v.search(engine.Query{Text: "wombats", Mode: m})
		got := paths(p)
		if len(got) < 2 || got[0] != "b-new.md" || got[1] != "a-old.md" {
			t.Errorf("%s: %v, want b-new.md then a-old.md", m, got)
			continue
		}
		n, o := p.Results[0], p.Results[1]
		if n.Decay != 1 {
			t.Errorf("%s: three-day-old memory decay %v, want 1", m, n.Decay)
		}
		if math.Abs(o.Decay-wantOld) > 1e-6 {
			t.Errorf("%s: two-year-old memory decay %v, want %v", m, o.Decay, wantOld)
		}
		if math.Abs(o.Score-n.Score*o.Decay) > 1e-5 {
			t.Errorf("%s: old score %v, want new score %v × decay %v", m, o.Score, n.Score, o.Decay)
		}
	}
	// Without decay they tie.
	v0 := newVault(t, files, noDecay)
	for _, m := range allModes {
		p := v0.search(engine.Query{Text: "wombats", Mode: m})
		if len(p.Results) < 2 || p.Results[0].Score != p.Results[1].Score || p.Results[0].Decay != 1 || p.Results[1].Decay != 1 {
			t.Errorf("%s with Strength 0: %+v, want two equal scores with decay 1", m, p.Results)
		}
	}
	// Full strength: a pure multiplication by the weight.
	v1 := newVault(t, files, func(c *engine.Config) { c.Decay = decay.Default(); c.Decay.Strength = 1 })
	p := v1.search(engine.Query{Text: "wombats", Mode: engine.FullText})
	if r, ok := result(p, "a-old.md"); !ok || math.Abs(r.Decay-dc.Weight("a-old.md", oldCreated, now0)) > 1e-6 {
		t.Errorf("Strength 1: old decay %v, want the weight %v", r.Decay, dc.Weight("a-old.md", oldCreated, now0))
	}
}

func TestCJK(t *testing.T) {
	v := newVault(t, map[string]string{
		"zh.md":  memo("会议记录", "2025-05-01", nil, "会议记录：数据库迁移计划。我们决定在下个月完成迁移，并在迁移前做好备份。"),
		"ja.md":  memo("検索について", "2025-05-01", nil, "検索インデックスの再構築について話し合った。"),
		"en.md":  memo("Database migration", "2025-05-01", nil, "The database migration plan for next month, with backups first."),
		"en2.md": memo("Search index", "2025-05-01", nil, "Rebuilding the search index."),
	})
	cases := []struct{ q, want string }{
		{"数据库迁移", "zh.md"},
		{"迁移", "zh.md"},
		{"数据库", "zh.md"},
		{"検索インデックス", "ja.md"},
		{"インデックス", "ja.md"},
		{"検索", "ja.md"},
	}
	for _, c := range cases {
		for _, m := range []engine.Mode{engine.FullText, engine.Hybrid} {
			p := v.search(engine.Query{Text: c.q, Mode: m})
			if len(p.Results) == 0 || p.Results[0].Path != c.want {
				t.Errorf("%s %q → %v, want %s first", m, c.q, paths(p), c.want)
				continue
			}
			r := p.Results[0]
			if r.MatchCount == 0 || len(r.Snippets) == 0 || !strings.Contains(r.Snippets[0], "**") {
				t.Errorf("%s %q: MatchCount %d snippets %q, want marked matches", m, c.q, r.MatchCount, r.Snippets)
			}
		}
	}
	// A CJK query must not match the other script.
	if got := v.find(engine.FullText, "数据库迁移"); slices.Contains(got, "ja.md") {
		t.Errorf("数据库迁移 → %v, includes the Japanese memory", got)
	}
}

func TestDiacriticsFold(t *testing.T) {
	v := newVault(t, map[string]string{
		"accent.md":    memo("Accent", "", nil, "We met at the café to record the décision."),
		"plain.md":     memo("Plain", "", nil, "The cafe decision was final."),
		"strasse.md":   memo("Strasse", "", nil, "The office moved to the Hauptstraße."),
		"mueller.md":   memo("Mueller", "", nil, "Frau Müller signed the contract."),
		"unrelated.md": memo("Unrelated", "", nil, "Nothing about coffee here."),
	})
	cases := []struct {
		q    string
		want []string
	}{
		{"cafe decision", []string{"accent.md", "plain.md"}},
		{"café décision", []string{"accent.md", "plain.md"}},
		{"CAFÉ", []string{"accent.md", "plain.md"}},
		{"hauptstrasse", []string{"strasse.md"}},
		{"Hauptstraße", []string{"strasse.md"}},
		{"muller", []string{"mueller.md"}},
		{"Müller", []string{"mueller.md"}},
	}
	for _, c := range cases {
		p := v.search(engine.Query{Text: c.q, Mode: engine.FullText})
		if got := sorted(paths(p)); !slices.Equal(got, c.want) {
			t.Errorf("%q → %v, want %v", c.q, got, c.want)
		}
	}
	p := v.search(engine.Query{Text: "cafe", Mode: engine.FullText})
	if r, ok := result(p, "accent.md"); !ok || len(r.Snippets) == 0 || !strings.Contains(r.Snippets[0], "**café**") {
		t.Errorf("cafe in accent.md: snippets %q, want **café** marked", r.Snippets)
	}
}

func TestStemmingAndSnippets(t *testing.T) {
	// Filler text without any form of "index".
	filler := func(n int) string {
		return strings.ReplaceAll(synthetic(uint64(n), 80), "index", "ledger")
	}
	long := "The indexes were rebuilt. " + filler(1) + " Two more indexes appeared. " + filler(2) +
		" Then the indexes shrank. " + filler(3) + " Finally the indexes were merged. " + filler(4)
	v := newVault(t, map[string]string{
		"long.md":  memo("Long", "", nil, long),
		"short.md": memo("Short", "", nil, "An index is indexed by indexing."),
		"none.md":  memo("None", "", nil, "Nothing relevant at all."),
	})
	for _, m := range []engine.Mode{engine.FullText, engine.Hybrid} {
		p := v.search(engine.Query{Text: "indexing", Mode: m})
		if got := sorted(paths(p)[:min(2, len(p.Results))]); !slices.Equal(got, []string{"long.md", "short.md"}) {
			t.Errorf("%s indexing → %v, want long.md and short.md on top", m, paths(p))
		}
		r, ok := result(p, "long.md")
		if !ok {
			continue
		}
		if r.MatchCount != 4 {
			t.Errorf("%s long.md MatchCount %d, want 4", m, r.MatchCount)
		}
		if len(r.Snippets) == 0 || len(r.Snippets) > 3 {
			t.Errorf("%s long.md: %d snippets, want 1–3", m, len(r.Snippets))
		}
		for _, s := range r.Snippets {
			if !strings.Contains(s, "**indexes**") {
				t.Errorf("%s snippet %q does not mark **indexes**", m, s)
			}
			if n := len([]rune(strings.ReplaceAll(s, "**", ""))); n > 400 {
				t.Errorf("%s snippet is %d characters: %q", m, n, s)
			}
			if strings.Contains(s, "\n") || strings.Contains(s, "  ") {
				t.Errorf("%s snippet has unfolded whitespace: %q", m, s)
			}
		}
		s, _ := result(p, "short.md")
		if s.MatchCount != 3 || len(s.Snippets) != 1 || s.Snippets[0] != "An **index** is **indexed** by **indexing**." {
			t.Errorf("%s short.md: MatchCount %d snippets %q, want all three forms marked", m, s.MatchCount, s.Snippets)
		}
	}
	// NoSnippets skips them.
	p := v.search(engine.Query{Text: "indexing", Mode: engine.FullText, NoSnippets: true})
	for _, r := range p.Results {
		if len(r.Snippets) != 0 || r.MatchCount == 0 {
			t.Errorf("NoSnippets: %s snippets %q MatchCount %d", r.Path, r.Snippets, r.MatchCount)
		}
	}
}

// A memory that matches only through its frontmatter title or tags is a
// text match like any other: its result must not say "0 matches".
func TestMatchCountOfTitleAndTagMatches(t *testing.T) {
	v := newVault(t, map[string]string{
		"title.md": memo("Kubernetes upgrade", "", nil, "We moved the cluster to the new version."),
		"tag.md":   memo("Cluster notes", "", []string{"terraform"}, "Infrastructure as code."),
		"body.md":  memo("Other", "", nil, "kubernetes and terraform are mentioned here"),
	})
	for _, q := range []string{"kubernetes", "terraform"} {
		p := v.search(engine.Query{Text: q, Mode: engine.FullText})
		if p.TotalCount != 2 {
			t.Fatalf("%s: %v, want two matches", q, paths(p))
		}
		for _, r := range p.Results {
			if r.TextScore > 0 && r.MatchCount == 0 {
				t.Errorf("%s: %s is a text match (TextScore %v) but MatchCount is 0", q, r.Path, r.TextScore)
			}
		}
	}
}

// Hybrid must surface a memory found only by meaning, below text matches.
func TestHybridCombinesBothLists(t *testing.T) {
	v := newVault(t, map[string]string{
		"text.md": memo("Felines", "2025-05-01", nil, "The kitten sleeps."),
		"sem.md":  memo("Pets", "2025-05-01", nil, "Cats and puppies and dogs, furry pets at home."),
		"far.md":  memo("Taxes", "2025-05-01", nil, "Quarterly tax filings and accounting."),
	}, noDecay)
	p := v.search(engine.Query{Text: "kitten", Mode: engine.Hybrid})
	got := paths(p)
	if len(got) < 2 || got[0] != "text.md" || !slices.Contains(got, "sem.md") {
		t.Fatalf("hybrid kitten → %v, want text.md first and sem.md present", got)
	}
	if p.TextResultCount != 1 || p.SemanticResultCount < 2 {
		t.Errorf("TextResultCount %d SemanticResultCount %d, want 1 and ≥2", p.TextResultCount, p.SemanticResultCount)
	}
	s, _ := result(p, "sem.md")
	if s.TextScore != 0 || s.SemanticScore <= 0 || s.MatchCount != 0 || len(s.Snippets) != 1 {
		t.Errorf("semantic-only sem.md: %+v, want TextScore 0, a semantic score, a lead snippet", s)
	}
	r := p.Results[0]
	rk := engine.DefaultRanking()
	want := (rk.TextWeight*r.TextScore + rk.VectorWeight*r.SemanticScore) / (rk.TextWeight + rk.VectorWeight) * r.Decay
	if math.Abs(r.Score-want) > 1e-5 {
		t.Errorf("weighted fusion: score %v, want (%v·%v + %v·%v)/%v·decay = %v", r.Score, rk.TextWeight, r.TextScore, rk.VectorWeight, r.SemanticScore, rk.TextWeight+rk.VectorWeight, want)
	}
}
