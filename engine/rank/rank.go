// Package rank holds the stages of a search that know nothing of the
// corpus they rank: the query vocabulary (Mode, Sort, Fusion, Ranking),
// whether an index can answer, the query embedded outside the corpus's
// read lock, candidates and their evidence, fusion, the decay hook, the
// cut below which a candidate cannot reach the page, ordering, and the
// page's bounds. The memory corpus and the sessions corpus both rank
// through it, so a score means the same in both.
//
// It must do no I/O and hold no index: candidates come in already found
// (by the full-text index, by the vector store), and the embedder, the
// index checks and what decay weighs are handed in as functions. It
// imports neither Bleve nor bbolt nor os.
package rank

import (
	"cmp"
	"fmt"
	"strings"
	"time"
)

// Bounds of a page that both corpora's queries state in their schemas:
// MaxPage so that page × page size cannot overflow, MaxPageSize so that
// one page stays a page (ErrBadPage and ErrBadPageSize name them).
const (
	MaxPage     = 1_000_000
	MaxPageSize = 200
)

// Mode selects which index answers a query.
type Mode string

// The three search modes. Scores lie in 0–1 in every mode (see docs/design.md).
const (
	Hybrid   Mode = "hybrid"
	Semantic Mode = "semantic"
	FullText Mode = "fulltext"
)

// Sort orders a page of results.
type Sort string

const (
	ByRelevance Sort = "relevance"
	ByRecency   Sort = "recency"
)

// Fusion names how Hybrid mode combines the two ranked lists.
type Fusion string

const (
	// WeightedSum adds the normalised BM25 score and the cosine similarity,
	// each times its weight. It measures best on the benchmark sets of
	// docs/benchmarks.md.
	WeightedSum Fusion = "weighted"
	// RRF is reciprocal rank fusion (k = 60), maenifold's method, rescaled to 0–1.
	RRF Fusion = "rrf"
)

// Settings resolves what a corpus's config may leave unset of its
// ranking: the fusion (WeightedSum) and the ranking (DefaultRanking), each
// checked. Both corpora open through it, so they refuse the same settings
// with the same words.
func Settings(f Fusion, r *Ranking) (Fusion, Ranking, error) {
	f = cmp.Or(f, WeightedSum)
	if f != WeightedSum && f != RRF {
		return f, Ranking{}, fmt.Errorf("unknown fusion %q (want weighted or rrf)", f)
	}
	rk := DefaultRanking()
	if r != nil {
		rk = *r
	}
	return f, rk, rk.Validate()
}

// ParseMode reads a query's mode: "" is Hybrid, case and spaces do not
// matter, and "full-text", "full_text" and "text" are FullText.
func ParseMode(m Mode) (Mode, error) {
	switch v := Mode(strings.ToLower(strings.TrimSpace(string(m)))); v {
	case "":
		return Hybrid, nil
	case Hybrid, Semantic, FullText:
		return v, nil
	case "full-text", "full_text", "text":
		return FullText, nil
	}
	return m, fmt.Errorf("%q: %w", m, ErrBadMode)
}

// ParseSort reads a query's order: "" is ByRelevance; case and spaces do
// not matter.
func ParseSort(s Sort) (Sort, error) {
	switch v := Sort(strings.ToLower(strings.TrimSpace(string(s)))); v {
	case "":
		return ByRelevance, nil
	case ByRelevance, ByRecency:
		return v, nil
	}
	return s, fmt.Errorf("%q: %w", s, ErrBadSort)
}

// CheckRange checks that a query's date bounds, where both are set, are in
// order.
func CheckRange(from, to time.Time) error {
	if !from.IsZero() && !to.IsZero() && from.After(to) {
		return fmt.Errorf("from %s, to %s: %w", from.Format(time.RFC3339), to.Format(time.RFC3339), ErrBadRange)
	}
	return nil
}

// Ready says whether a corpus's index can answer a query in mode, from
// what the corpus knows of itself: indexing (a first or full sync runs, or
// one was cut short, so answers may be partial), empty (no sync has
// finished and nothing is stored) and damage (the full-text index's, nil
// when sound). done means the answer is an empty page marked indexing. An
// empty index that no sync is building is notReady; a damaged one fails
// every query that needs its words, unless a sync is rebuilding it.
func Ready(mode Mode, indexing, empty bool, damage, notReady error) (done bool, err error) {
	if empty {
		if indexing {
			return true, nil
		}
		return false, notReady
	}
	if damage != nil && mode != Semantic && !indexing {
		return false, damage
	}
	return false, nil
}

// Count checks a count argument: 0 means def, 1..max is taken as is, and
// anything else is an error naming the argument and wrapping bad.
func Count(name string, v, def, max int, bad error) (int, error) {
	switch {
	case v == 0:
		return def, nil
	case v < 0 || v > max:
		return v, fmt.Errorf("%s %d: %w", name, v, bad)
	}
	return v, nil
}
