package rank

import (
	"fmt"
	"math"
	"sort"
)

// Hybrid mode fuses two ranked lists: BM25 (normalised by the best BM25
// score in scope, so 0–1) and cosine similarity of the best chunk (clipped
// at 0, so 0–1). Both methods below return 0–1, so MinScore means the same
// thing in every mode.

// rrfK is reciprocal rank fusion's constant, as in maenifold and the RRF paper.
const rrfK = 60

// Ranking holds every knob of relevance: BM25's parameters, the weights of
// the fields it sums, the fusion weights and the semantic floor. It exists
// so that `mnemo eval` and the benchmarks can try alternatives; the
// defaults are what measured best on the shared benchmark sets
// (docs/benchmarks.md).
type Ranking struct {
	K1, B float64 // BM25 term-frequency saturation and length normalisation
	// Field weights of the BM25 sum: title, body (title + headings + text),
	// tags, and the CJK bigram field.
	TitleWeight, BodyWeight, TagsWeight, CJKWeight float64
	// TextWeight and VectorWeight weigh the two lists in Hybrid mode. The
	// built-in static embedder is much weaker than BM25, so by default it
	// nudges the ranking rather than co-deciding it.
	TextWeight, VectorWeight float64
	// SemanticFloor is the cosine similarity a memory's best chunk needs to
	// count as a semantic match on its own, without a text match.
	SemanticFloor float64
}

// DefaultRanking returns the tuned defaults.
func DefaultRanking() Ranking {
	return Ranking{
		K1: 1.2, B: 0.6,
		TitleWeight: 0.3, BodyWeight: 1, TagsWeight: 0.1, CJKWeight: 1,
		TextWeight: 1, VectorWeight: 0.5,
		SemanticFloor: 0.3,
	}
}

// Validate checks that every weight and parameter is usable.
func (r Ranking) Validate() error {
	for _, x := range []float64{r.K1, r.B, r.TitleWeight, r.BodyWeight, r.TagsWeight, r.CJKWeight, r.TextWeight, r.VectorWeight} {
		if x < 0 || math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("ranking %+v: weights and BM25 parameters must be finite and >= 0", r)
		}
	}
	if r.B > 1 {
		return fmt.Errorf("ranking: BM25 b = %v, want 0..1", r.B)
	}
	if r.TextWeight+r.VectorWeight == 0 {
		return fmt.Errorf("ranking: text and vector weights are both 0")
	}
	return nil
}

// Fuser combines a candidate's text and semantic evidence into one score.
type Fuser struct {
	method      Fusion
	wText, wVec float64
}

// NewFuser returns the fuser of method with r's list weights.
func NewFuser(method Fusion, r Ranking) Fuser {
	return Fuser{method: method, wText: r.TextWeight, wVec: r.VectorWeight}
}

// Fuse scores one candidate. text and sem are in 0–1; textRank and semRank
// are 1-based positions in their lists, 0 when the candidate is not in that list.
func (f Fuser) Fuse(text, sem float64, textRank, semRank int) float64 {
	switch f.method {
	case RRF:
		var s float64
		if textRank > 0 {
			s += f.wText / float64(rrfK+textRank)
		}
		if semRank > 0 {
			s += f.wVec / float64(rrfK+semRank)
		}
		return s / ((f.wText + f.wVec) / float64(rrfK+1))
	default:
		if f.wText+f.wVec == 0 {
			return 0
		}
		return (f.wText*text + f.wVec*sem) / (f.wText + f.wVec)
	}
}

// Ceiling is the most that a candidate found by meaning alone, with a
// similarity of at most bound, can score in mode when seen candidates with
// semantic evidence are already known: the bound itself, or in Hybrid
// mode what it fuses to with no text evidence, ranked after them.
func (f Fuser) Ceiling(mode Mode, bound float64, seen int) float64 {
	if mode == Hybrid {
		return f.Fuse(0, bound, 0, seen+1)
	}
	return bound
}

// FuseAll sets every candidate's fused score for mode: its text score
// (FullText), its semantic score (Semantic), or both fused (Hybrid; RRF
// first ranks the candidates in each list).
func FuseAll[R Item](f Fuser, cands []Candidate[R], mode Mode) {
	if f.method == RRF && mode == Hybrid {
		rankBy(cands, func(c *Candidate[R]) float64 { return c.Text }, func(c *Candidate[R], r int) { c.TextRank = r }, func(c *Candidate[R]) int { return c.TextRank })
		rankBy(cands, func(c *Candidate[R]) float64 { return c.Sem }, func(c *Candidate[R], r int) { c.SemRank = r }, func(c *Candidate[R]) int { return c.SemRank })
	}
	for i := range cands {
		c := &cands[i]
		switch mode {
		case FullText:
			c.Fused = c.Text
		case Semantic:
			c.Fused = c.Sem
		default:
			c.Fused = f.Fuse(c.Text, c.Sem, c.TextRank, c.SemRank)
		}
	}
}

// rankBy hands out 1-based ranks by key, best first, to the candidates
// whose key is positive; the others get rank 0.
func rankBy[R Item](cs []Candidate[R], key func(*Candidate[R]) float64, set func(*Candidate[R], int), rankOf func(*Candidate[R]) int) {
	var ps []*Candidate[R]
	for i := range cs {
		set(&cs[i], 0)
		if key(&cs[i]) > 0 {
			ps = append(ps, &cs[i])
		}
	}
	sort.Slice(ps, func(i, j int) bool { return key(ps[i]) > key(ps[j]) })
	// Equal keys share a rank (1, 2, 2, 4), so fusion cannot turn a tie
	// into an order; SortCandidates breaks ties newer-first.
	for i, c := range ps {
		r := i + 1
		if i > 0 && key(c) == key(ps[i-1]) {
			r = rankOf(ps[i-1])
		}
		set(c, r)
	}
}
