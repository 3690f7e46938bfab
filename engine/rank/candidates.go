package rank

import (
	"math"
	"sort"
	"time"
)

// Item is what ranking needs of the thing a candidate stands for (a
// memory, a message): a key that tells two apart, and its dates for
// ordering.
type Item interface {
	// Key identifies the item; equal scores and dates are ordered by it.
	Key() string
	// Dated is the date the item is about (ties on score: newer first).
	Dated() time.Time
	// Updated is when the item last changed (ByRecency order).
	Updated() time.Time
}

// Candidate is one item that matched, with its evidence.
type Candidate[R Item] struct {
	Rec       R
	Text, Sem float64 // normalised 0–1
	TextRank  int     // 1-based, 0 if not a text match
	SemRank   int
	Matched   int     // query terms matched
	Chunk     int     // best chunk
	Fused     float64 // before decay
	Decay     float64
	Score     float64
}

// InText reports whether the candidate matched the query's words.
func (c *Candidate[R]) InText() bool { return c.Text > 0 }

// InSem reports whether the candidate matched the query's meaning.
func (c *Candidate[R]) InSem() bool { return c.SemRank > 0 }

// TextHit is a full-text match: an item's id, its BM25 score and how many
// query terms it matched. The full-text index answers with it
// (fulltext.Hit).
type TextHit struct {
	ID      string
	Score   float64
	Matched int
}

// VecHit is an item's chunk nearest a query vector: the item's id, the
// chunk's number and its cosine similarity, -1 to 1. The vector store
// answers with it (vectors.Hit).
type VecHit struct {
	ID         string
	Chunk      int
	Similarity float32
}

// TextCandidates is the first stage: the hits whose item is found (item
// reports false for one that is gone or out of the query's scope), each
// with its BM25 score divided by the best among them, so text scores lie
// in 0–1 whatever the scope.
func TextCandidates[R Item](hits []TextHit, item func(id string) (R, bool)) []Candidate[R] {
	cands := make([]Candidate[R], 0, len(hits))
	var best float64
	for _, h := range hits {
		r, ok := item(h.ID)
		if !ok {
			continue
		}
		cands = append(cands, Candidate[R]{Rec: r, Text: h.Score, Matched: h.Matched, TextRank: 1})
		best = math.Max(best, h.Score)
	}
	for i := range cands {
		cands[i].Text /= best
	}
	return cands
}

// Join is the stage where the two lists meet: a text candidate gets the
// similarity of its own nearest chunk however low (nearest; a few dot
// products, not a second scan), and an item found by meaning alone (hits,
// best first) joins when its similarity reaches floor and item finds it in
// scope. Without a query vector, nearest is nil and hits are not read.
// Similarities are clipped at 1; fusion comes after.
func Join[R Item](text []Candidate[R], nearest func(id string) (VecHit, bool), hits []VecHit, floor float64, item func(id string) (R, bool)) []Candidate[R] {
	cands := make([]Candidate[R], len(text), len(text)+len(hits))
	copy(cands, text)
	if nearest == nil {
		return cands
	}
	taken := make(map[string]bool, len(cands))
	for i := range cands {
		c := &cands[i]
		taken[c.Rec.Key()] = true
		if h, ok := nearest(c.Rec.Key()); ok && h.Similarity > 0 {
			c.Sem, c.Chunk, c.SemRank = math.Min(float64(h.Similarity), 1), h.Chunk, 1
		}
	}
	for _, h := range hits {
		if float64(h.Similarity) < floor || taken[h.ID] {
			continue
		}
		r, ok := item(h.ID)
		if !ok {
			continue
		}
		cands = append(cands, Candidate[R]{Rec: r, Sem: math.Min(float64(h.Similarity), 1), Chunk: h.Chunk, SemRank: 1})
	}
	return cands
}

// Plan is what the stages after the candidates need to know of a query.
type Plan struct {
	Mode     Mode
	Fuser    Fuser
	Floor    float64 // cosine an item needs to join on meaning alone
	Strength float64 // decay strength: the factor lies in [1−Strength, 1]
	Need     int     // results up to the end of the requested page
	MinScore float64
	Sort     Sort
}

