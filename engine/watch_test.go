package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// These tests drive Watch with real files and real fsnotify events. Every
// wait re-checks its condition after each watcher batch (Batches), with a
// deadline, instead of sleeping.

const watchWait = 20 * time.Second // generous: -race on two cores is slow

// watched is a memory folder with a running Watch.
type watched struct {
	t      testing.TB
	dir    string // memory folder
	index  string
	e      *Engine
	cancel context.CancelFunc
	done   chan error

	mu      sync.Mutex
	logs    []string
	batches int
	applied *Batches
}

// startWatch opens an engine on a fresh folder holding files, starts Watch
// and waits for its start-up sync.
func startWatch(t testing.TB, files map[string]string, opts WatchOptions) *watched {
	t.Helper()
	root := t.TempDir()
	w := &watched{t: t, dir: filepath.Join(root, "memory"), index: filepath.Join(root, "index")}
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for p, c := range files {
		w.write(p, c)
	}
	w.start(opts)
	return w
}

func (w *watched) start(opts WatchOptions) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	e, err := Open(ctx, Config{MemoryDir: w.dir, IndexDir: w.index})
	if err != nil {
		cancel()
		w.t.Fatal(err)
	}
	w.e, w.cancel, w.done, w.applied = e, cancel, make(chan error, 1), NewBatches()
	started := make(chan struct{})
	var once sync.Once
	opts.Log = func(s string) {
		w.mu.Lock()
		w.logs = append(w.logs, s)
		w.mu.Unlock()
	}
	opts.OnBatch = func(r Report) {
		w.mu.Lock()
		w.batches++
		w.mu.Unlock()
		w.applied.Done(r)
		once.Do(func() { close(started) })
	}
	go func() { w.done <- e.Watch(ctx, opts) }()
	select {
	case <-started:
	case err := <-w.done:
		w.t.Fatalf("Watch returned before its start-up sync: %v", err)
	case <-time.After(watchWait):
		w.t.Fatal("no start-up sync")
	}
	w.t.Cleanup(w.stop)
}

// stop ends Watch and closes the engine; it is safe to call twice.
func (w *watched) stop() {
	if w.e == nil {
		return
	}
	w.cancel()
	select {
	case err := <-w.done:
		if err != nil {
			w.t.Errorf("Watch: %v", err)
		}
	case <-time.After(watchWait):
		w.t.Error("Watch did not return after cancel")
	}
	if err := w.e.Close(); err != nil {
		w.t.Errorf("Close: %v", err)
	}
	w.e = nil
}

func (w *watched) abs(rel string) string { return filepath.Join(w.dir, filepath.FromSlash(rel)) }

