package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestSyncPathsGroupCommit: SyncPaths calls that arrive while a batch runs
// share the next batch, and each still returns only once its own file is
// searchable, with a report about its own file.
func TestSyncPathsGroupCommit(t *testing.T) {
	var mu sync.Mutex
	var totals []int // one entry per reconcile that had work: its size
	cfg, e := openRepairVault(t, map[string]string{"seed.md": "# Seed\n\nalpha\n"})
	e.Close()
	cfg.Progress = func(done, total int) {
		if done == 0 {
			mu.Lock()
			totals = append(totals, total)
			mu.Unlock()
		}
	}
	e, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()

	const n = 8
	for i := range n {
		body := fmt.Sprintf("# Note %d\n\ngroupword%d and the shared word quokka\n", i, i)
		if err := os.WriteFile(filepath.Join(cfg.MemoryDir, fmt.Sprintf("n%d.md", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Hold the sync lock as a running batch would, so all calls queue.
	e.syncMu.Lock()
	var wg sync.WaitGroup
	errs := make([]error, n)
	reps := make([]Report, n)
	for i := range n {
		wg.Go(func() {
			reps[i], errs[i] = e.SyncPaths(context.Background(), []string{fmt.Sprintf("n%d.md", i)})
			if errs[i] != nil {
				return
			}
			// Read your write: searchable as soon as the call returns.
			got := repairSearch(t, e, fmt.Sprintf("groupword%d", i), FullText)
			if !slices.Contains(got, fmt.Sprintf("n%d.md", i)) {
				errs[i] = fmt.Errorf("n%d.md not found right after its SyncPaths returned: %v", i, got)
			}
		})
	}
	deadline := time.Now().Add(10 * time.Second)
	for { // no event says "n calls are queued": poll, bounded
		e.group.mu.Lock()
		queued := len(e.group.waiting)
		e.group.mu.Unlock()
		if queued == n {
			break
		}
		if time.Now().After(deadline) {
			e.syncMu.Unlock()
			t.Fatalf("%d of %d calls queued after 10 s", queued, n)
		}
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	totals = nil
	mu.Unlock()
	e.syncMu.Unlock()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{fmt.Sprintf("n%d.md", i)}; !slices.Equal(reps[i].Added, want) {
			t.Errorf("call %d: report lists %v added, want %v", i, reps[i].Added, want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(totals, []int{n}) {
		t.Errorf("batches of sizes %v, want one batch of %d", totals, n)
	}
	if got := repairSearch(t, e, "quokka", FullText); len(got) != n {
		t.Errorf("quokka found in %d memories, want %d", len(got), n)
	}
}

// TestSyncPathsGroupFailureIsolated: a call with a bad path fails alone;
// the calls batched with it succeed.
func TestSyncPathsGroupFailureIsolated(t *testing.T) {
	cfg, e := openRepairVault(t, map[string]string{"seed.md": "# Seed\n\nalpha\n"})
	defer e.Close()
	if err := os.WriteFile(filepath.Join(cfg.MemoryDir, "ok.md"), []byte("# Ok\n\nwombat\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := e.SyncPaths(context.Background(), []string{"../outside.md"}); err == nil {
		t.Fatal("a path outside the memory folder was accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e.syncMu.Lock()
	var wg sync.WaitGroup
	var okErr error
	wg.Go(func() { _, okErr = e.SyncPaths(context.Background(), []string{"ok.md"}) })
	wg.Go(func() { e.SyncPaths(ctx, []string{"seed.md"}) }) // cancelled: may fail, must not fail the other
	deadline := time.Now().Add(10 * time.Second)
	for {
		e.group.mu.Lock()
		queued := len(e.group.waiting)
		e.group.mu.Unlock()
		if queued == 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	e.syncMu.Unlock()
	wg.Wait()
	if okErr != nil {
		t.Fatalf("ok.md: %v", okErr)
	}
	if got := repairSearch(t, e, "wombat", FullText); !slices.Equal(got, []string{"ok.md"}) {
		t.Errorf("wombat: %v, want ok.md", got)
	}
}
