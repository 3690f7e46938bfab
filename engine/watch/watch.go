// Package watch is the one loop that keeps a corpus in step with the files
// it reads: fsnotify watches on every folder the corpus reads (folders made
// later included), a debounce per path, batches of the paths that fell due
// together, and rescans of everything as the safety net — at start-up,
// after an overflow or a watcher error, after a failed batch (with
// backoff), periodically if asked, and in place of the watches when the OS
// runs out of them.
//
// It exists so that the memory corpus and the sessions corpus watch the
// same way. A corpus plugs in (Corpus): which folders to watch, what an
// event schedules, what a batch does. The loop knows nothing of what a
// corpus indexes: it must not import engine or engine/sessions, and it
// never reads a file's content.
package watch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Defaults.
const (
	// DefaultDebounce is how long a path must stay quiet before it is
	// looked at again, when Options.Debounce is 0.
	DefaultDebounce = 150 * time.Millisecond
	// FallbackRescan is how often everything is rescanned when not every
	// folder can be watched (the OS watch limit, or no watcher at all) and
	// Options.RescanEvery asks for no rescans.
	FallbackRescan = 30 * time.Second
	// maxBatchPaths: past this many paths, one rescan of everything is
	// cheaper than looking at each path on its own.
	maxBatchPaths = 512
)

// Options tunes Loop.
type Options struct {
	// Debounce is how long a path must stay quiet before it is looked at
	// again; 0 means DefaultDebounce. A path that never goes quiet is still
	// looked at every 8 debounce periods.
	Debounce time.Duration
	// RescanEvery is how often a rescan of everything runs as a safety net;
	// 0 means never (when watching fails, FallbackRescan applies instead).
	RescanEvery time.Duration
	// Log receives one-line records; nil discards them.
	Log func(string)
	// Files names what the corpus reads, and Sync what a batch is, in
	// log lines ("files", "sync"; "transcripts", "sessions sync").
	Files, Sync string
	// AddWatch replaces fsnotify's Add, for tests that simulate the OS
	// limit; nil is fsnotify's.
	AddWatch func(w *fsnotify.Watcher, dir string) error
}

// Job is one batch: the keys to look at again, or, when Rescan says why,
// everything.
type Job struct {
	Keys   []string // sorted
	Rescan string
}

// Corpus is what one corpus plugs into the loop. Keys are the corpus's
// names for paths (a memory path, an absolute transcript path); the loop
// only schedules and batches them. R is what a batch reports.
type Corpus[R any] interface {
	// Key names the event path abs for Run; ok is false for a path the
	// corpus does not read (outside it, hidden, ignored).
	Key(abs string) (key string, ok bool)
	// Rescans reports a path whose change changes what the corpus reads
	// (an ignore file): the loop rescans everything, for reason why.
	Rescans(abs string) (why string, ok bool)
	// Wanted reports whether a change at key, which is not a folder, is
	// worth a look (a memory must end in .md).
	Wanted(key string) bool
	// Folders calls add with the absolute path of each folder at or below
	// key ("" is everything) that the corpus reads, until add returns
	// fs.SkipAll.
	Folders(key string, add func(abs string) error)
	// Run applies one batch. One runs at a time, beside the loop.
	Run(ctx context.Context, j Job) (R, error)
	// Done is told, on the loop, of each batch that succeeded.
	Done(j Job, rep R)
}

// Loop watches for c until ctx is done, then returns nil once the batch in
// flight has been applied or abandoned. The watches are installed before
// the start-up rescan, so changes made while nothing ran are picked up and
// nothing slips in between. An event only says "look at this path again":
// what happened to it is the corpus's to read from the file system.
func Loop[R any](ctx context.Context, c Corpus[R], o Options) error {
	if o.Debounce <= 0 {
		o.Debounce = DefaultDebounce
	}
	if o.Log == nil {
		o.Log = func(string) {}
	}
	if o.AddWatch == nil {
		o.AddWatch = (*fsnotify.Watcher).Add
	}
	l := &loop[R]{c: c, o: o, dirs: map[string]bool{}, pending: map[string]*due{}, rescan: "start-up"}
	var err error
	l.fw, err = fsnotify.NewBufferedWatcher(4096)
	if err != nil {
		l.fallback(fmt.Sprintf("cannot watch %s (%v)", o.Files, err))
	} else {
		defer l.fw.Close()
		l.addTree("")
	}
	return l.run(ctx)
}

