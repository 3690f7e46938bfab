package engine

// Hybrid mode fuses two ranked lists: BM25 (normalised by the best BM25
// score in scope, so 0–1) and cosine similarity of the best chunk (clipped
// at 0, so 0–1). Both methods below return 0–1, so MinScore means the same
// thing in every mode.

// rrfK is reciprocal rank fusion's constant, as in maenifold and the RRF paper.
const rrfK = 60

// Default weights of the weighted sum, chosen on ../shared/bench
// (docs/benchmarks.md): the built-in static embedder is much weaker than
// BM25, so it nudges the ranking rather than co-deciding it.
const (
	defaultTextWeight   = 1.0
	defaultVectorWeight = 0.3
)

// fuser combines a memory's text and semantic evidence into one score.
type fuser struct {
	method      Fusion
	wText, wVec float64
}

func newFuser(cfg Config) fuser {
	f := fuser{method: cfg.Fusion, wText: cfg.TextWeight, wVec: cfg.VectorWeight}
	if f.method == "" {
		f.method = WeightedSum
	}
	if f.wText <= 0 {
		f.wText = defaultTextWeight
	}
	if f.wVec <= 0 {
		f.wVec = defaultVectorWeight
	}
	return f
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
		return (f.wText*text + f.wVec*sem) / (f.wText + f.wVec)
	}
}
