package mcp_test

import (
	"context"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"mnemo/engine"
	"mnemo/mcp"
)

// BenchmarkSearchRoundTrip measures one SearchMemories call from the SDK
// client to the server and back over the in-memory transport, on
// testdata/vault: argument decoding, the engine's hybrid search with
// snippets, and both JSON encodings. It reports the median and 95th
// percentile latency.
func BenchmarkSearchRoundTrip(b *testing.B) {
	e := newEnv(b, true, nil, mcp.Options{})
	queries := []string{
		"why did we choose bbolt over sqlite",
		"recency decay half-life",
		"postgres connection pool exhausted",
		"数据库迁移",
		"quarterly planning",
		"how to deploy with systemd",
	}
	for _, mode := range []string{"Hybrid", "FullText", "Semantic"} {
		b.Run(mode, func(b *testing.B) {
			ctx := context.Background()
			var lat []time.Duration
			i := 0
			for b.Loop() {
				q := queries[i%len(queries)]
				if mode == "Semantic" && q == "数据库迁移" {
					q = "database migration" // the built-in embedder knows English words only
				}
				t0 := time.Now()
				res, err := e.cs.CallTool(ctx, &sdk.CallToolParams{Name: "SearchMemories", Arguments: map[string]any{
					"query": q, "mode": mode,
				}})
				lat = append(lat, time.Since(t0))
				if err != nil || res.IsError {
					b.Fatalf("%v %v", err, text(res))
				}
				i++
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
		})
	}
	// The same hybrid queries straight to the engine: the difference is
	// what MCP (decoding, encoding, transport) adds.
	b.Run("engine-only", func(b *testing.B) {
		ctx := context.Background()
		var lat []time.Duration
		i := 0
		for b.Loop() {
			t0 := time.Now()
			if _, err := e.eng.Search(ctx, engine.Query{Text: queries[i%len(queries)]}); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
			i++
		}
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
	})
}
