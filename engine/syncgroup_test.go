package engine

import (
	"context"
	"errors"
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

// TestSyncGroupFollowersDoNotQueue: a call returns as soon as its own batch
// is done, even while the next batch holds the sync lock; calls arriving
// during a batch form exactly one next batch, led by one of them.
func TestSyncGroupFollowersDoNotQueue(t *testing.T) {
	var g syncGroup
	var lock sync.Mutex
	newCall := func(p string) *syncCall {
		return &syncCall{ctx: context.Background(), paths: []string{p}, done: make(chan struct{}), lead: make(chan struct{})}
	}
	waitQueued := func(n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for { // no event says "n calls are queued": poll, bounded
			g.mu.Lock()
			queued := len(g.waiting)
			g.mu.Unlock()
			if queued == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d calls queued after 10 s, want %d", queued, n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	a, b, c := newCall("a"), newCall("b"), newCall("c")
	returned := map[string]chan struct{}{"a": make(chan struct{}), "b": make(chan struct{}), "c": make(chan struct{})}
	var mu sync.Mutex
	var batches [][]string
	release := make(chan struct{})
	var run func(batch []*syncCall)
	run = func(batch []*syncCall) {
		var paths []string
		for _, x := range batch {
			paths = append(paths, x.paths[0])
		}
		mu.Lock()
		batches = append(batches, paths)
		first := len(batches) == 1
		mu.Unlock()
		if first { // c arrives while the first batch runs
			go func() { g.join(c, &lock, run); close(returned["c"]) }()
			waitQueued(1)
		}
		for _, x := range batch {
			close(x.done)
		}
		if !first {
			<-release // the second batch holds the lock until told
		}
	}
	join := func(x *syncCall) {
		g.join(x, &lock, run)
		close(returned[x.paths[0]])
	}

	lock.Lock() // as a running full sync would
	go join(a)
	waitQueued(1)
	go join(b)
	waitQueued(2)
	lock.Unlock()
	for _, p := range []string{"a", "b"} {
		select {
		case <-returned[p]:
		case <-time.After(10 * time.Second):
			close(release)
			t.Fatalf("call %s did not return while the next batch ran, though its own batch was done", p)
		}
	}
	select {
	case <-returned["c"]:
		t.Fatal("call c returned before its batch finished")
	default:
	}
	close(release)
	select {
	case <-returned["c"]:
	case <-time.After(10 * time.Second):
		t.Fatal("call c did not return after its batch")
	}
	if want := [][]string{{"a", "b"}, {"c"}}; !slices.EqualFunc(batches, want, slices.Equal) {
		t.Errorf("batches %v, want %v", batches, want)
	}
	if g.leading || len(g.waiting) != 0 {
		t.Errorf("after the last batch: leading %v, %d waiting; want idle", g.leading, len(g.waiting))
	}
}

// TestWriteStagesBeforeTheLock: a Write that creates a memory writes and
// flushes its file before it takes the write lock, so a writer holding the
// lock (flushing its own file) does not hold it up; named under the lock,
// the memory is indexed and no staged file is left. A Write refused
// (ErrExists) leaves no staged file either.
func TestWriteStagesBeforeTheLock(t *testing.T) {
	cfg, e := openRepairVault(t, map[string]string{"seed.md": "# Seed\n\nalpha\n"})
	defer e.Close()
	staged := func() []string {
		m, _ := filepath.Glob(filepath.Join(cfg.MemoryDir, "notes", ".mnemo-*.tmp"))
		return m
	}
	e.writeMu.Lock() // as a writer flushing its file would
	done := make(chan error, 1)
	go func() {
		_, err := e.Write(context.Background(), WriteRequest{Title: "Staged", Content: "the okapi grazes", Folder: "notes"})
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for len(staged()) == 0 { // no event says "the file is staged": poll, bounded
		if time.Now().After(deadline) {
			e.writeMu.Unlock()
			t.Fatal("no staged file while another writer held the lock: the write waited to write its file")
		}
		time.Sleep(time.Millisecond)
	}
	e.writeMu.Unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := repairSearch(t, e, "okapi", FullText); !slices.Equal(got, []string{"notes/staged.md"}) {
		t.Errorf("okapi → %v, want notes/staged.md", got)
	}
	if s := staged(); len(s) != 0 {
		t.Errorf("staged files left: %v", s)
	}
	if _, err := e.Write(context.Background(), WriteRequest{Title: "Staged", Content: "again", Folder: "notes"}); !errors.Is(err, ErrExists) {
		t.Errorf("same title again: %v, want ErrExists", err)
	}
	if s := staged(); len(s) != 0 {
		t.Errorf("staged files left after a refused write: %v", s)
	}
}
