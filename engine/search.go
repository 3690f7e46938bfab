package engine

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"mnemo/decay"
)

// Validate checks a query and fills in its defaults. Search calls it; it is
// exported so front ends can reject a bad request before opening an index.
func (q Query) Validate() (Query, error) {
	q.Text = strings.TrimSpace(q.Text)
	if q.Text == "" {
		return q, ErrEmptyQuery
	}
	switch m := Mode(strings.ToLower(strings.TrimSpace(string(q.Mode)))); m {
	case "":
		q.Mode = Hybrid
	case Hybrid, Semantic, FullText:
		q.Mode = m
	case "full-text", "full_text", "text":
		q.Mode = FullText
	default:
		return q, fmt.Errorf("%q: %w", q.Mode, ErrBadMode)
	}
	switch {
	case q.Page == 0:
		q.Page = 1
	case q.Page < 0:
		return q, fmt.Errorf("page %d: %w", q.Page, ErrBadPage)
	}
	switch {
	case q.PageSize == 0:
		q.PageSize = 10
	case q.PageSize < 0 || q.PageSize > 200:
		return q, fmt.Errorf("pageSize %d: %w", q.PageSize, ErrBadPageSize)
	}
	f, err := cleanRel(q.Folder)
	if err != nil {
		return q, fmt.Errorf("folder: %w", err)
	}
	q.Folder = f
	var tags []string
	for _, t := range q.Tags {
		t = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(t), "#"))
		if t != "" {
			tags = append(tags, t)
		}
	}
	q.Tags = tags
	if !q.From.IsZero() && !q.To.IsZero() && q.From.After(q.To) {
		return q, fmt.Errorf("from %s, to %s: %w", q.From.Format(time.RFC3339), q.To.Format(time.RFC3339), ErrBadRange)
	}
	if q.MinScore < 0 || q.MinScore > 1 || math.IsNaN(q.MinScore) {
		return q, fmt.Errorf("minScore %v: %w", q.MinScore, ErrBadMinScore)
	}
	switch s := Sort(strings.ToLower(strings.TrimSpace(string(q.Sort)))); s {
	case "":
		q.Sort = ByRelevance
	case ByRelevance, ByRecency:
		q.Sort = s
	default:
		return q, fmt.Errorf("%q: %w", q.Sort, ErrBadSort)
	}
	if q.Now.IsZero() {
		q.Now = time.Now()
	}
	return q, nil
}

// scope is the one place that decides whether a memory is inside a query's
// filters. The indexes apply the same filters early where they can (folder
// and tags inside the vector scan); this check is the authority.
type scope struct {
	folder   string
	tags     []string
	from, to time.Time
}

