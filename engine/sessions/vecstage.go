package sessions

import (
	"cmp"
	"context"
	"math"
	"slices"

	"mnemo/engine/fulltext"
	"mnemo/engine/rank"
	"mnemo/engine/vectors"
)

// When the vector stage runs. A hybrid query over a large history used
// to compare the query with every stored message (1M codes at 1M
// messages: ~60 ms of CPU, most of a query's) and then use almost none of
// what it found: with the weighted sum, a message found by meaning alone
// fuses to at most VectorWeight/(TextWeight+VectorWeight), 0.2 with the
// sessions weights (DefaultRanking: 1 and 0.25), and a query that matches
// many messages by their words has ten sessions far above that. So
// Hybrid over a scope too large to compare message by message runs the
// text stage first and the vector scan only when the text candidates
// cannot decide the page alone (textDecides). When they can, a page's
// hits are its sessions' text candidates: what a scan adds inside them is
// a message that shares none of the query's words and fuses below every
// hit with a word of it (on the 1M history ~0.13, beside hits at
// 0.3–0.9), to a quarter of the page's sessions (1.9 hits a session with
// the scan, 1.6 without: docs/benchmarks.md). Semantic mode, a small
// scope (scopedMessages: every message in it compared, a complete
// answer), sort by recency and RRF fusion (whose ranks a late candidate
// shifts) keep the vector stage beside the text stage.

// semanticResult is what the vector stage found.
type semanticResult struct {
	found vectors.NumFound
	err   error
}

// startSemantic starts the vector stage beside the text stage when its
// answer is needed whatever the text stage finds, and returns where it
// will be; nil when it waits for the text candidates (deferVectors). A
// query without a vector (FullText, or the embedder failed) gets the
// embedder's error, if any, at once.
func (s *Corpus) startSemantic(ctx context.Context, q Query, sc sessionScope, qv []float32, embedErr error, n int) chan semanticResult {
	done := make(chan semanticResult, 1)
	if qv == nil || embedErr != nil {
		done <- semanticResult{err: embedErr}
		return done
	}
	var in []msgNum
	small := false
	if sc.q.Project != "" || sc.q.SessionID != "" || sc.q.Agent != "" {
		in, small = s.scopedMessages(sc)
	}
	if !small && vectorsWait(s, q) {
		return nil
	}
	go func() {
		var r semanticResult
		if small {
			r.found, r.err = s.compareEach(ctx, qv, in)
		} else {
			r.found, r.err = s.semanticCandidates(ctx, qv, sc, n)
		}
		done <- r
	}()
	return done
}

// vectorsWait is (*Corpus).deferVectors: a variable so that a test can
// hold the deferred stage to the scan beside the text stage.
var vectorsWait = (*Corpus).deferVectors

// deferVectors reports whether q's vector scan may wait for its text
// candidates: Hybrid, by relevance, fused by weighted sum (see above).
func (s *Corpus) deferVectors(q Query) bool {
	return q.Mode == rank.Hybrid && q.Sort == rank.ByRelevance && s.cfg.Fusion == rank.WeightedSum
}

// candidateGroups is stages two to four: the candidates' similarities,
// the messages found by meaning alone, fusion and grouping by session.
// semDone is the vector stage started beside the text stage, or nil when
// it waits for the text candidates (startSemantic); cut is the highest
// text score a match left out of text can have (textCut).
func (s *Corpus) candidateGroups(ctx context.Context, p sessionPlan, sc sessionScope, text []msgCandidate, cut float64, qv []float32, semDone chan semanticResult, wider widerText) ([]*sessionGroup, error) {
	var sem semanticResult
	if semDone != nil {
		sem = <-semDone
	} else {
		groups, err := s.textGroups(ctx, p, text, qv)
		if err != nil {
			return nil, err
		}
		if p.textDecides(groups, cut) {
			return groups, nil
		}
		if groups, ok, err := s.widerGroups(ctx, p, groups, qv, wider); err != nil || ok {
			return groups, err
		}
		sem.found, sem.err = s.semanticCandidates(ctx, qv, sc, p.chunks)
	}
	if sem.err != nil {
		return nil, sem.err
	}
	var groups []*sessionGroup
	for n := p.chunks; ; n *= 4 {
		cands, err := s.fuse(ctx, p, sc, text, qv, sem.found)
		if err != nil {
			return nil, err
		}
		groups = s.group(p, cands)
		if qv == nil || !p.wantsMore(groups, sem.found) {
			return groups, nil
		}
		if sem.found, err = s.semanticCandidates(ctx, qv, sc, n*4); err != nil {
			return nil, err
		}
	}
}

