package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// WatchOptions tunes Watch. The zero value is the default.
type WatchOptions struct {
	// Debounce is how long a path must stay quiet before it is re-synced;
	// 0 means 150 ms. A path that never goes quiet is still synced every
	// few debounce periods (see maxWait).
	Debounce time.Duration
	// RescanEvery, if positive, runs an incremental Sync of the whole
	// folder this often as a safety net. When the OS watch limit is hit,
	// rescans are what keep the index fresh, and 0 then means 30 s.
	RescanEvery time.Duration
	// Log receives one-line records: batches that changed something,
	// rescans and why, errors. Nil discards them.
	Log func(string)
	// OnBatch, if set, is called after every batch with its report, the
	// start-up sync and rescans included, whether or not anything changed.
	OnBatch func(Report)

	// addWatch replaces fsnotify's Add in tests that simulate the OS limit.
	addWatch func(w *fsnotify.Watcher, dir string) error
}

const (
	defaultDebounce     = 150 * time.Millisecond
	defaultFallbackScan = 30 * time.Second
	// maxBatchPaths: past this many paths, one scan of the whole folder is
	// cheaper than reconciling each path on its own.
	maxBatchPaths = 512
	// orphanTTL is how long a removed file's read time waits for a file with
	// the same content to appear elsewhere (a move split over two batches).
	orphanTTL = time.Minute
)

// Watch keeps the indexes in step with the memory folder until ctx is done,
// then returns nil once the batch in flight has been applied or abandoned.
//
// It watches every folder below the memory folder (not hidden ones, not the
// index folder), follows folders created later, and re-syncs a path once it
// has been quiet for opts.Debounce. The paths that fall due together are
// applied in one SyncPaths call, so a burst of writes becomes a few batches,
// each one transaction of the state store. An event only says "look at this
// path again": whether it was created, changed, renamed over or removed is
// read from the file system, which makes editors' atomic saves (write a
// temporary file, rename it over the memory) work like any other write.
//
// The watches are installed before a start-up incremental Sync, so changes
// made while nothing ran are picked up and nothing slips in between. When
// the watcher reports an overflow or an error, Watch rescans incrementally
// rather than carry on blind; when the OS watch limit is reached it says so
// (naming the setting to raise) and falls back to periodic rescans.
//
// A read time follows its file when the file is renamed or moved, even when
// the two halves of the move fall into different batches (see followMoves).
func (e *Engine) Watch(ctx context.Context, opts WatchOptions) error {
	if e.cfg.ReadOnly {
		return ErrReadOnly
	}
	if opts.Debounce <= 0 {
		opts.Debounce = defaultDebounce
	}
	if opts.Log == nil {
		opts.Log = func(string) {}
	}
	if opts.addWatch == nil {
		opts.addWatch = (*fsnotify.Watcher).Add
	}
	w := &watcher{
		e:       e,
		opts:    opts,
		dirs:    map[string]bool{},
		pending: map[string]*due{},
		orphans: map[string]orphan{},
		rescan:  "start-up",
	}
	var err error
	w.fw, err = fsnotify.NewBufferedWatcher(4096)
	if err != nil {
		w.fallback(fmt.Sprintf("cannot watch files (%v)", err))
	} else {
		defer w.fw.Close()
		w.addTree("")
	}
	return w.loop(ctx)
}

// watchedEngine is what the watcher asks of the engine, and all it may
// touch: the two syncs, which paths and folders the scan covers, and the
// read times that must follow a moved file.
type watchedEngine interface {
	Sync(ctx context.Context, full bool) (Report, error)
	SyncPaths(ctx context.Context, paths []string) (Report, error)
	// watchRel turns an absolute event path into a memory path; ok is
	// false for paths the scan leaves out.
	watchRel(abs string) (rel string, ok bool)
	// isIgnoreFile reports the vault's .mnemoignore: a change to it
	// changes what is indexed.
	isIgnoreFile(abs string) bool
	// watchFolders calls add for each folder at or below rel that the
	// scan walks, until add returns fs.SkipAll.
	watchFolders(rel string, add func(rel, abs string) error)
	abs(rel string) string

	readsWithin(roots []string) map[string]readMark
	indexedHash(rel string) (string, bool)
	hasRead(rel string) bool
	moveRead(from, to string, t time.Time) error
}

// watcher is the state of one Watch call; only its loop goroutine touches
// it, except orphans, which belong to the one batch running at a time.
type watcher struct {
	e    watchedEngine
	opts WatchOptions
	fw   *fsnotify.Watcher // nil when watching is impossible

	dirs    map[string]bool // watched folders, relative to the root ("" is the root)
	pending map[string]*due // paths waiting to be re-synced
	limited bool            // the OS watch limit was hit: rescans cover what is not watched

	rescan   string    // why the next batch must rescan everything; "" if it need not
	rescanAt time.Time // not before this (backoff after an error)
	backoff  time.Duration

	orphans map[string]orphan // read times of removed files, by content hash
}