func (s scope) match(r *record) bool {
	if !inFolder(r.Path, s.folder) {
		return false
	}
	for _, t := range s.tags {
		found := false
		for _, rt := range r.Tags {
			if rt == t {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	d := r.dated()
	if !s.from.IsZero() && d.Before(s.from) {
		return false
	}
	if !s.to.IsZero() && d.After(s.to) {
		return false
	}
	return true
}

// candidate is one memory that matched, with its evidence.
type candidate struct {
	rec       *record
	text, sem float64 // normalised 0–1
	textRank  int     // 1-based, 0 if not a text match
	semRank   int
	matched   int // query terms matched
	chunk     int // best chunk
	decay     float64
	score     float64
}

// Search answers q. Scores are in 0–1 in every mode: FullText is BM25
// divided by the best BM25 in scope, Semantic is the best chunk's cosine
// similarity (clipped at 0), Hybrid fuses the two (fusion.go); all are then
// multiplied by the recency-decay weight. Searching never changes recency.
func (e *Engine) Search(ctx context.Context, q Query) (Page, error) {
	q, err := q.Validate()
	if err != nil {
		return Page{}, err
	}
	if q.Folder != "" {
		if err := resolveInside(e.root, q.Folder); err != nil {
			return Page{}, fmt.Errorf("folder: %w", err)
		}
	}
	page := Page{Query: q.Text, Mode: q.Mode, Page: q.Page, PageSize: q.PageSize, Results: []Result{}}
	e.mu.RLock()
	defer e.mu.RUnlock()
	page.Indexing = e.indexing.Load() && (e.lastSync.IsZero() || e.needFull != "")
	if e.lastSync.IsZero() && len(e.files) == 0 {
		if page.Indexing {
			return page, nil
		}
		return Page{}, ErrIndexNotReady
	}
	terms := e.ft.analyzeQuery(q.Text)
	if terms.empty() {
		return Page{}, fmt.Errorf("%q: %w", q.Text, ErrNoTerms)
	}
	sc := scope{folder: q.Folder, tags: q.Tags, from: q.From, to: q.To}
	cands := map[string]*candidate{}
	get := func(p string) *candidate {
		c := cands[p]
		if c == nil {
			r := e.files[p]
			if r == nil || !sc.match(r) {
				return nil
			}
			c = &candidate{rec: r}
			cands[p] = c
		}
		return c
	}
	if q.Mode != Semantic {
		hits, err := e.ft.scoreText(ctx, terms, e.bm25, e.totals)
		if err != nil {
			return Page{}, err
		}
		var best float64
		for p, h := range hits {
			if c := get(p); c != nil {
				c.text, c.matched = h.score, h.matched
				best = math.Max(best, h.score)
			}
		}
		var ranked []*candidate
		for _, c := range cands {
			if best > 0 {
				c.text /= best
			}
			ranked = append(ranked, c)
		}
		rank(ranked, func(c *candidate) float64 { return c.text }, func(c *candidate, r int) { c.textRank = r })
	}
	if q.Mode != FullText {
		qv, err := e.emb.Embed(ctx, []string{q.Text})
		if err != nil {
			return Page{}, fmt.Errorf("embed query: %w", err)
		}
		if isZero(qv[0]) && q.Mode == Semantic {
			return Page{}, fmt.Errorf("%q: none of its words is known to the embedder %s: %w", q.Text, e.emb.Name(), ErrNoTerms)
		}
		hits, err := e.vec.query(ctx, qv[0], sc.folder, sc.tags)
		if err != nil {
			return Page{}, err
		}
		var ranked []*candidate
		for p, h := range hits {
			if h.sim <= 0 {
				continue
			}
			if c := get(p); c != nil {
				c.sem, c.chunk = math.Min(h.sim, 1), h.chunk
				ranked = append(ranked, c)
			}
		}
		rank(ranked, func(c *candidate) float64 { return c.sem }, func(c *candidate, r int) { c.semRank = r })
	}
	f := newFuser(e.cfg)
	list := make([]*candidate, 0, len(cands))
	for p, c := range cands {
		var s float64
		switch q.Mode {
		case FullText:
			s = c.text
		case Semantic:
			s = c.sem
		default:
			s = f.fuse(c.text, c.sem, c.textRank, c.semRank)
		}
		c.decay = e.cfg.Decay.Factor(p, decay.Reference(e.reads[p], c.rec.Created, c.rec.mtime()), q.Now)
		c.score = s * c.decay
		if c.score <= 0 || c.score < q.MinScore {
			continue
		}
		list = append(list, c)
		if c.textRank > 0 {
			page.TextResultCount++
		}
		if c.semRank > 0 {
			page.SemanticResultCount++
		}
	}
	sortCandidates(list, q.Sort)
	page.TotalCount = len(list)
	lo := (q.Page - 1) * q.PageSize
	if lo >= len(list) {
		return page, nil
	}
	for _, c := range list[lo:min(lo+q.PageSize, len(list))] {
		r := c.rec
		res := Result{
			URI: URI(r.Path), Path: r.Path, Title: r.Title,
			Score: round(c.score), TextScore: round(c.text), SemanticScore: round(c.sem), Decay: round(c.decay),
			Created: r.Created, Modified: r.Modified, Tags: nonNil(r.Tags),
		}
		if res.Modified.IsZero() {
			res.Modified = r.mtime()
		}
		if q.NoSnippets {
			res.Snippets, res.MatchCount = []string{}, c.matched
		} else {
			res.Snippets, res.MatchCount = e.snippets(r.Path, terms, c.chunk, c.semRank > 0)
		}
		page.Results = append(page.Results, res)
	}
	return page, nil
}

// rank sorts by key, best first, and hands out 1-based ranks.
func rank(cs []*candidate, key func(*candidate) float64, set func(*candidate, int)) {
	sort.Slice(cs, func(i, j int) bool {
		if a, b := key(cs[i]), key(cs[j]); a != b {
			return a > b
		}
		return cs[i].rec.Path < cs[j].rec.Path
	})
	for i, c := range cs {
		if key(c) > 0 {
			set(c, i+1)
		}
	}
}

// sortCandidates orders a result list: by score (ties: newer first, then
// path), or by recency (most recently updated first, ties by score).
func sortCandidates(cs []*candidate, by Sort) {
	sort.Slice(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if by == ByRecency {
			if ua, ub := a.rec.updated(), b.rec.updated(); !ua.Equal(ub) {
				return ua.After(ub)
			}
		}
		if a.score != b.score {
			return a.score > b.score
		}
		if da, db := a.rec.dated(), b.rec.dated(); !da.Equal(db) {
			return da.After(db)
		}
		return a.rec.Path < b.rec.Path
	})
}

func round(x float64) float64 { return math.Round(x*1e6) / 1e6 }

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