// Cut is the undecayed score below which a candidate cannot reach the
// requested page nor pass MinScore. The decay factor lies in [1−s, 1], so
// the need-th best lower bound fused·(1−s) is a score the page is sure to
// reach; recency order needs every match scored.
func Cut[R Item](p Plan, cands []Candidate[R]) float64 {
	if p.Sort == ByRecency {
		return math.Inf(-1)
	}
	lows := make([]float64, 0, len(cands))
	for i := range cands {
		if cands[i].Fused > 0 {
			lows = append(lows, cands[i].Fused*(1-p.Strength))
		}
	}
	cut := math.Inf(-1)
	if p.Need <= len(lows) {
		cut = KthLargest(lows, p.Need)
	}
	return math.Max(cut, p.MinScore)
}

// WantsMore reports whether an item the vector store did not return could
// still count: its similarity is at most bound (unless the store's answer
// was complete), so its fused score is at most what that bound fuses to.
// With MinScore every match above it counts; by recency every match above
// the floor does.
func WantsMore[R Item](p Plan, cands []Candidate[R], complete bool, bound float64) bool {
	if complete || bound < p.Floor {
		return false
	}
	seen := 0
	for i := range cands {
		if cands[i].SemRank > 0 {
			seen++
		}
	}
	best := p.Fuser.Ceiling(p.Mode, bound, seen)
	threshold := Cut(p, cands)
	if p.MinScore > 0 {
		threshold = p.MinScore
	}
	return best >= threshold
}

// Counts are how many candidates matched, in all and by kind of evidence.
type Counts struct {
	Total, Text, Semantic int
}

// DecayAndCut gives the candidates that can reach the page their decay
// factor (decay's answer for the item) and final score; the rest are only
// counted. Results below MinScore are dropped. It returns the scored
// candidates and the counts.
func DecayAndCut[R Item](p Plan, cands []Candidate[R], decay func(R) float64) ([]*Candidate[R], Counts) {
	cut := Cut(p, cands)
	var list []*Candidate[R]
	var n Counts
	for i := range cands {
		c := &cands[i]
		if c.Fused <= 0 {
			continue
		}
		if c.Fused >= cut || p.MinScore > 0 || p.Sort == ByRecency {
			c.Decay = decay(c.Rec)
			c.Score = c.Fused * c.Decay
			if c.Score < p.MinScore {
				continue
			}
		} else {
			c.Score = -1 // scored low enough that only the total needs it
		}
		n.Total++
		if c.InText() {
			n.Text++
		}
		if c.InSem() {
			n.Semantic++
		}
		if c.Score >= 0 {
			list = append(list, c)
		}
	}
	return list, n
}

// SortCandidates orders a result list: by score (ties: newer first, then
// key), or by recency (most recently updated first, ties by score).
func SortCandidates[R Item](cs []*Candidate[R], by Sort) {
	sort.Slice(cs, func(i, j int) bool { return CandidateBefore(cs[i], cs[j], by) })
}

// CandidateBefore is SortCandidates' order: whether a comes before b.
func CandidateBefore[R Item](a, b *Candidate[R], by Sort) bool {
	if by == ByRecency {
		if ua, ub := a.Rec.Updated(), b.Rec.Updated(); !ua.Equal(ub) {
			return ua.After(ub)
		}
	}
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	if da, db := a.Rec.Dated(), b.Rec.Dated(); !da.Equal(db) {
		return da.After(db)
	}
	return a.Rec.Key() < b.Rec.Key()
}

// PageBounds is the range [lo, hi) of n ordered results that page (1-based)
// of size results shows; lo == hi past the last result.
func PageBounds(page, size, n int) (lo, hi int) {
	lo = min((page-1)*size, n)
	return lo, min(lo+size, n)
}

// KthLargest returns the k-th largest value of xs (1-based); xs is reordered.
func KthLargest(xs []float64, k int) float64 {
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

// Round rounds a score to six decimals, as every answer shows it.
func Round(x float64) float64 { return math.Round(x*1e6) / 1e6 }