// due is when a pending path is next synced.
type due struct {
	first, at time.Time
}

type orphan struct {
	path    string
	read    time.Time
	expires time.Time
}

// watchJob is one batch: the paths to re-sync, or a whole-folder rescan.
type watchJob struct {
	paths  []string
	rescan string // the reason, for a rescan
}

type jobResult struct {
	job watchJob
	rep Report
	err error
}

// maxWait bounds how long a path that keeps changing waits to be synced.
func (w *watcher) maxWait() time.Duration { return 8 * w.opts.Debounce }

func (w *watcher) loop(ctx context.Context) error {
	var events <-chan fsnotify.Event
	var errs <-chan error
	if w.fw != nil {
		events, errs = w.fw.Events, w.fw.Errors
	}
	done := make(chan jobResult, 1)
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
			if every := w.rescanEvery(); every > 0 {
				ticker = time.NewTicker(every)
				tick = ticker.C
			}
		}
		now := time.Now()
		if !busy && ctx.Err() == nil {
			if j, ok := w.next(now); ok {
				busy = true
				go func() {
					rep, err := w.run(ctx, j)
					done <- jobResult{j, rep, err}
				}()
			}
		}
		if wake, ok := w.wake(); ok && !busy {
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
			w.event(ev)
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				w.needRescan("event queue overflowed")
			} else {
				w.needRescan(fmt.Sprintf("watcher error: %v", err))
			}
			w.opts.Log("rescan: " + w.rescan)
		case r := <-done:
			busy = false
			w.finish(ctx, r)
		case <-timer.C:
		case <-tick:
			w.needRescan("periodic")
		}
	}
}

// rescanEvery is the period of safety-net rescans, 0 for none.
func (w *watcher) rescanEvery() time.Duration {
	if w.opts.RescanEvery > 0 {
		return w.opts.RescanEvery
	}
	if w.limited {
		return defaultFallbackScan
	}
	return 0
}

func (w *watcher) needRescan(why string) {
	if w.rescan == "" {
		w.rescan = why
		w.rescanAt = time.Time{}
	}
}

// next picks the next batch: a rescan if one is due, else every path whose
// quiet time is up. Paths due within a quarter debounce join the batch too,
// so the two halves of a rename travel together.
func (w *watcher) next(now time.Time) (watchJob, bool) {
	if w.rescan != "" && !now.Before(w.rescanAt) {
		j := watchJob{rescan: w.rescan}
		w.rescan = ""
		clear(w.pending) // the rescan sees them all
		if w.fw != nil {
			w.addTree("") // folders made during an overflow were never watched
		}
		return j, true
	}
	horizon := now.Add(w.opts.Debounce / 4)
	var paths []string
	for p, d := range w.pending {
		if !d.at.After(horizon) {
			paths = append(paths, p)
			delete(w.pending, p)
		}
	}
	if len(paths) == 0 {
		return watchJob{}, false
	}
	if len(paths) > maxBatchPaths {
		return watchJob{rescan: fmt.Sprintf("%d paths changed", len(paths))}, true
	}
	sort.Strings(paths)
	return watchJob{paths: paths}, true
}

// wake is when next could next return a batch.
func (w *watcher) wake() (time.Time, bool) {
	var t time.Time
	ok := false
	if w.rescan != "" {
		t, ok = w.rescanAt, true
	}
	for _, d := range w.pending {
		if !ok || d.at.Before(t) {
			t, ok = d.at, true
		}
	}
	return t, ok
}

// run applies one batch. It runs beside the loop, one at a time.
func (w *watcher) run(ctx context.Context, j watchJob) (Report, error) {
	before := w.e.readsWithin(j.paths)
	var rep Report
	var err error
	if j.rescan != "" {
		rep, err = w.e.Sync(ctx, false)
	} else {
		rep, err = w.e.SyncPaths(ctx, j.paths)
	}
	if err != nil {
		return rep, err
	}
	return rep, w.adoptOrphans(before, rep)
}

