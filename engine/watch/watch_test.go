package watch

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const wait = 20 * time.Second // generous: -race on two cores is slow

// folder is a corpus of every file below root; its batches are sent to jobs.
type folder struct {
	root string
	jobs chan Job
	mu   sync.Mutex
	fail int // how many Runs fail before one succeeds
	logs []string
}

func (f *folder) Key(abs string) (string, bool) {
	r, err := filepath.Rel(f.root, abs)
	if err != nil || !filepath.IsLocal(r) && r != "." {
		return "", false
	}
	return filepath.ToSlash(r), true
}
func (f *folder) Rescans(abs string) (string, bool) {
	return "rules changed", filepath.Base(abs) == ".rules"
}
func (f *folder) Wanted(key string) bool { return strings.HasSuffix(key, ".md") }
func (f *folder) Folders(key string, add func(string) error) {
	filepath.WalkDir(filepath.Join(f.root, key), func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		return add(p)
	})
}
func (f *folder) Run(_ context.Context, j Job) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail > 0 {
		f.fail--
		return 0, errors.New("disk on fire")
	}
	return len(j.Keys), nil
}
func (f *folder) Done(j Job, _ int) { f.jobs <- j }

func (f *folder) log(s string) {
	f.mu.Lock()
	f.logs = append(f.logs, s)
	f.mu.Unlock()
}

func start(t *testing.T, f *folder, o Options) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	o.Log = f.log
	go func() { done <- Loop(ctx, f, o) }()
	t.Cleanup(func() {
		cancel()
		for {
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Loop: %v", err)
				}
				return
			case <-f.jobs: // let a batch in flight finish
			case <-time.After(wait):
				t.Error("Loop did not return after cancel")
				return
			}
		}
	})
}

func next(t *testing.T, f *folder) Job {
	t.Helper()
	select {
	case j := <-f.jobs:
		return j
	case <-time.After(wait):
		t.Fatal("no batch")
	}
	return Job{}
}

// TestLoop: a start-up rescan first, then each change is a batch of the
// keys that fell due together; a new folder is watched and looked at; a
// change to what the corpus reads is a rescan.
func TestLoop(t *testing.T) {
	f := &folder{root: t.TempDir(), jobs: make(chan Job)}
	start(t, f, Options{Debounce: 20 * time.Millisecond, Sync: "sync"})
	if j := next(t, f); j.Rescan != "start-up" {
		t.Fatalf("first batch %+v, want the start-up rescan", j)
	}
	os.WriteFile(filepath.Join(f.root, "a.md"), []byte("a"), 0o644)
	os.WriteFile(filepath.Join(f.root, "b.txt"), []byte("b"), 0o644) // not wanted
	if j := next(t, f); strings.Join(j.Keys, ",") != "a.md" || j.Rescan != "" {
		t.Fatalf("batch %+v, want [a.md]", j)
	}
	os.Mkdir(filepath.Join(f.root, "sub"), 0o755)
	if j := next(t, f); strings.Join(j.Keys, ",") != "sub" {
		t.Fatalf("batch %+v, want [sub]", j)
	}
	os.WriteFile(filepath.Join(f.root, "sub", "c.md"), []byte("c"), 0o644)
	if j := next(t, f); strings.Join(j.Keys, ",") != "sub/c.md" {
		t.Fatalf("batch %+v, want [sub/c.md] (is the new folder watched?)", j)
	}
	os.WriteFile(filepath.Join(f.root, ".rules"), []byte("x"), 0o644)
	if j := next(t, f); j.Rescan != "rules changed" {
		t.Fatalf("batch %+v, want a rescan", j)
	}
}

// TestLoopRetriesAfterError: a failed batch is logged and retried as a
// rescan after a backoff.
func TestLoopRetriesAfterError(t *testing.T) {
	f := &folder{root: t.TempDir(), jobs: make(chan Job), fail: 1}
	start(t, f, Options{Debounce: 20 * time.Millisecond, Sync: "test sync"})
	if j := next(t, f); j.Rescan != "retry after error" {
		t.Fatalf("first batch to succeed %+v, want the retry", j)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.logs) == 0 || f.logs[0] != "test sync failed: disk on fire; rescanning in 1s" {
		t.Errorf("logs %q, want the failure first", f.logs)
	}
}

// TestRescanEvery: 0 means no periodic rescan, unless not every folder can
// be watched; a positive period is kept.
func TestRescanEvery(t *testing.T) {
	for _, tc := range []struct {
		every   time.Duration
		limited bool
		want    time.Duration
	}{
		{0, false, 0},
		{0, true, FallbackRescan},
		{time.Minute, false, time.Minute},
		{time.Minute, true, time.Minute},
	} {
		l := &loop[int]{o: Options{RescanEvery: tc.every}, limited: tc.limited}
		if got := l.rescanEvery(); got != tc.want {
			t.Errorf("RescanEvery %s, limited %v: %s, want %s", tc.every, tc.limited, got, tc.want)
		}
	}
}
