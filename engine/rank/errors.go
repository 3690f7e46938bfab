package rank

import "errors"

// The errors of a query's shape, which both corpora answer with; a caller
// tests for them with errors.Is. Each is wrapped with detail.
var (
	ErrEmptyQuery  = errors.New("search query is required")
	ErrNoTerms     = errors.New("search query has no informative term (only stopwords or punctuation)")
	ErrBadPage     = errors.New("page must be between 1 and 1000000")
	ErrBadPageSize = errors.New("pageSize must be between 1 and 200")
	ErrBadMode     = errors.New("unknown mode (want hybrid, semantic or fulltext)")
	ErrBadSort     = errors.New("unknown sort (want relevance or recency)")
	ErrBadRange    = errors.New("from must not be after to")
	ErrBadMinScore = errors.New("minScore must be between 0 and 1")
)