// finish logs a batch and schedules a retry if it failed.
func (w *watcher) finish(ctx context.Context, r jobResult) {
	if ctx.Err() != nil {
		return
	}
	if r.err != nil {
		w.backoff = min(max(2*w.backoff, time.Second), 30*time.Second)
		w.opts.Log(fmt.Sprintf("sync failed: %v; rescanning in %s", r.err, w.backoff))
		w.rescan, w.rescanAt = "retry after error", time.Now().Add(w.backoff)
		return
	}
	w.backoff = 0
	rep := r.rep
	changed := len(rep.Added) + len(rep.Updated) + len(rep.Removed) + len(rep.Skipped)
	switch {
	case r.job.rescan != "":
		w.opts.Log(fmt.Sprintf("%s sync%s %s", r.job.rescan, fullMark(rep), reportLine(rep)))
	case changed > 0:
		w.opts.Log("sync " + reportLine(rep))
	}
	if w.opts.OnBatch != nil {
		w.opts.OnBatch(rep)
	}
}

func fullMark(r Report) string {
	if r.Rebuilt != "" {
		return " (full rebuild: " + r.Rebuilt + ")"
	}
	if r.Full {
		return " (full rebuild)"
	}
	return ""
}

// reportLine is a batch in one line: "added=3 updated=1 removed=0 skipped=0 in 12ms".
func reportLine(r Report) string {
	return fmt.Sprintf("added=%d updated=%d removed=%d skipped=%d in %dms",
		len(r.Added), len(r.Updated), len(r.Removed), len(r.Skipped), r.Total.Milliseconds())
}

// event turns one fsnotify event into work: a new folder is watched and
// scanned, a removed or renamed folder and any .md path is scheduled.
func (w *watcher) event(ev fsnotify.Event) {
	if w.e.isIgnoreFile(ev.Name) {
		w.needRescan(ignoreFile + " changed")
		return
	}
	rel, ok := w.e.watchRel(ev.Name)
	if !ok {
		return
	}
	if ev.Has(fsnotify.Create) {
		if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
			w.addTree(rel)
			w.schedule(rel) // files may have landed before the watch did
			return
		}
	}
	if (ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)) && w.dirs[rel] {
		w.unwatch(rel)
		w.schedule(rel) // its memories leave the index
		return
	}
	if isMemoryName(rel) {
		w.schedule(rel)
	}
}

func (w *watcher) schedule(rel string) {
	now := time.Now()
	d := w.pending[rel]
	if d == nil {
		d = &due{first: now}
		w.pending[rel] = d
	}
	d.at = now.Add(w.opts.Debounce)
	if limit := d.first.Add(w.maxWait()); d.at.After(limit) {
		d.at = limit
	}
}

// addTree watches rel and every folder below it that a sync would scan.
func (w *watcher) addTree(rel string) {
	w.e.watchFolders(rel, func(r, abs string) error {
		if w.dirs[r] {
			return nil
		}
		if err := w.opts.addWatch(w.fw, abs); err != nil {
			if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE) {
				w.fallback(limitMessage(err, len(w.dirs)))
				return fs.SkipAll
			}
			return nil
		}
		w.dirs[r] = true
		return nil
	})
}

// unwatch forgets rel and the folders below it. The kernel drops a removed
// folder's watch itself; a renamed folder's watches would live on under the
// old names, so they are removed here and the new name is watched afresh.
func (w *watcher) unwatch(rel string) {
	for d := range w.dirs {
		if inFolder(d, rel) {
			w.fw.Remove(w.e.abs(d))
			delete(w.dirs, d)
		}
	}
}

// fallback records that not every folder can be watched: rescans take over.
func (w *watcher) fallback(why string) {
	if w.limited {
		return
	}
	w.limited = true
	w.opts.Log(why)
}

// limitMessage explains an OS watch limit in one line, with the fix.
func limitMessage(err error, watched int) string {
	every := defaultFallbackScan
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

// adoptOrphans covers a move whose halves land in different batches with
// the new path last: a removed file's read time that the engine could not
// place waits orphanTTL for a file with the same content to be added.
func (w *watcher) adoptOrphans(before map[string]readMark, rep Report) error {
	now := time.Now()
	for h, o := range w.orphans {
		if now.After(o.expires) {
			delete(w.orphans, h)
		}
	}
	type move struct {
		from, to string
		read     time.Time
	}
	var moves []move
	for _, p := range rep.Added {
		hash, ok := w.e.indexedHash(p)
		if !ok {
			continue
		}
		if o, ok := w.orphans[hash]; ok {
			moves = append(moves, move{o.path, p, o.read})
			delete(w.orphans, hash)
		}
	}
	for _, p := range rep.Removed {
		if m, ok := before[p]; ok && w.e.hasRead(p) {
			w.orphans[m.hash] = orphan{path: p, read: m.read, expires: now.Add(orphanTTL)}
		}
	}
	for _, m := range moves {
		if err := w.e.moveRead(m.from, m.to, m.read); err != nil {
			return err
		}
	}
	return nil
}
