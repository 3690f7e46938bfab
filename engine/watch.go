package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/fsnotify/fsnotify"

	"mnemo/engine/vault"
	"mnemo/engine/watch"
)

// WatchOptions tunes Watch. The zero value is the default.
type WatchOptions struct {
	// Debounce is how long a path must stay quiet before it is re-synced;
	// 0 means watch.DefaultDebounce. A path that never goes quiet is still
	// synced every 8 debounce periods.
	Debounce time.Duration
	// RescanEvery is how often an incremental Sync of the whole folder
	// runs as a safety net; 0 means never, as for sessions (the events are
	// trusted). When the OS watch limit is hit, rescans are what keep the
	// index fresh, and 0 then means watch.FallbackRescan.
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

// orphanTTL is how long a removed file's read time waits for a file with
// the same content to appear elsewhere (a move split over two batches).
const orphanTTL = time.Minute

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
	c := &memoryCorpus{e: e, opts: opts, orphans: map[string]orphan{}}
	return watch.Loop(ctx, c, watch.Options{
		Debounce: opts.Debounce, RescanEvery: opts.RescanEvery, Log: opts.Log,
		Files: "files", Sync: "sync", AddWatch: opts.addWatch,
	})
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

	readsWithin(roots []string) map[string]readMark
	indexedHash(rel string) (string, bool)
	hasRead(rel string) bool
	moveRead(from, to string, t time.Time) error
}

// memoryCorpus is the memory folder as the watch loop sees it: keys are
// memory paths, a batch is a SyncPaths (a rescan a Sync), and read times
// follow moved files. orphans belong to the one batch running at a time.
type memoryCorpus struct {
	e       watchedEngine
	opts    WatchOptions
	orphans map[string]orphan // read times of removed files, by content hash
}

type orphan struct {
	path    string
	read    time.Time
	expires time.Time
}

func (c *memoryCorpus) Key(abs string) (string, bool) { return c.e.watchRel(abs) }

func (c *memoryCorpus) Rescans(abs string) (string, bool) {
	return vault.IgnoreFile + " changed", c.e.isIgnoreFile(abs)
}

func (c *memoryCorpus) Wanted(rel string) bool { return vault.IsMemoryName(rel) }

func (c *memoryCorpus) Folders(rel string, add func(abs string) error) {
	c.e.watchFolders(rel, func(_, abs string) error { return add(abs) })
}

// Run applies one batch.
func (c *memoryCorpus) Run(ctx context.Context, j watch.Job) (Report, error) {
	before := c.e.readsWithin(j.Keys)
	var rep Report
	var err error
	if j.Rescan != "" {
		rep, err = c.e.Sync(ctx, false)
	} else {
		rep, err = c.e.SyncPaths(ctx, j.Keys)
	}
	if err != nil {
		return rep, err
	}
	return rep, c.adoptOrphans(before, rep)
}

// Done logs a batch that changed something, and every rescan.
func (c *memoryCorpus) Done(j watch.Job, rep Report) {
	log := c.opts.Log
	if log == nil {
		log = func(string) {}
	}
	changed := len(rep.Added) + len(rep.Updated) + len(rep.Removed) + len(rep.Skipped)
	switch {
	case j.Rescan != "":
		log(fmt.Sprintf("%s sync%s %s", j.Rescan, fullMark(rep), reportLine(rep)))
	case changed > 0:
		log("sync " + reportLine(rep))
	}
	if c.opts.OnBatch != nil {
		c.opts.OnBatch(rep)
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

// adoptOrphans covers a move whose halves land in different batches with
// the new path last: a removed file's read time that the engine could not
// place waits orphanTTL for a file with the same content to be added.
func (c *memoryCorpus) adoptOrphans(before map[string]readMark, rep Report) error {
	now := time.Now()
	for h, o := range c.orphans {
		if now.After(o.expires) {
			delete(c.orphans, h)
		}
	}
	type move struct {
		from, to string
		read     time.Time
	}
	var moves []move
	for _, p := range rep.Added {
		hash, ok := c.e.indexedHash(p)
		if !ok {
			continue
		}
		if o, ok := c.orphans[hash]; ok {
			moves = append(moves, move{o.path, p, o.read})
			delete(c.orphans, hash)
		}
	}
	for _, p := range rep.Removed {
		if m, ok := before[p]; ok && c.e.hasRead(p) {
			c.orphans[m.hash] = orphan{path: p, read: m.read, expires: now.Add(orphanTTL)}
		}
	}
	for _, m := range moves {
		if err := c.e.moveRead(m.from, m.to, m.read); err != nil {
			return err
		}
	}
	return nil
}

// watchRel, isIgnoreFile and watchFolders are the vault's answers (see
// vault.WatchRel and its neighbours), named in watchedEngine so that the
// watcher's tests can stand in for the engine.
func (e *Engine) watchRel(abs string) (string, bool) { return e.vault.WatchRel(abs) }

func (e *Engine) isIgnoreFile(abs string) bool { return e.vault.IsIgnoreFile(abs) }

func (e *Engine) watchFolders(rel string, add func(rel, abs string) error) {
	e.vault.WatchFolders(rel, add)
}