// loop is the state of one Loop call; only its goroutine touches it.
type loop[R any] struct {
	c  Corpus[R]
	o  Options
	fw *fsnotify.Watcher // nil when watching is impossible

	dirs    map[string]bool // watched folders, absolute
	pending map[string]*due // keys waiting to be looked at
	limited bool            // not every folder is watched: rescans cover the rest

	rescan   string    // why the next batch must rescan everything; "" if it need not
	rescanAt time.Time // not before this (backoff after an error)
	backoff  time.Duration
}

// due is when a pending key is next looked at.
type due struct {
	first, at time.Time
}

type result[R any] struct {
	job Job
	rep R
	err error
}

// maxWait bounds how long a path that keeps changing waits.
func (l *loop[R]) maxWait() time.Duration { return 8 * l.o.Debounce }

func (l *loop[R]) run(ctx context.Context) error {
	var events <-chan fsnotify.Event
	var errs <-chan error
	if l.fw != nil {
		events, errs = l.fw.Events, l.fw.Errors
	}
	done := make(chan result[R], 1)
	busy := false
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var ticker *time.Ticker
	var tick <-chan time.Time
	defer func() {
		if ticker != nil {
			ticker.Stop()
		}
	}()
	for {
		if ticker == nil {
			if every := l.rescanEvery(); every > 0 {
				ticker = time.NewTicker(every)
				tick = ticker.C
			}
		}
		now := time.Now()
		if !busy && ctx.Err() == nil {
			if j, ok := l.next(now); ok {
				busy = true
				go func() {
					rep, err := l.c.Run(ctx, j)
					done <- result[R]{j, rep, err}
				}()
			}
		}
		if wake, ok := l.wake(); ok && !busy {
			timer.Reset(max(wake.Sub(now), 0))
		} else {
			timer.Stop()
		}
		select {
		case <-ctx.Done():
			if busy {
				<-done
			}
			return nil
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			l.event(ev)
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			l.watchError(err)
		case r := <-done:
			busy = false
			l.finish(ctx, r)
		case <-timer.C:
		case <-tick:
			l.needRescan("periodic")
		}
	}
}

// rescanEvery is the period of safety-net rescans, 0 for none.
func (l *loop[R]) rescanEvery() time.Duration {
	if l.o.RescanEvery > 0 {
		return l.o.RescanEvery
	}
	if l.limited {
		return FallbackRescan
	}
	return 0
}

func (l *loop[R]) needRescan(why string) {
	if l.rescan == "" {
		l.rescan = why
		l.rescanAt = time.Time{}
	}
}

// watchError rescans rather than carry on blind after the watcher lost
// events or failed.
func (l *loop[R]) watchError(err error) {
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		l.needRescan("event queue overflowed")
	} else {
		l.needRescan(fmt.Sprintf("watcher error: %v", err))
	}
	l.o.Log("rescan: " + l.rescan)
}

// next picks the next batch: a rescan if one is due, else every key whose
// quiet time is up. Keys due within a quarter debounce join the batch too,
// so the two halves of a rename travel together.
func (l *loop[R]) next(now time.Time) (Job, bool) {
	if l.rescan != "" && !now.Before(l.rescanAt) {
		j := Job{Rescan: l.rescan}
		l.rescan = ""
		clear(l.pending) // the rescan sees them all
		if l.fw != nil {
			l.addTree("") // folders made during an overflow, or roots made since, were never watched
		}
		return j, true
	}
	horizon := now.Add(l.o.Debounce / 4)
	var keys []string
	for k, d := range l.pending {
		if !d.at.After(horizon) {
			keys = append(keys, k)
			delete(l.pending, k)
		}
	}
	if len(keys) == 0 {
		return Job{}, false
	}
	if len(keys) > maxBatchPaths {
		return Job{Rescan: fmt.Sprintf("%d paths changed", len(keys))}, true
	}
	sort.Strings(keys)
	return Job{Keys: keys}, true
}

// wake is when next could next return a batch.
func (l *loop[R]) wake() (time.Time, bool) {
	var t time.Time
	ok := false
	if l.rescan != "" {
		t, ok = l.rescanAt, true
	}
	for _, d := range l.pending {
		if !ok || d.at.Before(t) {
			t, ok = d.at, true
		}
	}
	return t, ok
}

