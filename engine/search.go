package engine

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"mnemo/decay"
	"mnemo/engine/vectors"
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
	var err error
	if q.Page, err = countOr("page", q.Page, 1, maxPage, ErrBadPage); err != nil {
		return q, err
	}
	if q.PageSize, err = countOr("pageSize", q.PageSize, 10, 200, ErrBadPageSize); err != nil {
		return q, err
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

// countOr checks a count argument: 0 means def, 1..max is taken as is, and
// anything else is an error naming the argument and wrapping bad.
func countOr(name string, v, def, max int, bad error) (int, error) {
	switch {
	case v == 0:
		return def, nil
	case v < 0 || v > max:
		return v, fmt.Errorf("%s %d: %w", name, v, bad)
	}
	return v, nil
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
//
// It runs in named stages, each its own function: text candidates (BM25)
// and semantic candidates (the vector store), fused, then decayed and cut,
// then paged. The vector store is asked only for as many chunks as the
// page needs (none when the text matches settle the page): if a memory it
// did not return could still reach the page, it is asked again for more.
func (e *Engine) Search(ctx context.Context, q Query) (Page, error) {
	if q.Now.IsZero() {
		q.Now = e.now()
	}
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
	// The query is embedded before the read lock is taken: a remote
	// embedder takes a network round trip, and a reader holding the lock
	// that long stalls every write (and, behind a waiting write, every
	// read). A query the index cannot answer anyway is not embedded.
	if done, err := e.searchable(q, &page); err != nil {
		return Page{}, err
	} else if done {
		return page, nil
	}
	var qv []float32
	var embedErr error
	if q.Mode != FullText {
		qv, embedErr = e.embedQuery(ctx, q)
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	terms, done, err := e.searchableLocked(q, &page)
	if err != nil {
		return Page{}, err
	} else if done {
		return page, nil
	}
	sc := scope{folder: q.Folder, tags: q.Tags, from: q.From, to: q.To}
	plan := e.plan(q)

	// The vector store is asked only when a memory found by meaning
	// alone could still reach the page: its fused score is at most what a
	// similarity of 1 fuses to, so when the text matches already fill the
	// page above that, no vector query runs at all; otherwise for as many
	// chunks as the page needs, and again for more while a memory it did
	// not return could still count.
	var text []candidate
	if q.Mode != Semantic {
		text, err = e.textCandidates(ctx, terms, sc)
	}
	if err != nil {
		e.noteDamage(err)
		return Page{}, err
	}
	if embedErr != nil {
		return Page{}, embedErr
	}
	found := vectors.Found{Bound: 1} // nothing asked yet: anything may be similar
	if n := e.vec.Len(); qv != nil && n > 0 && n <= e.countAll {
		// A small store answers a complete query in about a millisecond:
		// then every count is exact, whatever the page.
		if found, err = e.semanticCandidates(ctx, qv, sc, n); err != nil {
			return Page{}, err
		}
	}
	var cands []candidate
	for n := plan.chunks; ; n *= 4 {
		cands = e.fuse(plan, sc, text, qv, found)
		if qv == nil || !plan.wantsMore(cands, found) {
			break
		}
		if found, err = e.semanticCandidates(ctx, qv, sc, n); err != nil {
			return Page{}, err
		}
	}
	list := e.decayAndCut(plan, cands, &page)
	page.Results = e.page(q, terms, list)
	page.Hint = e.hint(q, page)
	return page, nil
}

// searchable takes the read lock to run searchableLocked's checks.
func (e *Engine) searchable(q Query, page *Page) (done bool, err error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	_, done, err = e.searchableLocked(q, page)
	return done, err
}

// searchableLocked checks that the index can answer q and analyses its
// text. done says the answer is page as it stands (an index being built
// that holds nothing yet); err, that q cannot be answered. The caller
// holds e.mu.
func (e *Engine) searchableLocked(q Query, page *Page) (terms queryTerms, done bool, err error) {
	page.Indexing = e.building()
	if e.lastSync.IsZero() && len(e.files) == 0 {
		if page.Indexing {
			return terms, true, nil
		}
		return terms, false, ErrIndexNotReady
	}
	if err := e.damaged(); err != nil && q.Mode != Semantic && !page.Indexing {
		return terms, false, err
	}
	terms = e.ft.analyzeQuery(q.Text)
	if terms.empty() {
		return terms, false, fmt.Errorf("%q: %w", q.Text, ErrNoTerms)
	}
	return terms, false, nil
}

// hint explains an empty page whose query the embedder knows no word of:
// its meaning could not be searched for, only its spelling.
func (e *Engine) hint(q Query, p Page) string {
	k, ok := e.emb.(interface{ Knows(string) bool })
	if p.TotalCount > 0 || q.Mode == FullText || !ok || k.Knows(q.Text) {
		return ""
	}
	return fmt.Sprintf("none of the query's words is known to the embedder %s, so its meaning could not be searched for; try other words, or --mode fulltext for exact words", e.emb.Name())
}

// countAllChunks is the store size up to which a search asks the vector
// store for every chunk, so that TotalCount and SemanticResultCount count
// every memory found by meaning. chromem-go answers such a query over 5,000
// chunks in about a millisecond (engine/vectors BenchmarkQuery); above it,
// memories found by meaning alone are counted as far as the requested page
// needed them.
const countAllChunks = 5000

// searchPlan is what the stages after the candidates need to know of a query.
type searchPlan struct {
	mode     Mode
	fuser    fuser
	floor    float64 // cosine a memory needs to join on meaning alone
	strength float64 // decay strength: the factor lies in [1−strength, 1]
	need     int     // results up to the end of the requested page
	minScore float64
	sort     Sort
	now      time.Time
	chunks   int // how many chunks to ask the vector store for first
}

func (e *Engine) plan(q Query) searchPlan {
	need := q.Page * q.PageSize
	return searchPlan{
		mode: q.Mode, fuser: newFuser(e.cfg.Fusion, e.rank), floor: e.rank.SemanticFloor,
		strength: e.cfg.Decay.Strength, need: need, minScore: q.MinScore, sort: q.Sort, now: q.Now,
		// A memory has 1–2 chunks on most vaults: four chunks per wanted
		// result usually settles the page in one vector query.
		chunks: max(64, 4*need),
	}
}

// embedQuery returns the query's unit vector, or nil when it has no
// meaning to search by (no word the embedder knows): Semantic mode then
// fails, Hybrid goes on with the words alone.
func (e *Engine) embedQuery(ctx context.Context, q Query) ([]float32, error) {
	qv, err := e.emb.Embed(ctx, []string{q.Text})
	if err != nil {
		return nil, fmt.Errorf("embed query: %w", err)
	}
	u := vectors.Normalize(qv[0])
	if u == nil && q.Mode == Semantic {
		return nil, fmt.Errorf("%q: none of its words is known to the embedder %s: %w", q.Text, e.emb.Name(), ErrNoTerms)
	}
	return u, nil
}

// textCandidates is stage one: every memory in scope that matches a query
// term, with its BM25 score divided by the best one in scope.
func (e *Engine) textCandidates(ctx context.Context, terms queryTerms, sc scope) ([]candidate, error) {
	hits, err := e.ft.scoreText(ctx, terms, e.rank.bm25(), e.totals)
	if err != nil {
		return nil, err
	}
	filtered := sc.filters()
	cands := make([]candidate, 0, len(hits))
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
	return cands, nil
}

// semanticCandidates is stage two: the memories with a chunk among the n
// chunks nearest qv. A folder or tag scope is a label filter inside the
// vector store; dates are checked when fusing.
func (e *Engine) semanticCandidates(ctx context.Context, qv []float32, sc scope, n int) (vectors.Found, error) {
	var labels []string
	if sc.folder != "" {
		labels = append(labels, folderLabel(sc.folder))
	}
	for _, t := range sc.tags {
		labels = append(labels, tagLabel(t))
	}
	return e.vec.Query(ctx, qv, n, labels)
}

// fuse is stage three: text matches get their semantic similarity however
// low (the nearest of their own stored chunks: a few dot products each,
// not a second scan), memories found by meaning alone join above the
// floor, and each candidate gets its fused score before decay.
func (e *Engine) fuse(p searchPlan, sc scope, text []candidate, qv []float32, found vectors.Found) []candidate {
	cands := make([]candidate, len(text), len(text)+len(found.Hits))
	copy(cands, text)
	if qv != nil {
		taken := make(map[string]bool, len(cands))
		for i := range cands {
			c := &cands[i]
			taken[c.rec.Path] = true
			if h, ok := e.vec.Nearest(qv, c.rec.Path); ok && h.Similarity > 0 {
				c.sem, c.chunk, c.semRank = math.Min(float64(h.Similarity), 1), h.Chunk, 1
			}
		}
		filtered := sc.filters()
		for _, h := range found.Hits {
			if float64(h.Similarity) < p.floor || taken[h.ID] {
				continue
			}
			r := e.files[h.ID]
			if r == nil || (filtered && !sc.match(r)) {
				continue
			}
			cands = append(cands, candidate{rec: r, sem: math.Min(float64(h.Similarity), 1), chunk: h.Chunk, semRank: 1})
		}
	}
	p.fuser.fuseAll(cands, p.mode)
	return cands
}

// cut is the undecayed score below which a candidate cannot reach the
// requested page nor pass MinScore. The decay factor lies in [1−s, 1], so
// the need-th best lower bound fused·(1−s) is a score the page is sure to
// reach; recency order needs every match scored.
func (p searchPlan) cut(cands []candidate) float64 {
	if p.sort == ByRecency {
		return math.Inf(-1)
	}
	lows := make([]float64, 0, len(cands))
	for i := range cands {
		if cands[i].fused > 0 {
			lows = append(lows, cands[i].fused*(1-p.strength))
		}
	}
	cut := math.Inf(-1)
	if p.need <= len(lows) {
		cut = kthLargest(lows, p.need)
	}
	return math.Max(cut, p.minScore)
}

// wantsMore reports whether a memory the vector store did not return could
// still count: its similarity is at most found.Bound, so its fused score is
// at most what that bound fuses to. With MinScore every match above it
// counts; by recency every match above the floor does.
func (p searchPlan) wantsMore(cands []candidate, found vectors.Found) bool {
	if found.Complete || float64(found.Bound) < p.floor {
		return false
	}
	seen := 0
	for i := range cands {
		if cands[i].semRank > 0 {
			seen++
		}
	}
	best := float64(found.Bound)
	if p.mode == Hybrid {
		best = p.fuser.fuse(0, best, 0, seen+1)
	}
	threshold := p.cut(cands)
	if p.minScore > 0 {
		threshold = p.minScore
	}
	return best >= threshold
}

// decayAndCut is stage four: candidates that can reach the page get their
// recency factor and final score, the rest are only counted; results below
// MinScore are dropped. It fills the page's counts and returns the scored
// candidates.
func (e *Engine) decayAndCut(p searchPlan, cands []candidate, page *Page) []*candidate {
	cut := p.cut(cands)
	var list []*candidate
	for i := range cands {
		c := &cands[i]
		if c.fused <= 0 {
			continue
		}
		if c.fused >= cut || p.minScore > 0 || p.sort == ByRecency {
			c.decay = e.cfg.Decay.Factor(c.rec.Path, decay.Reference(e.reads[c.rec.Path], c.rec.Created, c.rec.mtime()), p.now)
			c.score = c.fused * c.decay
			if c.score < p.minScore {
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
			list = append(list, c)
		}
	}
	return list
}

// page is stage five: the scored candidates in order, the requested page of
// them, with snippets unless the query asked for none.
func (e *Engine) page(q Query, terms queryTerms, list []*candidate) []Result {
	sortCandidates(list, q.Sort)
	lo := (q.Page - 1) * q.PageSize
	out := []Result{}
	if lo >= len(list) {
		return out
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
			res.Snippets, res.MatchCount = e.snippets(r, terms, c.chunk, c.semRank > 0)
		}
		out = append(out, res)
	}
	return out
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
