package engine

import (
	"fmt"
	"math"
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

func (r Ranking) bm25() bm25 {
	return bm25{K1: r.K1, B: r.B, Weights: [len(textFields)]float64{r.TitleWeight, r.BodyWeight, r.TagsWeight, r.CJKWeight}}
}

// fuser combines a memory's text and semantic evidence into one score.
type fuser struct {
	method      Fusion
	wText, wVec float64
}

func newFuser(method Fusion, r Ranking) fuser {
	return fuser{method: method, wText: r.TextWeight, wVec: r.VectorWeight}
}

// fuse scores one memory. text and sem are in 0–1; textRank and semRank are
// 1-based positions in their lists, 0 when the memory is not in that list.
func (f fuser) fuse(text, sem float64, textRank, semRank int) float64 {
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

func (r Ranking) validate() error {
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

// fuseAll sets every candidate's fused score for mode: its text score
// (FullText), its semantic score (Semantic), or both fused (Hybrid; RRF
// first ranks the candidates in each list). Memories and sessions share it.
func (f fuser) fuseAll(cands []candidate, mode Mode) {
	if f.method == RRF && mode == Hybrid {
		rankBy(cands, func(c *candidate) float64 { return c.text }, func(c *candidate, r int) { c.textRank = r }, func(c *candidate) int { return c.textRank })
		rankBy(cands, func(c *candidate) float64 { return c.sem }, func(c *candidate, r int) { c.semRank = r }, func(c *candidate) int { return c.semRank })
	}
	for i := range cands {
		c := &cands[i]
		switch mode {
		case FullText:
			c.fused = c.text
		case Semantic:
			c.fused = c.sem
		default:
			c.fused = f.fuse(c.text, c.sem, c.textRank, c.semRank)
		}
	}
}
