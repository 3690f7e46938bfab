package engine

import "mnemo/engine/rank"

// bm25Of is the full-text scorer's share of a Ranking: BM25's parameters
// and the weights of the fields it sums.
func bm25Of(r rank.Ranking) bm25 {
	return bm25{K1: r.K1, B: r.B, Weights: [len(textFields)]float64{r.TitleWeight, r.BodyWeight, r.TagsWeight, r.CJKWeight}}
}
