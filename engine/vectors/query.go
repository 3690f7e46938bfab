package vectors

import (
	"context"
	"fmt"

	"mnemo/engine/embed"
	"mnemo/engine/rank"
)

// EmbedQuery returns the query's unit vector, or nil when it has no
// meaning to search by (no word emb knows): Semantic mode then fails with
// rank.ErrNoTerms, Hybrid goes on with the words alone. Both corpora embed
// their queries with it, so a query means the same in both.
func EmbedQuery(ctx context.Context, emb embed.Embedder, text string, mode rank.Mode) ([]float32, error) {
	qv, err := emb.Embed(ctx, []string{text})
	if err != nil {
		return nil, fmt.Errorf("embed query: %w", err)
	}
	u := Normalize(qv[0])
	if u == nil && mode == rank.Semantic {
		return nil, fmt.Errorf("%q: none of its words is known to the embedder %s: %w", text, emb.Name(), rank.ErrNoTerms)
	}
	return u, nil
}
