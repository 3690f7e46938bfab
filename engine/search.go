package engine

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"mnemo/decay"
	"mnemo/engine/admit"
	"mnemo/engine/fulltext"
	"mnemo/engine/rank"
	"mnemo/engine/vault"
	"mnemo/engine/vectors"
)

// Bounds of a Query, which front ends' schemas state (see rank.MaxPage).
const (
	MaxPage     = rank.MaxPage
	MaxPageSize = rank.MaxPageSize
)

// Validate checks a query and fills in its defaults. Search calls it; it is
// exported so front ends can reject a bad request before opening an index.
func (q Query) Validate() (Query, error) {
	q.Text = strings.TrimSpace(q.Text)
	if q.Text == "" {
		return q, ErrEmptyQuery
	}
	var err error
	if q.Mode, err = rank.ParseMode(q.Mode); err != nil {
		return q, err
	}
	if q.Page, err = rank.Count("page", q.Page, 1, MaxPage, ErrBadPage); err != nil {
		return q, err
	}
	if q.PageSize, err = rank.Count("pageSize", q.PageSize, 10, MaxPageSize, ErrBadPageSize); err != nil {
		return q, err
	}
	f, err := vault.CleanRel(q.Folder)
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
	if err := rank.CheckRange(q.From, q.To); err != nil {
		return q, err
	}
	if q.MinScore < 0 || q.MinScore > 1 || math.IsNaN(q.MinScore) {
		return q, fmt.Errorf("minScore %v: %w", q.MinScore, ErrBadMinScore)
	}
	if q.Sort, err = rank.ParseSort(q.Sort); err != nil {
		return q, err
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
	if !vault.InFolder(r.Path, s.folder) {
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
type candidate = rank.Candidate[*record]

// Key, Dated and Updated are what ranking orders a memory by (rank.Item).
func (r *record) Key() string        { return r.Path }
func (r *record) Dated() time.Time   { return r.dated() }
func (r *record) Updated() time.Time { return r.updated() }

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
//
// A search first waits its turn at Config.Admit, the process's gate, so
// that every front end's searches share one bound.
func (e *Engine) Search(ctx context.Context, q Query) (Page, error) {
	return admit.Do(ctx, e.cfg.Admit, func() (Page, error) { return e.search(ctx, q) })
}

// search is Search past the gate. The engine's own searches (the
// suggestions of an unknown concept) call it: they are part of a request
// that was not a search, and do not queue behind searches.
func (e *Engine) search(ctx context.Context, q Query) (Page, error) {
	if q.Now.IsZero() {
		q.Now = e.now()
	}
	q, err := q.Validate()
	if err != nil {
		return Page{}, err
	}
	if q.Folder != "" {
		if err := vault.ResolveInside(e.root, q.Folder); err != nil {
			return Page{}, fmt.Errorf("folder: %w", err)
		}
		q.Folder = e.vault.Spelled(q.Folder)
	}
	page := Page{Query: q.Text, Mode: q.Mode, Page: q.Page, PageSize: q.PageSize, Results: []Result{}}
	err = rank.EmbedOutsideLock(ctx, &e.mu, q.Mode,
		func() (fulltext.Terms, bool, error) { return e.searchableLocked(q, &page) },
		func(ctx context.Context) ([]float32, error) { return vectors.EmbedQuery(ctx, e.emb, q.Text, q.Mode) },
		func(terms fulltext.Terms, qv []float32, embedErr error) error {
			return e.searchLocked(ctx, q, terms, qv, embedErr, &page)
		})
	if err != nil {
		return Page{}, err
	}
	return page, nil
}

// searchLocked is the search's stages, run under the read lock with the
// query's terms, its vector (nil in FullText mode or when the embedder
// knows none of its words) and the embedder's error, which it reports
// after any error of the full-text index. It fills page.
func (e *Engine) searchLocked(ctx context.Context, q Query, terms fulltext.Terms, qv []float32, embedErr error, page *Page) error {
	sc := scope{folder: q.Folder, tags: q.Tags, from: q.From, to: q.To}
	plan := e.plan(q)

	// The vector store is asked only when a memory found by meaning
	// alone could still reach the page: its fused score is at most what a
	// similarity of 1 fuses to, so when the text matches already fill the
	// page above that, no vector query runs at all; otherwise for as many
	// chunks as the page needs, and again for more while a memory it did
	// not return could still count.
	var text []candidate
	var err error
	if q.Mode != Semantic {
		if text, err = e.textCandidates(ctx, terms, sc); err != nil {
			e.noteDamage(err)
			return err
		}
	}
	if embedErr != nil {
		return embedErr
	}
	found := vectors.Found{Bound: 1} // nothing asked yet: anything may be similar
	if n := e.vec.Len(); qv != nil && n > 0 && n <= e.countAll {
		// A small store answers a complete query in about a millisecond:
		// then every count is exact, whatever the page.
		if found, err = e.semanticCandidates(ctx, qv, sc, n); err != nil {
			return err
		}
	}
	var cands []candidate
	for n := plan.chunks; ; n *= 4 {
		cands = e.fuse(plan, sc, text, qv, found)
		if qv == nil || !rank.WantsMore(plan.Plan, cands, found.Complete, float64(found.Bound)) {
			break
		}
		if found, err = e.semanticCandidates(ctx, qv, sc, n); err != nil {
			return err
		}
	}
	list := e.decayAndCut(plan, cands, page)
	page.Results = e.page(q, terms, list)
	page.Hint = e.hint(q, *page)
	return nil
}

// searchableLocked checks that the index can answer q and analyses its
// text. done says the answer is page as it stands (an index being built
// that holds nothing yet); err, that q cannot be answered. The caller
// holds e.mu.
func (e *Engine) searchableLocked(q Query, page *Page) (fulltext.Terms, bool, error) {
	page.Indexing = e.building()
	done, err := rank.Ready(q.Mode, page.Indexing, e.lastSync.IsZero() && len(e.files) == 0, e.damaged(), ErrIndexNotReady)
	if err != nil || done {
		return fulltext.Terms{}, done, err
	}
	terms, err := e.ft.QueryTerms(q.Text)
	return terms, false, err
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

// searchPlan is what the stages after the candidates need to know of a
// query: the ranking layer's plan, and what only the memory corpus uses.
type searchPlan struct {
	rank.Plan
	now    time.Time // the clock for decay
	chunks int       // how many chunks to ask the vector store for first
}

func (e *Engine) plan(q Query) searchPlan {
	need := q.Page * q.PageSize
	return searchPlan{
		Plan: rank.Plan{
			Mode: q.Mode, Fuser: rank.NewFuser(e.cfg.Fusion, e.rank), Floor: e.rank.SemanticFloor,
			Strength: e.cfg.Decay.Strength, Need: need, MinScore: q.MinScore, Sort: q.Sort,
		},
		now: q.Now,
		// A memory has 1–2 chunks on most vaults: four chunks per wanted
		// result usually settles the page in one vector query.
		chunks: max(64, 4*need),
	}
}

// textCandidates is stage one: every memory in scope that matches a query
// term, with its BM25 score divided by the best one in scope.
func (e *Engine) textCandidates(ctx context.Context, terms fulltext.Terms, sc scope) ([]candidate, error) {
	hits, err := e.ft.Score(ctx, terms, fulltext.NewBM25(e.rank), e.totals)
	if err != nil {
		return nil, err
	}
	return rank.TextCandidates(hits, e.lookup(sc)), nil
}

// lookup finds a memory by path for the ranking stages: false when it
// is gone or outside sc.
func (e *Engine) lookup(sc scope) func(path string) (*record, bool) {
	filtered := sc.filters()
	return func(path string) (*record, bool) {
		r := e.files[path]
		return r, r != nil && (!filtered || sc.match(r))
	}
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
	var nearest func(string) (vectors.Hit, bool)
	if qv != nil {
		nearest = func(path string) (vectors.Hit, bool) { return e.vec.Nearest(qv, path) }
	}
	cands := rank.Join(text, nearest, found.Hits, p.Floor, e.lookup(sc))
	rank.FuseAll(p.Fuser, cands, p.Mode)
	return cands
}

// decayAndCut is stage four: candidates that can reach the page get their
// recency factor and final score, the rest are only counted; results below
// MinScore are dropped. It fills the page's counts and returns the scored
// candidates.
func (e *Engine) decayAndCut(p searchPlan, cands []candidate, page *Page) []*candidate {
	list, n := rank.DecayAndCut(p.Plan, cands, func(r *record) float64 {
		return e.cfg.Decay.Factor(r.Path, decay.Reference(e.reads[r.Path], r.Created, r.mtime()), p.now)
	})
	page.TotalCount += n.Total
	page.TextResultCount += n.Text
	page.SemanticResultCount += n.Semantic
	return list
}

// page is stage five: the scored candidates in order, the requested page of
// them, with snippets unless the query asked for none.
func (e *Engine) page(q Query, terms fulltext.Terms, list []*candidate) []Result {
	rank.SortCandidates(list, q.Sort)
	lo, hi := rank.PageBounds(q.Page, q.PageSize, len(list))
	out := []Result{}
	for _, c := range list[lo:hi] {
		r := c.Rec
		res := Result{
			URI: URI(r.Path), Path: r.Path, Title: r.Title,
			Score: rank.Round(c.Score), TextScore: rank.Round(c.Text), SemanticScore: rank.Round(c.Sem), Decay: rank.Round(c.Decay),
			Created: r.Created, Modified: r.Modified, Tags: nonNil(r.Tags),
		}
		if res.Modified.IsZero() {
			res.Modified = r.mtime()
		}
		if q.NoSnippets {
			res.Snippets, res.MatchCount = []string{}, c.Matched
		} else {
			res.Snippets, res.MatchCount = e.snippets(r, terms, c.Chunk, c.SemRank > 0)
		}
		out = append(out, res)
	}
	return out
}

// snippets cuts a memory's snippets from its stored excerpt index (see
// fulltext.Index.MemorySnippets), and counts its matches.
func (e *Engine) snippets(r *record, q fulltext.Terms, chunk int, semantic bool) ([]string, int) {
	x, err := e.st.excerpt(r.Path, q)
	if err != nil {
		return []string{}, 0 // an index without excerpts is rebuilt at open (schema 3)
	}
	return e.ft.MemorySnippets(x, r.Title, r.Tags, q, chunk, semantic)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
