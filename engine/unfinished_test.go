package engine_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"mnemo/engine"
)

// TestInterruptedFirstSyncShowsIndexing: a first sync cut short after its
// first batch (as kill -9 or Ctrl-C would) leaves part of the folder
// indexed. Until a sync completes, every reader — read-only, or a writer
// that has not synced yet — must say indexing, in search results and in
// status, not present the part as the whole. A full sync cut short is the same.
func TestInterruptedFirstSyncShowsIndexing(t *testing.T) {
	// Three batches of at most 10 (engine.SetSyncBatch; a real sync
	// applies 1024 files per batch, which is the same code).
	const n, batch = 25, 10
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("m%04d.md", i)] = memo(fmt.Sprintf("Memo %d", i), "2024-01-01", nil, "the wombat burrows")
	}
	for _, full := range []bool{false, true} {
		t.Run(fmt.Sprintf("full=%v", full), func(t *testing.T) {
			var v *vault
			if full {
				v = newVault(t, files) // complete, then a full sync cut short
			} else {
				v = newVault(t, nil)
				v.writeAll(files)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cfg := v.cfg
			cfg.Progress = func(done, total int) {
				if done > 0 && done < total {
					cancel() // the crash, after the first batch
				}
			}
			v.close()
			e, err := engine.Open(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			engine.SetSyncBatch(e, batch)
			if _, err := e.Sync(ctx, full); !errors.Is(err, context.Canceled) {
				t.Fatalf("interrupted sync: %v, want context.Canceled", err)
			}
			e.Close()

			ro := v.cfg
			ro.ReadOnly = true
			r, err := engine.Open(context.Background(), ro)
			if err != nil {
				t.Fatal(err)
			}
			p, err := r.Search(context.Background(), engine.Query{Text: "wombat", Mode: engine.FullText, Now: now0})
			if err != nil {
				t.Fatal(err)
			}
			st, _ := r.Status(context.Background())
			r.Close()
			if p.TotalCount >= n || p.TotalCount == 0 {
				t.Fatalf("interrupted: %d results, want part of %d (is the test still interrupting?)", p.TotalCount, n)
			}
			if !p.Indexing || !st.Indexing || st.Unfinished == "" {
				t.Errorf("read-only after the interruption: page.Indexing %v, status.Indexing %v, Unfinished %q; want true, true, set",
					p.Indexing, st.Indexing, st.Unfinished)
			}

			v.open()
			if st := v.status(); !st.Indexing {
				t.Errorf("writer before its sync: status.Indexing false")
			}
			v.sync()
			p = v.search(engine.Query{Text: "wombat", Mode: engine.FullText})
			if st := v.status(); p.Indexing || st.Indexing || st.Unfinished != "" || p.TotalCount != n {
				t.Errorf("after a completed sync: page.Indexing %v, status.Indexing %v, Unfinished %q, %d results; want false, false, empty, %d",
					p.Indexing, st.Indexing, st.Unfinished, p.TotalCount, n)
			}
			v.close()
		})
	}
}
