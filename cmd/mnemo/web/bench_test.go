package web

import (
	"context"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"mnemo/cmd/mnemo/remote"
)

// BenchmarkSearchAsYouType types queries into the page's search API one
// character at a time, as the search box sends them, on the sample vault,
// and reports the median and 99th percentile answer times: on the page of
// the serve that holds the index, and on the page of a serve that fronts
// it (each search over the holder's socket).
func BenchmarkSearchAsYouType(b *testing.B) {
	f := newFixture(b, nil)
	b.Run("holder", func(b *testing.B) { typeQueries(b, f) })
	b.Run("front-end", func(b *testing.B) {
		sock := b.TempDir()
		ln, err := remote.Listen(sock)
		if err != nil {
			b.Fatal(err)
		}
		ctx, stop := context.WithCancel(context.Background())
		served := make(chan error, 1)
		go func() { served <- remote.ServeOpts(ctx, ln, f.eng, remote.Options{Sessions: f.sess}) }()
		defer func() { stop(); <-served }()
		pool := remote.NewPool(sock)
		defer pool.Close()
		s := New(Options{Token: testToken})
		s.SetCorpora(&Corpora{Memories: pool, Sessions: pool.Sessions()})
		front := httptest.NewServer(s)
		defer front.Close()
		typeQueries(b, &fixture{srv: front})
	})
}

func typeQueries(b *testing.B, f *fixture) {
	queries := []string{"bleve scoring", "postgres connection pool", "recency decay half life", "japanese search", "rotate api keys", "ghost results after delete"}
	var took []time.Duration
	for b.Loop() {
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
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(len(took))/float64(b.N), "requests/op")
}

// BenchmarkFirstPaint loads the page in headless Chromium over the sample
// vault, with the browser's cache off as on a first visit, and reports
// from the Performance API when it first painted content (the header and
// the search box's frame) and when its script had run and built the search
// view (DOMContentLoaded's end: the deferred scripts run before it),
// median over the loads. Without Chromium it skips, as the browser tests do.
func BenchmarkFirstPaint(b *testing.B) {
	f := newFixture(b, nil)
	br := newBrowser(b, 1280, 900)
	if _, err := chromedp.Call(br.ctx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true}); err != nil {
		b.Fatal(err)
	}
	var fcp, dcl []float64
	for n := 0; b.Loop(); n++ {
		br.load(b, f, n)
		fcp = append(fcp, eval[float64](b, br, `new Promise(done => new PerformanceObserver((list, obs) => {
			const e = list.getEntriesByName("first-contentful-paint")[0];
			if (e) { obs.disconnect(); done(e.startTime); }
		}).observe({ type: "paint", buffered: true }))`, chromedp.EvalAwaitPromise))
		dcl = append(dcl, eval[float64](b, br, `performance.getEntriesByType("navigation")[0].domContentLoadedEventEnd`))
	}
	slices.Sort(fcp)
	slices.Sort(dcl)
	b.ReportMetric(fcp[len(fcp)/2], "fcp-ms")
	b.ReportMetric(dcl[len(dcl)/2], "dcl-ms")
}
