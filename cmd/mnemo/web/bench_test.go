package web

import (
	"net/url"
	"slices"
	"testing"
	"time"
)

// BenchmarkSearchAsYouType types queries into the page's search API one
// character at a time, as the search box sends them, on the sample vault,
// and reports the median and 99th percentile answer times.
func BenchmarkSearchAsYouType(b *testing.B) {
	f := newFixture(b, nil)
	queries := []string{"bleve scoring", "postgres connection pool", "recency decay half life", "japanese search", "rotate api keys", "ghost results after delete"}
	var took []time.Duration
	b.ResetTimer()
	for range b.N {
		for _, q := range queries {
			for i := 1; i <= len(q); i++ {
				if q[i-1] == ' ' {
					continue
				}
				start := time.Now()
				code, body := f.get(b, "/api/search?q="+url.QueryEscape(q[:i]), nil)
				took = append(took, time.Since(start))
				if code != 200 && code != 400 { // 400: a prefix of stopwords only
					b.Fatalf("%q: %d %s", q[:i], code, body)
				}
			}
		}
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(len(took))/float64(b.N), "requests/op")
}
