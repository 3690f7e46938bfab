package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/fsnotify/fsnotify"
)

// SessionsWatchOptions tunes Sessions.Watch. The zero value is the default.
type SessionsWatchOptions struct {
	// Debounce is how long a transcript must stay quiet before it is read;
	// 0 means 150 ms. One that never goes quiet (an agent mid-reply) is
	// still read every 8 debounce periods.
	Debounce time.Duration
	// RescanEvery is how often an incremental Sync of every source runs as a
	// safety net, and to pick up a source root that did not exist at start
	// (an agent installed later); 0 means 30 s.
	RescanEvery time.Duration
	// Log receives one-line records of batches that changed something,
	// rescans and errors. Nil discards them.
	Log func(string)
	// OnBatch, if set, is called after every batch with its report.
	OnBatch func(SessionsReport)
}

// Watch keeps the sessions index in step with the transcript roots until
// ctx is done. It watches every folder below each root (new project and
// day folders are watched as they appear), installs the watches before a
// start-up Sync so nothing slips in between, and reads a transcript once
// it has been quiet for the debounce period, from its stored cursor.
// Overflows, watcher errors and failed batches lead to a rescan.
func (s *Sessions) Watch(ctx context.Context, opts SessionsWatchOptions) error {
	if s.cfg.ReadOnly {
		return ErrReadOnly
	}
	if opts.Debounce <= 0 {
		opts.Debounce = defaultDebounce
	}
	if opts.RescanEvery <= 0 {
		opts.RescanEvery = defaultFallbackScan
	}
	if opts.Log == nil {
		opts.Log = func(string) {}
	}
	fw, err := fsnotify.NewBufferedWatcher(4096)
	if err != nil {
		opts.Log(fmt.Sprintf("sessions: cannot watch transcripts (%v); rescanning every %s", err, opts.RescanEvery))
	} else {
		defer fw.Close()
	}
	w := &sessionsWatcher{s: s, opts: opts, fw: fw, watched: map[string]bool{}, pending: map[string]*due{}}
	w.addRoots()
	w.batch(ctx, "start-up", nil)
	var events <-chan fsnotify.Event
	var errs <-chan error
	if fw != nil {
		events, errs = fw.Events, fw.Errors
	}
	ticker := time.NewTicker(opts.RescanEvery)
	defer ticker.Stop()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		if at, ok := w.wake(); ok {
			timer.Reset(max(time.Until(at), 0))
		} else {
			timer.Stop()
		}
		select {
		case <-ctx.Done():
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
			why := fmt.Sprintf("watcher error: %v", err)
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				why = "event queue overflowed"
			}
			clear(w.pending)
			w.addRoots()
			w.batch(ctx, why, nil)
		case <-ticker.C:
			w.addRoots()
			w.batch(ctx, "periodic", nil)
		case <-timer.C:
			now := time.Now()
			var paths []string
			for p, d := range w.pending {
				if !d.at.After(now.Add(w.opts.Debounce / 4)) {
					paths = append(paths, p)
					delete(w.pending, p)
				}
			}
			if len(paths) > 0 {
				sort.Strings(paths)
				w.batch(ctx, "", paths)
			}
		}
	}
}

type sessionsWatcher struct {
	s       *Sessions
	opts    SessionsWatchOptions
	fw      *fsnotify.Watcher
	watched map[string]bool
	pending map[string]*due
}

// addRoots watches every folder below every source root that exists.
func (w *sessionsWatcher) addRoots() {
	if w.fw == nil {
		return
	}
	for _, src := range w.s.cfg.Sources {
		w.addTree(src.Root())
	}
}

// addTree watches dir and the folders below it that some source owns (a
// source whose root is the home folder, Aider's, owns only a few levels of
// it, not all).
func (w *sessionsWatcher) addTree(dir string) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if !w.owned(p) {
			return filepath.SkipDir
		}
		if w.watched[p] {
			return nil
		}
		if err := w.fw.Add(p); err != nil {
			w.opts.Log(fmt.Sprintf("sessions: cannot watch %s: %v (the periodic rescan covers it)", p, err))
			return filepath.SkipDir
		}
		w.watched[p] = true
		return nil
	})
}

// owned reports whether some source's root is dir or owns it.
func (w *sessionsWatcher) owned(dir string) bool {
	for _, src := range w.s.cfg.Sources {
		if dir == src.Root() || inAnyFolder(dir, []string{src.Root()}) && src.Owns(dir) {
			return true
		}
	}
	return false
}

func (w *sessionsWatcher) event(ev fsnotify.Event) {
	p := filepath.Clean(ev.Name)
	if ev.Has(fsnotify.Create) {
		// Lstat: a link to a folder is not followed, as Discover does not
		// follow it (it may lead out of the tree).
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
			w.addTree(p) // a new project or day folder: files may already be inside
		}
	}
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		if w.watched[p] {
			delete(w.watched, p)
		}
	}
	now := time.Now()
	if d := w.pending[p]; d != nil {
		d.at = minTime(now.Add(w.opts.Debounce), d.first.Add(8*w.opts.Debounce))
		return
	}
	w.pending[p] = &due{first: now, at: now.Add(w.opts.Debounce)}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func (w *sessionsWatcher) wake() (time.Time, bool) {
	var t time.Time
	ok := false
	for _, d := range w.pending {
		if !ok || d.at.Before(t) {
			t, ok = d.at, true
		}
	}
	return t, ok
}

// batch syncs paths, or every source when paths is nil, and logs it.
func (w *sessionsWatcher) batch(ctx context.Context, why string, paths []string) {
	var rep SessionsReport
	var err error
	if paths == nil {
		rep, err = w.s.Sync(ctx, false)
	} else {
		rep, err = w.s.SyncPaths(ctx, paths)
	}
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		w.opts.Log(fmt.Sprintf("sessions sync failed: %v; the next rescan retries", err))
		return
	}
	changed := rep.Added + rep.Updated + rep.Reset + rep.Removed + rep.Archived + rep.Restored
	if why != "" && why != "periodic" || changed > 0 {
		label := "sessions sync"
		if why != "" {
			label = why + " " + label
		}
		w.opts.Log(fmt.Sprintf("%s: %d added, %d updated, %d re-read, %d archived, %d restored, %d removed; %d messages in %s",
			label, rep.Added, rep.Updated, rep.Reset, rep.Archived, rep.Restored, rep.Removed, rep.Messages, rep.Total.Round(time.Millisecond)))
	}
	if w.opts.OnBatch != nil {
		w.opts.OnBatch(rep)
	}
}