// textCut is the highest text score a match the text stage left out can
// have: none when it kept them all (dropped false), else at most the
// lowest kept one's (the stage keeps the best, and the re-rank only
// raises the scores it touches before dividing all by one best).
func textCut(text []msgCandidate, dropped bool) float64 {
	if !dropped || len(text) == 0 {
		return 0
	}
	cut := math.Inf(1)
	for i := range text {
		cut = math.Min(cut, text[i].Text)
	}
	return cut
}

// textDecides reports whether no message outside the text candidates can
// put its session on the page: such a message has a text score of at most
// cut and a similarity of at most 1, so it fuses to at most what those
// fuse to, and the limit-th session's best is above that. (A tie would be
// broken by date, so it must be strictly above.)
func (p sessionPlan) textDecides(groups []*sessionGroup, cut float64) bool {
	if len(groups) < p.limit {
		return false
	}
	return p.fuser.Fuse(cut, 1, 0, 0) < kthBest(groups, p.limit)
}

// compareEach is the vector stage over a small scope: each message in it
// compared with the query, a complete answer.
func (s *Corpus) compareEach(ctx context.Context, qv []float32, in []msgNum) (vectors.NumFound, error) {
	if err := s.vectorsLoaded(); err != nil {
		return vectors.NumFound{}, err
	}
	f := vectors.NumFound{Bound: -1, Complete: true}
	for _, m := range in {
		if err := ctx.Err(); err != nil {
			return f, err
		}
		if sim, ok := s.vec.Nearest(qv, m); ok {
			f.Hits = append(f.Hits, vectors.NumHit{Num: m, Similarity: sim})
		}
	}
	return f, nil
}

// textGroups is the text candidates fused and grouped without a vector
// scan (the deferred path of candidateGroups), each with its similarity
// looked up only where it can matter: the candidates in order of text
// score, a batch at a time, until the next one could not reach the
// limit-th session's best even with a similarity of 1; then the rest of
// the sessions at or above that best. A session off the page may keep a
// candidate without its similarity, so a best below its own, but below
// the page's last as well: the page, its hits and scores, totalSessions
// and textDecides are what every similarity gives. On the 1M history a
// query looked up 372 similarities on average, not 2,000 (docs/benchmarks.md).
func (s *Corpus) textGroups(ctx context.Context, p sessionPlan, text []msgCandidate, qv []float32) ([]*sessionGroup, error) {
	cands := slices.Clone(text)
	order := indexes(len(cands))
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(cands[b].Text, cands[a].Text) })
	best := map[uint32]float64{} // by session: the best fused score of its candidates looked up
	next := 0
	for batch := 64; next < len(order); batch *= 2 {
		end := min(next+batch, len(order))
		if err := s.lookUpSims(ctx, qv, cands, order[next:end]); err != nil {
			return nil, err
		}
		for _, i := range order[next:end] {
			c := &cands[i]
			if s.sessions[c.Rec.sid] == nil {
				continue // as group passes it over
			}
			best[c.Rec.sid] = math.Max(best[c.Rec.sid], p.fuser.Fuse(c.Text, c.Sem, 0, 0))
		}
		next = end
		if kth, ok := kthOf(best, p.limit); ok && next < len(order) && p.fuser.Fuse(cands[order[next]].Text, 1, 0, 0) < kth {
			if err := s.lookUpSims(ctx, qv, cands, onPage(cands, order[next:], best, kth)); err != nil {
				return nil, err
			}
			break
		}
	}
	p.score(cands)
	return s.group(p, cands), nil
}

