package sessions

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"mnemo/engine/store"
	"mnemo/engine/vault"
	"mnemo/engine/watch"
)

// RescanEvery is the period of the sessions watcher's safety-net
// rescan that mnemo serve asks for: besides catching what events missed,
// a rescan is what finds a source root that did not exist at start (an
// agent installed later).
const RescanEvery = 30 * time.Second

// WatchOptions tunes Corpus.Watch. The zero value is the default.
type WatchOptions struct {
	// Debounce is how long a transcript must stay quiet before it is read;
	// 0 means watch.DefaultDebounce. One that never goes quiet (an agent
	// mid-reply) is still read every 8 debounce periods.
	Debounce time.Duration
	// RescanEvery is how often an incremental Sync of every source runs as
	// a safety net, and to pick up a source root that did not exist at
	// start; 0 means never, as for memories (RescanEvery is what
	// serve asks for). When not every folder can be watched, 0 means
	// watch.FallbackRescan.
	RescanEvery time.Duration
	// Log receives one-line records of batches that changed something,
	// rescans and errors. Nil discards them.
	Log func(string)
	// OnBatch, if set, is called after every batch with its report.
	OnBatch func(Report)
}

// Watch keeps the sessions index in step with the transcript roots until
// ctx is done. It watches every folder below each root (new project and
// day folders are watched as they appear), installs the watches before a
// start-up Sync so nothing slips in between, and reads a transcript once
// it has been quiet for the debounce period, from its stored cursor.
// Overflows, watcher errors and failed batches lead to a rescan.
func (s *Corpus) Watch(ctx context.Context, opts WatchOptions) error {
	if s.cfg.ReadOnly {
		return store.ErrReadOnly
	}
	return watch.Loop(ctx, &sessionsCorpus{s: s, opts: opts}, watch.Options{
		Debounce: opts.Debounce, RescanEvery: opts.RescanEvery, Log: opts.Log,
		Files: "transcripts", Sync: "sessions sync",
	})
}

// sessionsCorpus is the transcript roots as the watch loop sees them: keys
// are absolute paths, a batch is a SyncPaths (a rescan a Sync).
type sessionsCorpus struct {
	s    *Corpus
	opts WatchOptions
}

func (c *sessionsCorpus) Key(abs string) (string, bool) { return filepath.Clean(abs), true }
func (c *sessionsCorpus) Rescans(string) (string, bool) { return "", false }
func (c *sessionsCorpus) Wanted(string) bool            { return true }

// Folders walks dir ("" is every source root that exists) and the folders
// below it that some source owns (a source whose root is the home folder,
// Aider's, owns only a few levels of it, not all).
func (c *sessionsCorpus) Folders(dir string, add func(abs string) error) {
	roots := []string{dir}
	if dir == "" {
		roots = roots[:0]
		for _, src := range c.s.cfg.Sources {
			roots = append(roots, src.Root())
		}
	}
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			if !c.owned(p) {
				return filepath.SkipDir
			}
			return add(p)
		})
		if err == fs.SkipAll {
			return
		}
	}
}

// owned reports whether some source's root is dir or owns it.
func (c *sessionsCorpus) owned(dir string) bool {
	for _, src := range c.s.cfg.Sources {
		if dir == src.Root() || vault.InAnyFolder(dir, []string{src.Root()}) && src.Owns(dir) {
			return true
		}
	}
	return false
}

// Run reads the transcripts of one batch, or every source for a rescan.
func (c *sessionsCorpus) Run(ctx context.Context, j watch.Job) (Report, error) {
	if j.Rescan != "" {
		return c.s.Sync(ctx, false)
	}
	return c.s.SyncPaths(ctx, j.Keys)
}

// Done logs a batch that changed something, and every rescan but the
// periodic ones.
func (c *sessionsCorpus) Done(j watch.Job, rep Report) {
	changed := rep.Added + rep.Updated + rep.Reset + rep.Removed + rep.Archived + rep.Restored
	if c.opts.Log != nil && (j.Rescan != "" && j.Rescan != "periodic" || changed > 0) {
		label := "sessions sync"
		if j.Rescan != "" {
			label = j.Rescan + " " + label
		}
		c.opts.Log(fmt.Sprintf("%s: %d added, %d updated, %d re-read, %d archived, %d restored, %d removed; %d messages in %s",
			label, rep.Added, rep.Updated, rep.Reset, rep.Archived, rep.Restored, rep.Removed, rep.Messages, rep.Total.Round(time.Millisecond)))
	}
	if c.opts.OnBatch != nil {
		c.opts.OnBatch(rep)
	}
}
