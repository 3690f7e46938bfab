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

// maxPage bounds Page so that Page × PageSize cannot overflow.
const maxPage = 1_000_000

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
	case q.Page < 0 || q.Page > maxPage:
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

// filters reports whether the scope excludes anything at all.
func (s scope) filters() bool {
	return s.folder != "" || len(s.tags) > 0 || !s.from.IsZero() || !s.to.IsZero()
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
	matched   int     // query terms matched
	chunk     int     // best chunk
	fused     float64 // before decay
	decay     float64
	score     float64
}

func (c *candidate) inText() bool { return c.text > 0 }
func (c *candidate) inSem() bool  { return c.semRank > 0 }

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
	page.Indexing = e.building()
	if e.lastSync.IsZero() && len(e.files) == 0 {
		if page.Indexing {
			return page, nil
		}
		return Page{}, ErrIndexNotReady
	}
	if err := e.damaged(); err != nil && q.Mode != Semantic && !page.Indexing {
		return Page{}, err
	}
	terms := e.ft.analyzeQuery(q.Text)
	if terms.empty() {
		return Page{}, fmt.Errorf("%q: %w", q.Text, ErrNoTerms)
	}
	sc := scope{folder: q.Folder, tags: q.Tags, from: q.From, to: q.To}
	filtered := sc.filters()
	// The vector scan runs beside BM25: on two cores Hybrid then costs about
	// what the slower of the two does.
	type scan struct {
		b   best
		err error
	}
	scanned := make(chan scan, 1)
	waiting := false
	defer func() {
		if waiting {
			<-scanned // never leave the scan reading under a released lock
		}
	}()
	if q.Mode != FullText {
		waiting = true
		go func() {
			qv, err := e.emb.Embed(ctx, []string{q.Text})
			if err != nil {
				scanned <- scan{err: fmt.Errorf("embed query: %w", err)}
				return
			}
			if isZero(qv[0]) && q.Mode == Semantic {
				scanned <- scan{err: fmt.Errorf("%q: none of its words is known to the embedder %s: %w", q.Text, e.emb.Name(), ErrNoTerms)}
				return
			}
			var keep func(*record) bool
			if filtered {
				keep = func(r *record) bool { return sc.match(r) }
			}
			scanned <- scan{b: e.vec.query(qv[0], keep)}
		}()
	}
	var cands []candidate
	if q.Mode != Semantic {
		hits, err := e.ft.scoreText(ctx, terms, e.rank.bm25(), e.totals)
		if err != nil {
			e.noteDamage(err)
			return Page{}, err
		}
		cands = make([]candidate, 0, len(hits))
		var best float64
		for _, h := range hits {
			r := e.files[h.path]
			if r == nil || (filtered && !sc.match(r)) {
				continue
			}
			cands = append(cands, candidate{rec: r, text: h.score, matched: h.matched, textRank: 1})
			best = math.Max(best, h.score)
		}
		for i := range cands {
			cands[i].text /= best
		}
	}
	if q.Mode != FullText {
		sr := <-scanned
		waiting = false
		if sr.err != nil {
			return Page{}, sr.err
		}
		b := sr.b
		// Text matches get their exact similarity, however low.
		taken := make([]bool, len(b.sim))
		for i := range cands {
			c := &cands[i]
			s, ok := e.vec.slotOf[c.rec.Path]
			if !ok {
				continue
			}
			taken[s] = true
			if sim := float64(b.sim[s]); sim > 0 {
				c.sem, c.chunk, c.semRank = math.Min(sim, 1), int(b.chunk[s]), 1
			}
		}
		// Other memories join as semantic matches above the floor. (The
		// scope was applied inside the scan: out-of-scope slots are -2.)
		for slot, sim := range b.sim {
			if float64(sim) < e.rank.SemanticFloor || taken[slot] {
				continue
			}
			r := e.vec.recs[slot]
			if r == nil {
				continue
			}
			cands = append(cands, candidate{rec: r, sem: math.Min(float64(sim), 1), chunk: int(b.chunk[slot]), semRank: 1})
		}
	}
	f := newFuser(e.cfg.Fusion, e.rank)
	if f.method == RRF && q.Mode == Hybrid {
		rankBy(cands, func(c *candidate) float64 { return c.text }, func(c *candidate, r int) { c.textRank = r }, func(c *candidate) int { return c.textRank })
		rankBy(cands, func(c *candidate) float64 { return c.sem }, func(c *candidate, r int) { c.semRank = r }, func(c *candidate) int { return c.semRank })
	}
	// Fuse, then apply decay. The decay factor lies in [1−s, 1], so a
	// memory whose undecayed score is below the page's worst certain score
	// cannot reach the page: only the others need their factor computed.
	floor := 1 - e.cfg.Decay.Strength
	lows := make([]float64, 0, len(cands))
	for i := range cands {
		c := &cands[i]
		switch q.Mode {
		case FullText:
			c.fused = c.text
		case Semantic:
			c.fused = c.sem
		default:
			c.fused = f.fuse(c.text, c.sem, c.textRank, c.semRank)
		}
		lows = append(lows, c.fused*floor)
	}
	need := q.Page * q.PageSize
	cut := math.Inf(-1) // the need-th best lower bound: the page's worst certain score
	if need < len(lows) {
		cut = kthLargest(lows, need)
	}
	cut = math.Max(cut, q.MinScore)
	if q.Sort == ByRecency {
		cut = math.Inf(-1) // recency order needs every match scored
	}
	exact := cands[:0:0]
	for i := range cands {
		c := &cands[i]
		if c.fused <= 0 {
			continue
		}
		if c.fused >= cut || q.MinScore > 0 || q.Sort == ByRecency {
			c.decay = e.cfg.Decay.Factor(c.rec.Path, decay.Reference(e.reads[c.rec.Path], c.rec.Created, c.rec.mtime()), q.Now)
			c.score = c.fused * c.decay
			if c.score < q.MinScore {
				continue
			}
		} else {
			c.score = -1 // scored low enough that only TotalCount needs it
		}
		page.TotalCount++
		if c.inText() {
			page.TextResultCount++
		}
		if c.inSem() {
			page.SemanticResultCount++
		}
		if c.score >= 0 {
			exact = append(exact, *c)
		}
	}
	list := make([]*candidate, len(exact))
	for i := range exact {
		list[i] = &exact[i]
	}
	sortCandidates(list, q.Sort)
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