func (w *watched) write(rel, content string) {
	w.t.Helper()
	p := w.abs(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

func (w *watched) rename(from, to string) {
	w.t.Helper()
	if err := os.MkdirAll(filepath.Dir(w.abs(to)), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.Rename(w.abs(from), w.abs(to)); err != nil {
		w.t.Fatal(err)
	}
}

// find returns the paths a full-text search for text finds, sorted.
func (w *watched) find(text string) []string {
	w.t.Helper()
	p, err := w.e.Search(context.Background(), Query{Text: text, Mode: FullText, PageSize: 200, NoSnippets: true})
	if err != nil {
		w.t.Fatalf("search %q: %v", text, err)
	}
	var out []string
	for _, r := range p.Results {
		out = append(out, r.Path)
	}
	sort.Strings(out)
	return out
}

// eventually waits until cond holds, re-checking after each batch, failing
// with what after watchWait.
func (w *watched) eventually(what string, cond func() bool) {
	w.t.Helper()
	if !w.applied.Await(watchWait, cond) {
		w.mu.Lock()
		logs := strings.Join(w.logs, "\n  ")
		w.mu.Unlock()
		w.t.Fatalf("timed out waiting until %s; watcher log:\n  %s", what, logs)
	}
}

// finds waits until a search for text finds exactly want.
func (w *watched) finds(text string, want ...string) {
	w.t.Helper()
	sort.Strings(want)
	var got []string
	w.eventually(fmt.Sprintf("%q finds %v", text, want), func() bool {
		got = w.find(text)
		return slices.Equal(got, want)
	})
}

func (w *watched) files() int {
	s, err := w.e.Status(context.Background())
	if err != nil {
		w.t.Fatal(err)
	}
	return s.Files
}

func (w *watched) readTime(rel string) (time.Time, bool) {
	w.e.mu.RLock()
	defer w.e.mu.RUnlock()
	t, ok := w.e.reads[rel]
	return t, ok
}

func watchMemo(title, body string) string {
	return "# " + title + "\n\n" + body + "\n"
}

func TestWatchWriteEditDelete(t *testing.T) {
	t.Parallel() // waits on the watcher, not the CPU
	w := startWatch(t, map[string]string{"old.md": watchMemo("Old", "present before the watcher started")}, WatchOptions{})
	if got := w.find("present"); !slices.Equal(got, []string{"old.md"}) {
		t.Fatalf("start-up sync: %v", got)
	}

	w.write("notes/a.md", watchMemo("Alpha", "the zebracorn grazes"))
	w.finds("zebracorn", "notes/a.md")

	w.write("notes/a.md", watchMemo("Alpha", "the quokkaline sleeps"))
	w.finds("quokkaline", "notes/a.md")
	w.finds("zebracorn")

	if err := os.Remove(w.abs("notes/a.md")); err != nil {
		t.Fatal(err)
	}
	w.finds("quokkaline")
	w.eventually("one file left", func() bool { return w.files() == 1 })
}

func TestWatchRenameAndMoveKeepReadTime(t *testing.T) {
	t.Parallel() // waits on the watcher, not the CPU
	w := startWatch(t, nil, WatchOptions{})
	w.write("inbox/a.md", watchMemo("Alpha", "the wombatrix digs"))
	w.finds("wombatrix", "inbox/a.md")
	m, err := w.e.Read(context.Background(), "inbox/a.md")
	if err != nil {
		t.Fatal(err)
	}
	read := m.LastRead

	checkRead := func(rel, gone string) {
		t.Helper()
		w.eventually("read time on "+rel, func() bool {
			got, ok := w.readTime(rel)
			return ok && got.Equal(read)
		})
		if _, ok := w.readTime(gone); ok {
			t.Errorf("read time still on %s", gone)
		}
		l, err := w.e.st.load()
		if err != nil {
			t.Fatal(err)
		}
		if got := l.reads[rel]; !got.Equal(read) {
			t.Errorf("stored read time of %s = %v, want %v", rel, got, read)
		}
		if _, ok := l.reads[gone]; ok {
			t.Errorf("stored read time still on %s", gone)
		}
	}

	w.rename("inbox/a.md", "inbox/b.md") // rename within a folder
	w.finds("wombatrix", "inbox/b.md")
	checkRead("inbox/b.md", "inbox/a.md")

	w.rename("inbox/b.md", "archive/2026/b.md") // move to a new folder
	w.finds("wombatrix", "archive/2026/b.md")
	checkRead("archive/2026/b.md", "inbox/b.md")

	// Out of the folder and back under a new name: the halves of the move
	// fall into different batches, and the read time still follows.
	parked := filepath.Join(t.TempDir(), "parked.md")
	if err := os.Rename(w.abs("archive/2026/b.md"), parked); err != nil {
		t.Fatal(err)
	}
	w.finds("wombatrix")
	if err := os.Rename(parked, w.abs("returned.md")); err != nil {
		t.Fatal(err)
	}
	w.finds("wombatrix", "returned.md")
	checkRead("returned.md", "archive/2026/b.md")

	// The read time survives a restart.
	w.stop()
	w.start(WatchOptions{})
	if got, ok := w.readTime("returned.md"); !ok || !got.Equal(read) {
		t.Errorf("after restart: read time %v, %v; want %v", got, ok, read)
	}
}

func TestWatchFolders(t *testing.T) {
	t.Parallel() // waits on the watcher, not the CPU
	w := startWatch(t, map[string]string{
		"old/one.md":        watchMemo("One", "kiwiberry one"),
		"old/deep/two.md":   watchMemo("Two", "kiwiberry two"),
		"gone/three.md":     watchMemo("Three", "lemonwood three"),
		"gone/sub/four.md":  watchMemo("Four", "lemonwood four"),
		"keep/unrelated.md": watchMemo("Keep", "unrelated"),
	}, WatchOptions{})

	t.Run("created with files", func(t *testing.T) {
		// Files land in the new folders before any watch on them exists.
		for i := range 5 {
			w.write(fmt.Sprintf("new/a/b/c%d.md", i), watchMemo("New", fmt.Sprintf("mangosteen file%d", i)))
		}
		w.finds("mangosteen", "new/a/b/c0.md", "new/a/b/c1.md", "new/a/b/c2.md", "new/a/b/c3.md", "new/a/b/c4.md")
		// And the new folders are watched from now on.
		w.write("new/a/b/later.md", watchMemo("Later", "tamarillo"))
		w.finds("tamarillo", "new/a/b/later.md")
	})

	t.Run("moved in from outside", func(t *testing.T) {
		outside := filepath.Join(t.TempDir(), "import")
		os.MkdirAll(filepath.Join(outside, "x"), 0o755)
		os.WriteFile(filepath.Join(outside, "x", "in.md"), []byte(watchMemo("In", "rambutan")), 0o644)
		if err := os.Rename(outside, w.abs("imported")); err != nil {
			t.Skipf("cannot move across folders here: %v", err)
		}
		w.finds("rambutan", "imported/x/in.md")
	})

	t.Run("deleted", func(t *testing.T) {
		if err := os.RemoveAll(w.abs("gone")); err != nil {
			t.Fatal(err)
		}
		w.finds("lemonwood")
	})

	t.Run("renamed", func(t *testing.T) {
		w.rename("old", "renamed")
		w.finds("kiwiberry", "renamed/deep/two.md", "renamed/one.md")
		// Watches follow the new name, not the old one.
		w.write("renamed/deep/three.md", watchMemo("Three", "kiwiberry three"))
		w.finds("kiwiberry", "renamed/deep/three.md", "renamed/deep/two.md", "renamed/one.md")
	})

	t.Run("deleted and recreated", func(t *testing.T) {
		os.RemoveAll(w.abs("renamed"))
		w.write("renamed/deep/back.md", watchMemo("Back", "kiwiberry again"))
		w.finds("kiwiberry", "renamed/deep/back.md")
	})
}

func TestWatchAtomicSave(t *testing.T) {
	t.Parallel() // waits on the watcher, not the CPU
	w := startWatch(t, map[string]string{"x.md": watchMemo("X", "original pomelo")}, WatchOptions{})
	// What editors do: write a temporary file beside it, rename it over.
	tmp := w.abs("x.md.tmp")
	if err := os.WriteFile(tmp, []byte(watchMemo("X", "saved durian")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, w.abs("x.md")); err != nil {
		t.Fatal(err)
	}
	w.finds("durian", "x.md")
	w.finds("pomelo")
	if n := w.files(); n != 1 {
		t.Errorf("files = %d, want 1", n)
	}
}

func TestWatchIgnoresHidden(t *testing.T) {
	t.Parallel() // waits on the watcher, not the CPU
	w := startWatch(t, nil, WatchOptions{})
	w.write(".obsidian/cache.md", watchMemo("Hidden", "jackfruit"))
	w.write(".hidden.md", watchMemo("Hidden", "jackfruit"))
	w.write("notes/.draft.md", watchMemo("Hidden", "jackfruit"))
	w.write("notes/a.md.swp", "jackfruit")
	w.write("notes/visible.md", watchMemo("Visible", "sentinel"))
	w.finds("sentinel", "notes/visible.md")
	if got := w.find("jackfruit"); len(got) != 0 {
		t.Errorf("hidden files indexed: %v", got)
	}
	if n := w.files(); n != 1 {
		t.Errorf("files = %d, want 1", n)
	}
}

func TestWatchStartupReconciles(t *testing.T) {
	t.Parallel() // waits on the watcher, not the CPU
	w := startWatch(t, map[string]string{
		"keep.md":   watchMemo("Keep", "persimmon"),
		"edit.md":   watchMemo("Edit", "blueberry"),
		"delete.md": watchMemo("Delete", "soursop"),
	}, WatchOptions{})
	w.stop()
	// Changes made while nothing runs.
	w.write("edit.md", watchMemo("Edit", "feijoa"))
	os.Remove(w.abs("delete.md"))
	w.write("new/added.md", watchMemo("Added", "cherimoya"))
	w.start(WatchOptions{})
	for text, want := range map[string][]string{
		"persimmon": {"keep.md"}, "feijoa": {"edit.md"}, "blueberry": nil, "soursop": nil, "cherimoya": {"new/added.md"},
	} {
		if got := w.find(text); !slices.Equal(got, want) {
			t.Errorf("after start-up, %q finds %v, want %v", text, got, want)
		}
	}
}

func TestWatchLimitFallsBackToRescans(t *testing.T) {
	t.Parallel() // waits on the watcher, not the CPU
	w := &watched{t: t}
	root := t.TempDir()
	w.dir, w.index = filepath.Join(root, "memory"), filepath.Join(root, "index")
	w.write("a/one.md", watchMemo("One", "guava"))
	w.write("b/two.md", watchMemo("Two", "guava"))
	added := 0
	w.start(WatchOptions{
		RescanEvery: 100 * time.Millisecond,
		addWatch: func(fw *fsnotify.Watcher, dir string) error {
			if added == 1 { // the OS lets us watch the root only
				return fmt.Errorf("inotify_add_watch %s: %w", dir, syscall.ENOSPC)
			}
			added++
			return fw.Add(dir)
		},
	})
	w.finds("guava", "a/one.md", "b/two.md")
	w.mu.Lock()
	logs := strings.Join(w.logs, "\n")
	w.mu.Unlock()
	if !strings.Contains(logs, "fs.inotify.max_user_watches") || !strings.Contains(logs, "sysctl") {
		t.Errorf("no clear message about the watch limit in:\n%s", logs)
	}
	// b/ is not watched: the periodic rescan picks the change up.
	w.write("b/two.md", watchMemo("Two", "longan"))
	w.finds("longan", "b/two.md")
}

// TestWatchBurst writes 500 files into 20 new folders as fast as it can
// (many watcher batches while files keep coming); once the watcher
// settles, the index must equal the files. MNEMO_WATCH_BURST sets the
// count (2000 was the default: the same batches, more of them).
func TestWatchBurst(t *testing.T) {
	t.Parallel() // waits on the watcher, not the CPU
	n := 500
	if testing.Short() {
		n = 300
	}
	if s := os.Getenv("MNEMO_WATCH_BURST"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 20 {
			t.Fatalf("$MNEMO_WATCH_BURST=%q: want a whole number of at least 20", s)
		}
	}
	w := startWatch(t, nil, WatchOptions{})
	token := func(i int) string { // letters only, no vowels: no stemmer touches them
		const cons = "bcdfghjkmnpqrtvwxz"
		b := []byte("qz")
		for range 4 {
			b = append(b, cons[i%len(cons)])
			i /= len(cons)
		}
		return string(b)
	}
	start := time.Now()
	for i := range n {
		w.write(fmt.Sprintf("burst/%02d/f%04d.md", i%20, i), watchMemo(fmt.Sprintf("File %d", i), "burst "+token(i)))
	}
	wrote := time.Since(start)
	w.eventually(fmt.Sprintf("%d files indexed", n), func() bool { return w.files() == n })
	settled := time.Since(start)
	w.mu.Lock()
	batches := w.batches - 1 // less the start-up sync
	w.mu.Unlock()
	t.Logf("%d files written in %s, indexed after %s in %d batches", n, wrote.Round(time.Millisecond), settled.Round(time.Millisecond), batches)
	r := rand.New(rand.NewPCG(1, 2))
	for range 40 {
		i := r.IntN(n)
		want := fmt.Sprintf("burst/%02d/f%04d.md", i%20, i)
		if got := w.find(token(i)); !slices.Equal(got, []string{want}) {
			t.Errorf("%s finds %v, want %s", token(i), got, want)
		}
	}
}

// BenchmarkWatchLatency measures write→searchable through the watcher: the
// time from writing a memory to the end of the batch that indexed it, over
// 200 edits with the default debounce. Run with -benchtime=1x.
func BenchmarkWatchLatency(b *testing.B) {
	const edits = 200
	applied := make(chan Report, 16)
	root := b.TempDir()
	dir := filepath.Join(root, "memory")
	os.MkdirAll(dir, 0o755)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e, err := Open(ctx, Config{MemoryDir: dir, IndexDir: filepath.Join(root, "index")})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	done := make(chan error, 1)
	go func() {
		done <- e.Watch(ctx, WatchOptions{OnBatch: func(r Report) { applied <- r }})
	}()
	<-applied // start-up sync
	var lat, work []time.Duration
	for b.Loop() {
		lat, work = lat[:0], work[:0]
		for i := range edits {
			rel := fmt.Sprintf("edit%d.md", i%10)
			t0 := time.Now()
			os.WriteFile(filepath.Join(dir, rel), []byte(watchMemo("Edit", fmt.Sprintf("edit number %d", i))), 0o644)
			for r := range applied {
				if slices.Contains(r.Added, rel) || slices.Contains(r.Updated, rel) {
					lat = append(lat, time.Since(t0))
					work = append(work, r.Total)
					break
				}
			}
		}
	}
	cancel()
	<-done
	pct := func(d []time.Duration, p float64) float64 {
		slices.Sort(d)
		return float64(d[min(len(d)-1, int(p*float64(len(d))))]) / float64(time.Millisecond)
	}
	b.ReportMetric(pct(lat, 0.50), "p50-ms")
	b.ReportMetric(pct(lat, 0.99), "p99-ms")
	b.ReportMetric(pct(lat, 1), "max-ms")
	b.ReportMetric(pct(work, 0.99), "p99-batch-ms") // of which indexing
}