// finish hands a batch to the corpus, or schedules a retry if it failed.
func (l *loop[R]) finish(ctx context.Context, r result[R]) {
	if ctx.Err() != nil {
		return
	}
	if r.err != nil {
		l.backoff = min(max(2*l.backoff, time.Second), 30*time.Second)
		l.o.Log(fmt.Sprintf("%s failed: %v; rescanning in %s", l.o.Sync, r.err, l.backoff))
		l.rescan, l.rescanAt = "retry after error", time.Now().Add(l.backoff)
		return
	}
	l.backoff = 0
	l.c.Done(r.job, r.rep)
}

// event turns one fsnotify event into work: a new folder is watched and
// looked at, a removed or renamed folder and any wanted path is scheduled.
func (l *loop[R]) event(ev fsnotify.Event) {
	if why, ok := l.c.Rescans(ev.Name); ok {
		l.needRescan(why)
		return
	}
	key, ok := l.c.Key(ev.Name)
	if !ok {
		return
	}
	if ev.Has(fsnotify.Create) {
		// Lstat: a link to a folder is not followed, as the corpus's walk
		// does not follow it (it may lead out of the tree).
		if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
			l.addTree(key)
			l.schedule(key) // files may have landed before the watch did
			return
		}
	}
	if (ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)) && l.dirs[filepath.Clean(ev.Name)] {
		l.unwatch(filepath.Clean(ev.Name))
		l.schedule(key) // what it held leaves the index
		return
	}
	if l.c.Wanted(key) {
		l.schedule(key)
	}
}

func (l *loop[R]) schedule(key string) {
	now := time.Now()
	d := l.pending[key]
	if d == nil {
		d = &due{first: now}
		l.pending[key] = d
	}
	d.at = now.Add(l.o.Debounce)
	if limit := d.first.Add(l.maxWait()); d.at.After(limit) {
		d.at = limit
	}
}

// addTree watches the folders at or below key that the corpus reads.
func (l *loop[R]) addTree(key string) {
	l.c.Folders(key, func(abs string) error {
		abs = filepath.Clean(abs)
		if l.dirs[abs] {
			return nil
		}
		if err := l.o.AddWatch(l.fw, abs); err != nil {
			if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE) {
				l.fallback(limitMessage(err, len(l.dirs)))
				return fs.SkipAll
			}
			return nil
		}
		l.dirs[abs] = true
		return nil
	})
}

// unwatch forgets dir and the folders below it. The kernel drops a removed
// folder's watch itself; a renamed folder's watches would live on under the
// old names, so they are removed here and the new name is watched afresh.
func (l *loop[R]) unwatch(dir string) {
	for d := range l.dirs {
		if d == dir || strings.HasPrefix(d, dir+string(filepath.Separator)) {
			l.fw.Remove(d)
			delete(l.dirs, d)
		}
	}
}

// fallback records that not every folder can be watched: rescans take over.
func (l *loop[R]) fallback(why string) {
	if l.limited {
		return
	}
	l.limited = true
	l.o.Log(why)
}

// limitMessage explains an OS watch limit in one line, with the fix.
func limitMessage(err error, watched int) string {
	every := FallbackRescan
	if errors.Is(err, syscall.ENOSPC) {
		cur := "?"
		if b, err := os.ReadFile("/proc/sys/fs/inotify/max_user_watches"); err == nil {
			cur = strings.TrimSpace(string(b))
		}
		return fmt.Sprintf("watch limit reached after %d folders (fs.inotify.max_user_watches=%s); "+
			"rescanning every %s instead; raise it with: sudo sysctl -w fs.inotify.max_user_watches=524288 "+
			"(add it to /etc/sysctl.d/ to keep it)", watched, cur, every)
	}
	return fmt.Sprintf("too many open files after watching %d folders (%v); rescanning every %s instead; %s",
		watched, err, every, fdLimitHint(runtime.GOOS))
}

// fdLimitHint says how to raise the open-file limit on goos. On macOS the
// watcher (kqueue) holds a descriptor per watched file and folder, and
// launchd's own limit caps what ulimit -n may ask for.
func fdLimitHint(goos string) string {
	if goos == "darwin" {
		return "raise the limit with ulimit -n 65536 in the shell that starts mnemo, and if that is refused, " +
			"the system's with sudo launchctl limit maxfiles 65536 200000 (see launchctl limit maxfiles)"
	}
	return "raise the limit with ulimit -n"
}