// kthLargest returns the k-th largest value of xs (1-based); xs is reordered.
func kthLargest(xs []float64, k int) float64 {
	lo, hi, want := 0, len(xs)-1, k-1
	for lo < hi {
		p := xs[(lo+hi)/2]
		i, j := lo, hi
		for i <= j {
			for xs[i] > p {
				i++
			}
			for xs[j] < p {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		switch {
		case want <= j:
			hi = j
		case want >= i:
			lo = i
		default:
			return xs[want]
		}
	}
	return xs[want]
}

// rankBy hands out 1-based ranks by key, best first (ties by path), to the
// candidates whose key is positive; the others get rank 0.
func rankBy(cs []candidate, key func(*candidate) float64, set func(*candidate, int), rankOf func(*candidate) int) {
	var ps []*candidate
	for i := range cs {
		set(&cs[i], 0)
		if key(&cs[i]) > 0 {
			ps = append(ps, &cs[i])
		}
	}
	sort.Slice(ps, func(i, j int) bool { return key(ps[i]) > key(ps[j]) })
	// Equal keys share a rank (1, 2, 2, 4), so fusion cannot turn a tie
	// into an order; sortCandidates breaks ties newer-first.
	for i, c := range ps {
		r := i + 1
		if i > 0 && key(c) == key(ps[i-1]) {
			r = rankOf(ps[i-1])
		}
		set(c, r)
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