// lookUpSims sets the similarity of cands[i] for each i of which.
func (s *Corpus) lookUpSims(ctx context.Context, qv []float32, cands []msgCandidate, which []int) error {
	if len(which) == 0 {
		return nil
	}
	part := make([]msgCandidate, len(which))
	for j, i := range which {
		part[j] = cands[i]
	}
	sims, err := s.textSims(ctx, qv, part)
	if err != nil {
		return err
	}
	for j, i := range which {
		setSim(&cands[i], sims[j])
	}
	return nil
}

// kthOf is the k-th highest of best's values; false when it has fewer.
func kthOf(best map[uint32]float64, k int) (float64, bool) {
	if len(best) < k {
		return 0, false
	}
	vs := make([]float64, 0, len(best))
	for _, v := range best {
		vs = append(vs, v)
	}
	return rank.KthLargest(vs, k), true
}

// onPage is those of rest whose session's best reaches kth: the page's
// sessions, whose every hit needs its score.
func onPage(cands []msgCandidate, rest []int, best map[uint32]float64, kth float64) []int {
	var out []int
	for _, i := range rest {
		if best[cands[i].Rec.sid] >= kth {
			out = append(out, i)
		}
	}
	return out
}

// widerText is the text stage run again keeping up to k matches, scored
// as the first run's re-ranked ones (Corpus.widerText), and its cut.
type widerText func(k int) ([]msgCandidate, float64, error)

// widerTextCandidates is how many matches the text stage keeps when its
// first 2,000 cannot decide the page but every message that could is a
// match (widerGroups).
const widerTextCandidates = 16 * maxTextCandidates

// widerGroups decides the page from more text candidates when the first
// run's cut is what kept them from deciding it. A message without a word
// of the query fuses to at most Fuse(0, 1); when the limit-th session's
// best is above that, only a match can change the page, and only one
// whose text score could reach that best with a similarity of 1. The
// text stage keeps widerTextCandidates matches instead; if those reach
// below every such score, they decide the page (its sessions and their
// hits: every match that could matter is among them), and the vector
// scan is not needed. On the 1M history it answered 17 of the 37
// queries that scanned (docs/benchmarks.md). ok is false when the scan
// is still needed.
func (s *Corpus) widerGroups(ctx context.Context, p sessionPlan, groups []*sessionGroup, qv []float32, wider widerText) ([]*sessionGroup, bool, error) {
	if wider == nil || len(groups) < p.limit {
		return nil, false, nil
	}
	kth := kthBest(groups, p.limit)
	if p.fuser.Fuse(0, 1, 0, 0) >= kth {
		return nil, false, nil // a message found by meaning alone could reach the page
	}
	wide, cut, err := wider(widerTextCandidates)
	if err != nil || (cut > 0 && p.fuser.Fuse(cut, 1, 0, 0) >= kth) {
		return nil, false, err
	}
	keep := wide[:0]
	for _, c := range wide {
		if p.fuser.Fuse(c.Text, 1, 0, 0) >= kth { // every first-run candidate: its text reaches the first cut
			keep = append(keep, c)
		}
	}
	groups, err = s.textGroups(ctx, p, keep, qv)
	return groups, err == nil, err
}

// widerText is the text stage again keeping k matches, each scored as
// the re-rank left the first run's (first, divided by div): a match the
// first run kept keeps its score, another is divided by div alone (the
// re-rank read only the first run's best, which are the same).
func (s *Corpus) widerText(ctx context.Context, terms fulltext.Terms, sc sessionScope, k int, first []msgCandidate, div float64) ([]msgCandidate, float64, error) {
	wide, all, err := textStage(s, ctx, terms, sc, k)
	if err != nil {
		return nil, 0, err
	}
	scored := make(map[msgNum]float64, len(first))
	for _, c := range first {
		scored[c.Rec.num] = c.Text
	}
	for i := range wide {
		if t, ok := scored[wide[i].Rec.num]; ok {
			wide[i].Text = t
		} else {
			wide[i].Text /= div
		}
	}
	return wide, textCut(wide, all != nil), nil
}
