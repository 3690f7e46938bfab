package sessions

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"mnemo/engine/fulltext"
	"mnemo/engine/gcpace"
	"mnemo/engine/store"
	"mnemo/engine/transcript"
	"mnemo/engine/vault"
	"mnemo/engine/vectors"
)

// batchMessages bounds what one sessions batch applies at once, one Bleve
// batch and one state-store transaction: a batch is applied once it holds
// this many messages, and a transcript that delivers more is committed in
// slices of this many.
const batchMessages = 4096

// syncMemoryBudget is the memory the Go runtime may hold before it
// collects, through a sync that reads every transcript (a first, full or
// unfinished one; engine/gcpace). At 100k messages the live heap stays
// near 120 MB: Go's default pacing (a collection whenever the heap
// doubles) ran 42 collections. BenchmarkSessionsSync at 100k, alternated
// with GOGC=off GOMEMLIMIT=384MiB on a loaded machine: CPU 21.2 → 18.1 s,
// peak RSS 326 → 434 MiB (the target is 500 MB). At 1M the live heap is
// larger and the limit follows it (twice the live heap, after every
// batch); a runtime under a limit also gives memory back sooner (one
// pair at 1M: peak RSS 923 → 815 MiB, CPU 195 → 184 s).
const syncMemoryBudget = 384 << 20

// slicedHeapGrowth is how far a sessions sync's memory limit follows a
// live heap above the budget once it reads a transcript in slices:
// one and a half times it (gcpace.Tighten), not twice. Such a read holds
// the reader's pass over the whole transcript beside the batches. One
// transcript of 1M messages (docs/benchmarks.md): peak RSS 1,124 → 870
// MiB, CPU +3 %; the same limit for 5,000 sessions of 200 cost 10 % of
// their sync's CPU (they are never sliced, and keep twice).
const slicedHeapGrowth = 1

// embedBatch is how many texts go to the embedder in one call.
const embedBatch = 256

// Report says what a sessions Sync did.
type Report struct {
	Full      bool          `json:"full"`
	Rebuilt   string        `json:"rebuilt,omitempty"`
	Added     int           `json:"added"`    // sessions new to the index
	Updated   int           `json:"updated"`  // sessions with new or changed messages
	Reset     int           `json:"reset"`    // sessions re-indexed whole (rewritten or rewound transcripts)
	Removed   int           `json:"removed"`  // sessions that left the index (MirrorDeleted: their transcript is gone)
	Archived  int           `json:"archived"` // sessions whose transcript is gone, kept
	Restored  int           `json:"restored"` // archived sessions whose transcript is back
	Unchanged int           `json:"unchanged"`
	Messages  int           `json:"messages"` // messages indexed by this sync
	Malformed int           `json:"malformedLines"`
	Skipped   []store.Skip  `json:"skipped"` // transcripts not indexed, and why
	Total     time.Duration `json:"totalNs"`
}

// job is one transcript to read.
type sessionJob struct {
	src  Source
	key  string
	path string
}

// Sync brings the index in step with every source: new transcripts are
// read, grown ones read from their cursor, rewritten ones re-read whole,
// and the sessions of deleted transcripts (or of sources no longer
// configured) removed. With full, or when the index must be rebuilt,
// everything is read from scratch.
func (s *Corpus) Sync(ctx context.Context, full bool) (rep Report, err error) {
	if s.cfg.ReadOnly {
		return Report{}, store.ErrReadOnly
	}
	defer func() { s.noteError(err) }()
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	s.indexing.Store(true)
	defer s.indexing.Store(false)
	start := time.Now()
	rep = Report{Skipped: []store.Skip{}}
	pace, err := s.prepare(ctx, start, full, &rep)
	defer pace.Stop()
	if err != nil {
		return rep, err
	}
	l, err := s.discover(ctx, &rep)
	if err != nil {
		return rep, err
	}
	err = s.run(ctx, l.jobs, s.goneFrom(l), l.skips, pace, &rep)
	s.mu.Lock()
	for k, v := range l.skips { // with the transcripts found unreadable
		s.skips[k] = v
	}
	s.mu.Unlock()
	if err != nil {
		return rep, err
	}
	now := time.Now().UTC()
	mark := s.partialMark()
	if err := s.st.setMeta(map[string]string{
		"schema": strconv.Itoa(sessionsSchema), "embedder": s.emb.Name(), "dim": strconv.Itoa(s.dim), "lastSync": now.Format(time.RFC3339Nano),
		store.MetaUnfinished: mark, metaSessionsFormat: sessionsFormat,
	}); err != nil {
		return rep, fmt.Errorf("record sessions sync: %w", err)
	}
	s.mu.Lock()
	s.lastSync, s.needFull, s.unfinished = now, "", mark
	s.mu.Unlock()
	rep.Total = time.Since(start)
	if err := s.pruneCopies(); err != nil {
		return rep, fmt.Errorf("sessions synced, but %w", err)
	}
	return rep, nil
}

// prepare is a sync's first stage: the unfinished mark for a first or full
// sync, and for a full one (asked for, or needed) the reset, with the
// archived sessions indexed again from the store.
func (s *Corpus) prepare(ctx context.Context, start time.Time, full bool, rep *Report) (*gcpace.Pacer, error) {
	s.mu.RLock()
	why := s.needFull
	first := s.lastSync.IsZero() || s.unfinished != ""
	s.mu.RUnlock()
	if err := s.damaged(); why == "" && err != nil {
		why = store.DamageDetail(err)
	}
	var pace *gcpace.Pacer
	if full || why != "" || first {
		if err := s.markUnfinished(start); err != nil {
			return nil, err
		}
		pace = gcpace.Start(syncMemoryBudget, 2) // everything is read: see syncMemoryBudget
	}
	if !full && why == "" {
		return pace, nil
	}
	rep.Full, rep.Rebuilt = true, why
	if err := s.reset(); err != nil {
		return pace, err
	}
	return pace, s.restoreArchived(ctx)
}

// listing is what a sync's listing of every source found.
type listing struct {
	jobs       []sessionJob
	found      map[string]bool // transcript paths listed
	discovered map[string]bool // sources whose listing is complete
	skips      map[string][]store.Skip
}

// discover lists every source's transcripts, and records in memory what
// each skipped and which failed.
func (s *Corpus) discover(ctx context.Context, rep *Report) (listing, error) {
	l := listing{found: map[string]bool{}, discovered: map[string]bool{}, skips: map[string][]store.Skip{}}
	srcErrs := map[string]string{}
	for _, src := range s.cfg.Sources {
		key := sourceKey(src.Kind(), src.Root())
		paths, sk, err := src.Discover(ctx)
		if ctx.Err() != nil {
			return l, ctx.Err()
		}
		if err != nil {
			srcErrs[key] = err.Error()
			rep.Skipped = append(rep.Skipped, store.Skip{Path: src.Root(), Reason: "source " + src.Kind() + ": " + err.Error()})
			continue
		}
		l.discovered[key] = true
		l.skips[key] = append([]store.Skip{}, sk...)
		rep.Skipped = append(rep.Skipped, sk...)
		for _, p := range paths {
			if !l.found[p] {
				l.found[p] = true
				l.jobs = append(l.jobs, sessionJob{src: src, key: key, path: p})
			}
		}
	}
	s.mu.Lock()
	s.srcErrs = srcErrs
	for k, v := range l.skips {
		s.skips[k] = v
	}
	s.mu.Unlock()
	return l, nil
}

// goneFrom lists the sessions whose transcript the listing no longer has
// (or whose source is no longer configured): dispose archives or removes them.
func (s *Corpus) goneFrom(l listing) []uint32 {
	configured := map[string]bool{}
	for _, src := range s.cfg.Sources {
		configured[sourceKey(src.Kind(), src.Root())] = true
	}
	var gone []uint32
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, ss := range s.sessions {
		missing := !configured[ss.Source] || (l.discovered[ss.Source] && !l.found[ss.Path])
		// Mirroring, an archive kept from before goes too, unless its
		// transcript is back (then it is read, and restored).
		detached := s.cfg.MirrorDeleted && ss.archived() && s.byPath[ss.Path] != ss
		if missing || detached {
			gone = append(gone, ss.SID)
		}
	}
	return gone
}

// markUnfinished records, before a first or full sync writes anything, that
// the index is about to hold part of the transcripts (store.MarkUnfinished);
// a completed Sync clears it.
func (s *Corpus) markUnfinished(start time.Time) error {
	v, err := store.MarkUnfinished(s.st.db, "sessions sync", start)
	if err != nil {
		return fmt.Errorf("sessions state store: %w", err)
	}
	s.mu.Lock()
	s.unfinished = v
	s.mu.Unlock()
	return nil
}

// SyncPaths brings the given transcript paths (files or folders, existing
// or not) up to date and nothing else; the watcher calls it. A path no
// source owns is ignored. A path that is not a regular file or a folder (a
// link, a FIFO, a device) is never read: its folder is reconciled instead,
// through the source's listing, so the watcher reads exactly what a sync
// would and status names what it left out, as after a sync.
func (s *Corpus) SyncPaths(ctx context.Context, paths []string) (rep Report, err error) {
	if s.cfg.ReadOnly {
		return Report{}, store.ErrReadOnly
	}
	s.mu.RLock()
	why := s.needFull
	s.mu.RUnlock()
	if why != "" || s.damaged() != nil {
		return s.Sync(ctx, true) // a path-wise update cannot repair a stale index
	}
	defer func() { s.noteError(err) }()
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	start := time.Now()
	rep = Report{Skipped: []store.Skip{}}
	w := s.pathWork(ctx, paths)
	skips := s.pathSkips(w.listed, w.reread, w.seen)
	err = s.run(ctx, w.jobs, s.notRead(w.gone, w.seen), skips, nil, &rep)
	s.mu.Lock()
	for k, v := range skips { // with the transcripts found unreadable
		s.skips[k] = v
	}
	s.mu.Unlock()
	if err != nil {
		return rep, err
	}
	rep.Total = time.Since(start)
	if rep.Archived+rep.Removed > 0 { // a container may be gone
		if err := s.pruneCopies(); err != nil {
			return rep, fmt.Errorf("sessions synced, but %w", err)
		}
	}
	return rep, nil
}

// pathWork is what a path-wise sync found to do for the paths it was given.
type pathWork struct {
	jobs   []sessionJob
	gone   []uint32                 // sessions whose transcripts are no longer listed
	seen   map[string]bool          // the paths with a job
	listed map[string]sourceListing // sources listed whole
	reread map[string][]string      // other sources: the files read again
}

// pathWork finds, for each changed path, the transcripts to read: a
// regular file its source owns is read again; anything else (a folder
// appeared, something vanished, something that is not a regular file
// appeared, a file of a transcript folder changed) lists the source and
// reconciles what lies under that folder.
func (s *Corpus) pathWork(ctx context.Context, paths []string) pathWork {
	w := pathWork{seen: map[string]bool{}, listed: map[string]sourceListing{}, reread: map[string][]string{}}
	for _, p := range paths {
		p = filepath.Clean(p)
		// Lstat: a link is looked at as a link, never followed.
		fi, statErr := os.Lstat(p)
		isFile := statErr == nil && fi.Mode().IsRegular()
		for _, src := range s.cfg.Sources {
			if p != src.Root() && !vault.InAnyFolder(p, []string{src.Root()}) {
				continue
			}
			key := sourceKey(src.Kind(), src.Root())
			if isFile && src.Owns(p) {
				if !w.seen[p] {
					w.seen[p] = true
					w.jobs = append(w.jobs, sessionJob{src: src, key: key, path: p})
					w.reread[key] = append(w.reread[key], p)
				}
				continue
			}
			dir := p
			if statErr == nil && !fi.IsDir() {
				dir = filepath.Dir(p)
			}
			s.reconcileUnder(ctx, src, key, dir, &w)
		}
	}
	return w
}

// reconcileUnder lists src and adds to w a job for every transcript under
// dir, and as gone every session of src under dir it no longer lists.
func (s *Corpus) reconcileUnder(ctx context.Context, src Source, key, dir string, w *pathWork) {
	all, sk, err := src.Discover(ctx)
	if err != nil {
		return
	}
	w.listed[key] = sourceListing{paths: all, skips: sk}
	inside := func(p string) bool { return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)) }
	in := map[string]bool{}
	for _, l := range all {
		if inside(l) {
			in[l] = true
			if !w.seen[l] {
				w.seen[l] = true
				w.jobs = append(w.jobs, sessionJob{src: src, key: key, path: l})
			}
		}
	}
	s.mu.RLock()
	for _, ss := range s.sessions {
		if ss.Source == key && !in[ss.Path] && inside(ss.Path) {
			w.gone = append(w.gone, ss.SID)
		}
	}
	s.mu.RUnlock()
}

// sourceListing is one source's Discover.
type sourceListing struct {
	paths []string
	skips []store.Skip
}

// pathSkips is what a SyncPaths batch leaves each source it touched
// skipping: a source listed whole skips what its listing says, and keeps
// the read failures of listed transcripts not read in this batch; another
// keeps what it skipped before, less the files read again. A read that
// fails in the batch names its file again.
func (s *Corpus) pathSkips(listed map[string]sourceListing, reread map[string][]string, read map[string]bool) map[string][]store.Skip {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := map[string][]store.Skip{}
	for key, l := range listed {
		still := map[string]bool{}
		for _, p := range l.paths {
			still[p] = !read[p]
		}
		out[key] = append([]store.Skip{}, l.skips...)
		for _, k := range s.skips[key] {
			if still[k.Path] {
				out[key] = append(out[key], k)
			}
		}
	}
	for key, paths := range reread {
		if _, ok := listed[key]; ok {
			continue
		}
		again := map[string]bool{}
		for _, p := range paths {
			again[p] = true
		}
		kept := []store.Skip{}
		for _, k := range s.skips[key] {
			if !again[k.Path] {
				kept = append(kept, k)
			}
		}
		out[key] = kept
	}
	return out
}

// notRead drops from gone, once each, every session whose transcript is
// also read in the same batch. A folder's listing can miss a file that an
// event on the file itself shows is there (a listing taken while the file
// was being replaced, or refused by a file rule for a moment): removing the
// session and then applying the read from its cursor would leave only the
// messages after the cursor.
func (s *Corpus) notRead(gone []uint32, read map[string]bool) []uint32 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	seen := map[uint32]bool{}
	out := gone[:0]
	for _, sid := range gone {
		ss := s.sessions[sid]
		if seen[sid] || (ss != nil && read[ss.Path]) {
			continue
		}
		seen[sid] = true
		out = append(out, sid)
	}
	return out
}

// run removes gone sessions and reads jobs, in batches: workers read the
// transcripts ahead on every core (pipeline.go), and run replays them in
// the order of their paths.
func (s *Corpus) run(ctx context.Context, jobs []sessionJob, gone []uint32, skips map[string][]store.Skip, pace *gcpace.Pacer, rep *Report) (err error) {
	sort.Slice(jobs, func(i, j int) bool { return jobs[i].path < jobs[j].path })
	total := len(jobs) + len(gone)
	done := 0
	progress := func() {
		if s.cfg.Progress != nil && total > 0 {
			s.cfg.Progress(done, total)
		}
	}
	progress()
	bt := &batcher{b: &sessionBatch{skips: skips}, a: s.ft.NewAnalyser(), progress: progress, pace: pace}
	s.dispose(bt.b, gone, rep)
	done += len(gone)
	bt.pl = s.startPipeline(ctx, jobs)
	defer bt.pl.stop()
	// A run that stops commits the batch in flight, as it would have
	// committed it before reading on.
	defer func() { err = firstErr(err, s.settle(context.WithoutCancel(ctx), bt)) }()
	for k, j := range jobs {
		if err := ctx.Err(); err != nil {
			return err
		}
		var ah *aheadRead
		var first *readPart
		if bt.pl != nil {
			var err error
			if ah, first, err = bt.pl.take(ctx, k); err != nil {
				return err
			}
		}
		err := s.readOne(ctx, bt, j, ah, first, rep)
		bt.pl.done(k)
		if err != nil {
			return err
		}
		done++
		if bt.b.size >= s.batchMsgs {
			if err := s.flush(ctx, bt); err != nil {
				return err
			}
		}
	}
	if err := firstErr(s.flush(ctx, bt), s.settle(ctx, bt)); err != nil {
		return err
	}
	if bt.marked && s.partialMark() == "" {
		// Every transcript committed in slices is whole again.
		if err := s.st.setMeta(map[string]string{store.MetaUnfinished: ""}); err != nil {
			return fmt.Errorf("sessions state store: %w", err)
		}
		s.mu.Lock()
		s.unfinished = ""
		s.mu.Unlock()
	}
	return nil
}

// partialMark is the unfinished mark a completed sync leaves: none, unless
// a transcript committed in slices failed to read to its end.
func (s *Corpus) partialMark() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, ss := range s.sessions {
		if ss.Partial {
			return s.unfinished
		}
	}
	return ""
}

// batcher is the batch a run is filling, with its analyser.
type batcher struct {
	b        *sessionBatch
	a        *fulltext.Analyser // one per batch, as a memory sync worker keeps
	progress func()
	// marked: this run set the unfinished mark, because it committed a
	// transcript in slices; it clears the mark when it completes.
	marked bool
	// err is a slice's failure to commit, which fails the sync rather than
	// reading as a transcript the source could not read.
	err error
	// pace is the collector's pacing through a sync that reads everything
	// (nil: none), kept up after every batch.
	pace *gcpace.Pacer
	// pl reads the transcripts ahead; nil: each is read when its turn comes.
	pl *pipeline
	// fly is the batch Bleve is applying, not yet committed (flush).
	fly *inFlight
}

// flush applies bt's batch and starts the next. Bleve applies the batch
// while the committer goes on: the batch is committed to the store and
// memory by the next flush, once the next batch's Bleve batch has started,
// or by settle. Batches are committed in order, each once Bleve has its
// documents, as one at a time were; a batch that writes a session the one
// in flight writes waits for it, so that Bleve applies no two changes to
// one document at once and every batch starts from the sessions the one
// before left.
func (s *Corpus) flush(ctx context.Context, bt *batcher) error {
	if bt.fly != nil && bt.fly.overlaps(bt.b) {
		if err := s.settle(ctx, bt); err != nil {
			return err
		}
	}
	f, err := s.begin(ctx, bt.b)
	if err != nil {
		return firstErr(err, s.settle(ctx, bt))
	}
	prev := bt.fly
	bt.fly = f
	if err := s.finish(ctx, prev); err != nil {
		if f != nil {
			<-f.done // no Bleve batch outlives the run; its pending marks stay
		}
		bt.fly = nil
		return err
	}
	bt.b, bt.a = &sessionBatch{skips: bt.b.skips}, s.ft.NewAnalyser()
	bt.pace.KeepUp()
	bt.progress()
	return nil
}

// firstErr is err, else then: the failure that stopped a run, as it is
// (errors.Is(err, context.Canceled) and the like hold), once what it
// leaves in flight is settled.
func firstErr(err, then error) error {
	if err != nil {
		return err
	}
	return then
}

// settle commits the batch in flight, if any: after it, the store and
// memory hold every batch flushed.
func (s *Corpus) settle(ctx context.Context, bt *batcher) error {
	f := bt.fly
	bt.fly = nil
	return s.finish(ctx, f)
}

// slice commits the messages t holds so far, with the record of a session
// read only up to where its last complete read ended, and empties t. A
// transcript longer than a batch is committed this way, so no transaction
// and no batch grows with one session's length. Until its read completes,
// the session's record is marked partial and keeps the cursor, size,
// sequence and coverage of its last complete read, so a sync that stops
// between slices leaves a session the next sync reads again from there: the
// messages it delivers again keep their sequence numbers by id, and the
// rest follow. A new session, or one read afresh, keeps no cursor: the next
// read starts it afresh again. The unfinished mark says meanwhile that the
// index holds part of a transcript.
func (s *Corpus) slice(ctx context.Context, bt *batcher, t *transcriptRead, old sessionRec, isNew bool, j sessionJob) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.RLock()
	marked := s.unfinished != ""
	s.mu.RUnlock()
	if !marked {
		if err := s.markUnfinished(time.Now()); err != nil {
			bt.err = err
			return err
		}
		bt.marked = true
	}
	rec := old
	rec.Partial = true
	if isNew || t.reset {
		rec.Cursor, rec.Size, rec.MtimeNs, rec.NextSeq = nil, 0, 0, t.next
		rec.Coverage, rec.Malformed = transcript.Coverage{}, 0
		rec.Started, rec.Ended = time.Time{}, time.Time{}
	}
	if rec.ID == "" {
		rec.ID = strings.TrimSuffix(filepath.Base(j.path), filepath.Ext(j.path))
	}
	if rec.Agent == "" {
		rec.Agent = j.src.Kind()
	}
	rec.Started, rec.Ended = earliest(rec.Started, t.started), latest(rec.Ended, t.ended)
	w := t.w
	w.rec = &rec
	bt.b.add(rec.SID, w)
	t.w = sessionWrite{}
	t.sliced = true
	bt.pace.Tighten(slicedHeapGrowth)
	// The slice is committed before the read goes on: its messages are
	// numbered from what the store holds (seqFor).
	if err := firstErr(s.flush(ctx, bt), s.settle(ctx, bt)); err != nil {
		bt.err = err
		return err
	}
	t.a = bt.a
	return nil
}

// dispose adds to b what becomes of sessions whose transcript is gone:
// archived (their messages stay, served from the store), or removed when
// the index mirrors the transcripts (Config.MirrorDeleted).
// Archiving writes only the session's record, never the full-text index.
func (s *Corpus) dispose(b *sessionBatch, gone []uint32, rep *Report) {
	now := time.Now().UTC()
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, sid := range gone {
		ss := s.sessions[sid]
		switch {
		case ss == nil:
		case s.cfg.MirrorDeleted:
			b.add(sid, sessionWrite{})
			rep.Removed++
		case !ss.archived():
			rec := ss.sessionRec
			rec.Archived = now
			b.add(sid, sessionWrite{rec: &rec})
			rep.Archived++
		}
	}
}

// sessionBatch collects the writes of one batch, one per session.
type sessionBatch struct {
	sids   []uint32
	writes []sessionWrite
	size   int // messages
	skips  map[string][]store.Skip
}

func (b *sessionBatch) add(sid uint32, w sessionWrite) {
	b.sids = append(b.sids, sid)
	b.writes = append(b.writes, w)
	b.size += len(w.msgs)
}

// summaryID and RoleSummary name the document that holds a session's summary.
const (
	summaryID   = "summary"
	RoleSummary = "summary"
)

// readOne reads one transcript from its cursor into bt's batch, replaying
// the read ahead (ah, its first part first) when it was read from that
// cursor, else reading it here. An archived session whose transcript is back is
// restored: read from its cursor as usual, and if the file is not the
// continuation of what was indexed (a rewrite, an older copy), what the file
// holds replaces its messages by id and the rest stay, because the index
// is their only copy. A file at an archived session's path that holds
// another session is a new session; the archived one stays as it was.
func (s *Corpus) readOne(ctx context.Context, bt *batcher, j sessionJob, ah *aheadRead, first *readPart, rep *Report) error {
	b := bt.b
	s.mu.RLock()
	_, forgotten := s.forgotten[pathHash(j.path)]
	s.mu.RUnlock()
	if forgotten {
		// Left out for good (status counts it), with any copy its source
		// made while listing it.
		if err := bt.pl.inContainer(j.path, func() error { return s.dropCopies(j.key, j.path) }); err != nil {
			skip := store.Skip{Path: j.path, Reason: "forgotten, but its copy in the index folder stays: " + err.Error()}
			rep.Skipped = append(rep.Skipped, skip)
			if b.skips != nil {
				b.skips[j.key] = append(b.skips[j.key], skip)
			}
		}
		return nil
	}
	var fi os.FileInfo
	var statErr error
	if ah != nil {
		fi, statErr = ah.fi, ah.statErr
	} else {
		fi, statErr = os.Stat(j.path)
	}
	old, isNew := s.claim(b, j)
	if unchanged(old, isNew, fi, statErr) {
		if old.archived() {
			rec := old
			rec.Archived = time.Time{}
			b.add(rec.SID, sessionWrite{rec: &rec})
			rep.Restored++
			return nil
		}
		rep.Unchanged++
		return nil
	}
	if ah != nil && (!ah.read || !bytes.Equal(ah.cursor, old.cursorFor(isNew))) {
		ah = nil // not read ahead from where this read starts: read here
	}
	t, err := s.readTranscript(ctx, j, old, isNew, bt, ah, first)
	if err == nil && old.archived() && t.res.Session.ID != "" && t.res.Session.ID != old.ID {
		old, isNew = s.newRecord(j), true
		t, err = s.readTranscript(ctx, j, old, true, bt, nil, nil)
	}
	b = bt.b // a transcript committed in slices has applied the batch
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if bt.err != nil {
		return bt.err
	}
	if err != nil {
		skip := store.Skip{Path: j.path, Reason: "unreadable: " + err.Error()}
		rep.Skipped = append(rep.Skipped, skip)
		if b.skips != nil {
			b.skips[j.key] = append(b.skips[j.key], skip)
		}
		return nil // a session already indexed keeps what it holds
	}
	rec := t.record(old, isNew, j, fi, statErr)
	t.w.rec = &rec
	b.add(rec.SID, t.w)
	rep.Messages += t.count
	rep.Malformed += t.res.Malformed
	switch {
	case isNew:
		rep.Added++
	case old.archived():
		rep.Restored++
	case t.reset:
		rep.Reset++
	case t.count > 0:
		rep.Updated++
	default:
		rep.Unchanged++
	}
	return nil
}

// claim finds the session a job's path holds, or a new record for it.
func (s *Corpus) claim(b *sessionBatch, j sessionJob) (old sessionRec, isNew bool) {
	s.mu.RLock()
	ss := s.byPath[j.path]
	s.mu.RUnlock()
	switch {
	case ss == nil:
		return s.newRecord(j), true
	case ss.Source != j.key:
		if !ss.archived() {
			b.add(ss.SID, sessionWrite{}) // another source owned this path before
		}
		return s.newRecord(j), true
	}
	return ss.sessionRec, false
}

func (s *Corpus) newRecord(j sessionJob) sessionRec {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := sessionRec{SID: s.nextSID, Source: j.key, Path: j.path}
	s.nextSID++
	return r
}

// transcriptRead is what one read of a transcript gives the batch.
type transcriptRead struct {
	w    sessionWrite // the messages not yet committed
	res  TranscriptRead
	next uint32 // the next free sequence number
	a    *fulltext.Analyser
	// reset: the read started the session afresh; sliced: some of its
	// messages are committed already (Corpus.slice).
	reset, sliced bool
	count         int       // messages delivered
	started       time.Time // earliest and latest times of those messages
	ended         time.Time
}

// readTranscript reads j's transcript from old's cursor (from the start
// when isNew) into a sessionWrite for old's session, committing it in
// slices through bt when it holds more than a batch's messages. An
// archived session being restored is read whole: until the read ends it
// may turn out to be another session, and its messages must not be mixed.
// With ah, the read is the one a worker made ahead, replayed.
func (s *Corpus) readTranscript(ctx context.Context, j sessionJob, old sessionRec, isNew bool, bt *batcher, ah *aheadRead, first *readPart) (*transcriptRead, error) {
	t := &transcriptRead{next: old.NextSeq, a: bt.a}
	merge := old.archived() && !isNew
	if !isNew && !merge && old.Partial && len(old.Cursor) == 0 {
		// Cut short between slices while read afresh: afresh again.
		t.reset, t.w.reset, t.next = true, true, 0
	}
	ids := map[string]uint32{}
	h := TranscriptHandler{
		Reset: func() error {
			if merge {
				return nil // restored from the archive: replace by id, keep the rest
			}
			t.reset, t.w.reset, t.w.msgs, t.w.vectors, t.next, ids = true, true, nil, nil, 0, map[string]uint32{}
			t.count, t.started, t.ended = 0, time.Time{}, time.Time{}
			return nil
		},
	}
	// deliver takes one message, analysed and embedded ahead (fields; vec,
	// nil if it was not) or not (nil fields).
	deliver := func(m TranscriptMessage, fields []*fulltext.Field, vec []float32) error {
		id := m.ID
		if id == "" {
			id = "m" + strconv.FormatUint(uint64(t.next), 10)
		}
		seq := t.seqFor(s.st, old.SID, id, ids, t.sliced || (!t.reset && !isNew))
		pm := pendingMsg{seq: seq, text: m.Text, rec: msgRec{ID: id, Role: m.Role, Time: m.Timestamp.UTC()}}
		if fields == nil {
			fields = t.a.Message(m.Text)
		}
		pm.doc = fulltext.NewDoc(docID(old.SID, seq), fields)
		pm.rec.Lens = fulltext.FieldLens(pm.doc)
		t.w.msgs = append(t.w.msgs, pm)
		t.w.vectors = append(t.w.vectors, vec)
		t.count++
		if !pm.rec.Time.IsZero() {
			t.started, t.ended = earliest(t.started, pm.rec.Time), latest(t.ended, pm.rec.Time)
		}
		if bt.b.size > 0 && bt.b.size+len(t.w.msgs) >= s.batchMsgs {
			// The batch is full: what it holds of other transcripts
			// goes first, whole, and this one goes on.
			if err := s.flush(ctx, bt); err != nil {
				bt.err = err
				return err
			}
		}
		if merge || len(t.w.msgs) < s.batchMsgs {
			return nil
		}
		if err := s.slice(ctx, bt, t, old, isNew, j); err != nil {
			return err
		}
		ids = map[string]uint32{}
		return nil
	}
	h.Message = func(m TranscriptMessage) error { return deliver(m, nil, nil) }
	res, last, err := s.readVia(ctx, bt, j, old.cursorFor(isNew), ah, first, h, deliver)
	if err != nil {
		return nil, err
	}
	t.res = res
	// A session's summary (CodeArchitect's summary.md) is searchable too,
	// as one more document of the session, role "summary".
	if sum := res.Session.Summary; sum != "" && (isNew || t.w.reset || sum != old.Summary) {
		m := TranscriptMessage{ID: summaryID, Role: RoleSummary, Timestamp: res.Session.Ended, Text: sum}
		if m.Timestamp.IsZero() {
			m.Timestamp = res.Session.Started
		}
		if last != nil {
			deliver(m, last.sum.fields, last.sum.vec)
		} else {
			h.Message(m)
		}
	}
	return t, nil
}

// readVia reads j from cursor through h: the read a worker made ahead
// (ah), replayed with its analysis and vectors, else the source's, here.
// With ah it also returns the read's last part.
func (s *Corpus) readVia(ctx context.Context, bt *batcher, j sessionJob, cursor []byte, ah *aheadRead, first *readPart,
	h TranscriptHandler, deliver func(TranscriptMessage, []*fulltext.Field, []float32) error) (res TranscriptRead, last *readPart, err error) {
	if ah != nil {
		return bt.pl.replay(ctx, ah, first, h, deliver)
	}
	if bt.pl != nil && pipelineTrace != nil {
		pipelineTrace("read here", 1)
	}
	err = bt.pl.inContainer(j.path, func() (err error) {
		res, err = j.src.Read(ctx, j.path, cursor, h)
		return err
	})
	return res, nil, err
}

// cursorFor is where a read of r's transcript starts: its cursor, or the
// start (nil) for a new record.
func (r sessionRec) cursorFor(isNew bool) []byte {
	if isNew {
		return nil
	}
	return r.Cursor
}

// seqFor numbers message id in session sid: the number it has in this read
// (ids), else, where the store may know it (inStore: a slice of this read
// is committed, or the session is read on from its cursor), the number it
// was stored under, else the next. A read cut short between slices
// numbered past the record's sequence: what it committed is found again.
func (t *transcriptRead) seqFor(st *sessionStore, sid uint32, id string, ids map[string]uint32, inStore bool) uint32 {
	seq, ok := ids[id]
	if !ok && inStore {
		if seq, ok = st.seqOf(sid, id); ok {
			t.next = max(t.next, seq+1)
		}
	}
	if !ok {
		seq = t.next
		t.next++
	}
	ids[id] = seq
	return seq
}

// record is old's record after this read.
func (t *transcriptRead) record(old sessionRec, isNew bool, j sessionJob, fi os.FileInfo, statErr error) sessionRec {
	res := t.res
	rec := old
	rec.ID, rec.Agent, rec.Project, rec.ProjectHash = res.Session.ID, res.Session.Agent, res.Session.Project, res.Session.ProjectHash
	if rec.Agent == "" {
		rec.Agent = j.src.Kind()
	}
	if rec.ID == "" {
		rec.ID = strings.TrimSuffix(filepath.Base(j.path), filepath.Ext(j.path))
	}
	rec.Summary = res.Session.Summary
	rec.Cursor = res.Cursor
	rec.Partial = false
	rec.Archived = time.Time{}
	rec.Malformed = res.Malformed
	if !isNew && !t.reset {
		rec.Malformed += old.Malformed
	}
	rec.Coverage = addCoverage(old.Coverage, res.Coverage, isNew || t.reset)
	if statErr == nil {
		rec.Size, rec.MtimeNs = fi.Size(), fi.ModTime().UnixNano()
	}
	if t.reset {
		rec.Started, rec.Ended = time.Time{}, time.Time{}
	}
	rec.Started, rec.Ended = earliest(rec.Started, res.Session.Started), latest(rec.Ended, res.Session.Ended)
	rec.Started, rec.Ended = earliest(rec.Started, t.started), latest(rec.Ended, t.ended)
	rec.NextSeq = t.next
	return rec
}

// addCoverage is a transcript's coverage after a read that counted c: c
// replaces what earlier reads counted when it covers the whole transcript
// (or the session starts afresh), else it adds.
func addCoverage(old, c transcript.Coverage, fresh bool) transcript.Coverage {
	var out transcript.Coverage
	if !fresh && !c.Whole {
		out.Add(old)
	}
	out.Add(c)
	return out
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b.UTC()
	}
	return a
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b.UTC()
	}
	return a
}

// apply writes one batch: embed, mark pending, Bleve, state store, memory.
// A cancelled sync writes no more batches: the embedder used to be what
// noticed, and messages embedded ahead (pipeline.go) no longer call it.
func (s *Corpus) apply(ctx context.Context, b *sessionBatch) error {
	f, err := s.begin(ctx, b)
	if err != nil {
		return err
	}
	return s.finish(ctx, f)
}

// inFlight is a batch whose full-text changes Bleve is applying on a
// goroutine of its own; finish commits it to the store and memory once
// Bleve has.
type inFlight struct {
	b    *sessionBatch
	sids map[uint32]bool
	done chan error
}

// begin is a batch's first stages: embed what was not embedded ahead,
// mark pending, and start Bleve's batch on a goroutine of its own (Bleve
// builds a batch's segment on the goroutine that applies it, a quarter of
// a sync's CPU, which then is not the committer's). nil: nothing to write.
func (s *Corpus) begin(ctx context.Context, b *sessionBatch) (*inFlight, error) {
	if len(b.writes) == 0 && len(b.skips) == 0 {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.embedWrites(ctx, b); err != nil {
		return nil, err
	}
	// Pending marks: everything a batch may write to Bleve, so a crash
	// before the commit can be undone document by document.
	pend := map[uint32]uint32{}
	s.mu.RLock()
	for i, sid := range b.sids {
		if !b.writes[i].touchesText() {
			continue // a record alone (archived, restored unchanged) commits in one transaction
		}
		top := b.writes[i].topSeq()
		if ss := s.sessions[sid]; ss != nil {
			top = max(top, ss.NextSeq)
		}
		pend[sid] = max(pend[sid], top)
	}
	s.mu.RUnlock()
	if err := s.st.markPending(pend); err != nil {
		return nil, fmt.Errorf("sessions state store: %w", err)
	}
	fb, err := s.textBatch(b)
	if err != nil {
		return nil, err
	}
	f := &inFlight{b: b, sids: make(map[uint32]bool, len(b.sids)), done: make(chan error, 1)}
	for _, sid := range b.sids {
		f.sids[sid] = true
	}
	go func() {
		err := s.ft.Batch(fb)
		// Bleve has built its segment: the analysed fields, the largest
		// part of a batch, need not wait for the batch's commit.
		for i := range b.writes {
			for k := range b.writes[i].msgs {
				b.writes[i].msgs[k].doc = nil
			}
		}
		f.done <- err
	}()
	return f, nil
}

// finish waits for f's Bleve batch, then commits f to the state store,
// which clears its pending marks, and to memory.
func (s *Corpus) finish(ctx context.Context, f *inFlight) error {
	if f == nil {
		return nil
	}
	if err := <-f.done; err != nil {
		return fmt.Errorf("sessions full-text batch: %w", err)
	}
	b := f.b
	if err := s.st.commit(b.writes, b.sids, b.skips); err != nil {
		return fmt.Errorf("sessions state store: %w", err)
	}
	return s.applyMemory(ctx, b)
}

// overlaps reports whether b writes a session f writes too.
func (f *inFlight) overlaps(b *sessionBatch) bool {
	for _, sid := range b.sids {
		if f.sids[sid] {
			return true
		}
	}
	return false
}

// textBatch is b's full-text changes as one Bleve batch: the documents of
// the sessions it drops or starts afresh deleted, then its messages.
func (s *Corpus) textBatch(b *sessionBatch) (*fulltext.Batch, error) {
	fb := s.ft.NewBatch()
	s.mu.RLock()
	for i, sid := range b.sids {
		w := b.writes[i]
		if ss := s.sessions[sid]; ss != nil && (w.rec == nil || w.reset) {
			ss.each(func(seq uint32, _ msgNum) { fb.Delete(docID(sid, seq)) })
		}
	}
	s.mu.RUnlock()
	for _, w := range b.writes {
		for _, m := range w.msgs {
			if err := fb.IndexAdvanced(m.doc); err != nil {
				return nil, fmt.Errorf("index message: %w", err)
			}
		}
	}
	return fb, nil
}

// applyMemory is a batch's last stage, once the store has committed it:
// the in-memory sessions, messages and vectors.
func (s *Corpus) applyMemory(ctx context.Context, b *sessionBatch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Vectors go in as codes with their labels interned once per session
	// and role, as loadVectors puts them, each as its message goes into
	// the columns: a message number freed by a later drop of this batch
	// is then never left with another message's vector.
	sets := map[uint8]vectors.LabelSet{} // of the write's session, by role
	for i, sid := range b.sids {
		w := b.writes[i]
		ss := s.sessions[sid]
		if ss != nil && (w.rec == nil || w.reset) {
			s.dropMessages(ss)
		}
		if w.rec == nil {
			if ss != nil {
				delete(s.sessions, sid)
				if s.byPath[ss.Path] == ss {
					delete(s.byPath, ss.Path)
				}
			}
			continue
		}
		if ss == nil {
			ss = &session{}
			s.sessions[sid] = ss
		}
		ss.sessionRec = *w.rec
		s.byPath[ss.Path] = ss
		clear(sets)
		for k, pm := range w.msgs {
			if err := s.applyMessage(ss, pm, w.vectors[k], sets); err != nil {
				// The state store holds the batch: the next open loads it.
				return err
			}
		}
	}
	return nil
}

// applyMessage puts one committed message and its vector (nil: none) into
// memory.
func (s *Corpus) applyMessage(ss *session, pm pendingMsg, v []float32, sets map[uint8]vectors.LabelSet) error {
	role, err := s.cols.roleID([]byte(pm.rec.Role))
	if err != nil {
		return fmt.Errorf("sessions message %s: %w", docID(ss.SID, pm.seq), err)
	}
	n, err := s.addMessage(ss, pm.seq, colRec{role: role, time: toMsgTime(pm.rec.Time), lens: pm.rec.Lens})
	if err != nil {
		return fmt.Errorf("sessions message: %w", err)
	}
	if v == nil {
		return nil
	}
	c, ok := vectors.Quantize(v)
	if !ok { // no direction: left out, as Put leaves it
		s.vec.Delete(n)
		return nil
	}
	if err := s.vec.PutCode(n, s.labelSet(ss, n, sets), c); err != nil {
		return fmt.Errorf("sessions vector store: %w", err)
	}
	return nil
}

// embedWrites embeds the messages of b not embedded ahead (a nil vector
// in a write's vectors, or none), in calls of embedBatch texts, and keeps
// of every vector only one the index can take.
func (s *Corpus) embedWrites(ctx context.Context, b *sessionBatch) error {
	for i := range b.writes {
		w := &b.writes[i]
		if n := len(w.msgs) - len(w.vectors); n > 0 {
			w.vectors = append(w.vectors, make([][]float32, n)...)
		}
		var todo []int
		for k := range w.msgs {
			if w.vectors[k] == nil {
				todo = append(todo, k)
			}
		}
		for lo := 0; lo < len(todo); lo += embedBatch {
			hi := min(lo+embedBatch, len(todo))
			texts := make([]string, 0, hi-lo)
			for _, k := range todo[lo:hi] {
				texts = append(texts, w.msgs[k].text)
			}
			vs, err := s.emb.Embed(ctx, texts)
			if err != nil {
				return fmt.Errorf("embed messages of %s: %w", w.rec.Path, err)
			}
			for k, v := range vs {
				w.vectors[todo[lo+k]] = v
			}
		}
		for k, v := range w.vectors {
			if v == nil {
				continue
			}
			if s.dim == 0 && len(v) > 0 {
				s.mu.Lock()
				s.dim = len(v) // a remote embedder that was offline at open has answered
				s.mu.Unlock()
			}
			if len(v) != s.dim {
				return fmt.Errorf("embed messages of %s: embedder %s returned %d dimensions, the index has %d (rebuild with sessions sync --full)", w.rec.Path, s.emb.Name(), len(v), s.dim)
			}
			if vectors.Normalize(v) == nil {
				w.vectors[k] = nil
			}
		}
	}
	return nil
}

// touchesText reports whether w writes or deletes full-text documents.
func (w sessionWrite) touchesText() bool { return w.rec == nil || w.reset || len(w.msgs) > 0 }

func (w sessionWrite) topSeq() uint32 {
	var top uint32
	for _, m := range w.msgs {
		top = max(top, m.seq+1)
	}
	return top
}

// repairPending undoes batches a crash interrupted. The state store
// commits a batch in one transaction, so it holds the truth: the sessions
// the batch was writing lose whatever documents it may have left in Bleve
// and get back exactly what the store holds (for an archived session the
// store is the only copy, so nothing is dropped); the next sync reads
// their transcripts on from the cursor the store kept.
func (s *Corpus) repairPending() error {
	p, err := s.st.pending()
	if err != nil || len(p) == 0 {
		return err
	}
	fb := s.ft.NewBatch()
	sids := make([]uint32, 0, len(p))
	for sid, top := range p {
		for seq := uint32(0); seq <= top; seq++ {
			fb.Delete(docID(sid, seq))
		}
		sids = append(sids, sid)
	}
	if err := s.ft.Batch(fb); err != nil {
		return fmt.Errorf("repair interrupted sessions batch: %w", err)
	}
	if err := s.reindexInto(context.Background(), s.ft, sids, nil); err != nil {
		return fmt.Errorf("repair interrupted sessions batch: %w", err)
	}
	return s.st.clearPending(sids)
}

// reset empties the sessions index for a full rebuild, except archived
// sessions (unless the index mirrors the transcripts): their transcripts
// are gone, so the store keeps them and restoreArchived indexes them again.
func (s *Corpus) reset() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ftPath := filepath.Join(s.dir, fulltext.Dir)
	if s.ft != nil {
		s.ft.Close()
	}
	if err := os.RemoveAll(ftPath); err != nil {
		return fmt.Errorf("remove sessions full-text index: %w", err)
	}
	ft, err := fulltext.Open(ftPath, true, fulltext.DurableBatches, nil)
	if err != nil {
		return err
	}
	s.ft = ft
	s.damage.Clear()
	if err := s.st.resetLive(!s.cfg.MirrorDeleted); err != nil {
		return fmt.Errorf("reset sessions state store: %w", err)
	}
	return s.resetMemory()
}

// restoreArchived indexes again, from the store, the archived sessions a
// reset kept: analysed and embedded afresh (the schema or the embedder may
// be what changed), through the same batches as a transcript's messages, a
// long session in slices. No write drops a session from the store, its only
// copy: the reset emptied the full-text index and memory, and every slice
// puts back messages the store holds. A crash between slices leaves the
// full-text index short of the store, which the next open rebuilds.
func (s *Corpus) restoreArchived(ctx context.Context) error {
	var recs []sessionRec
	if err := s.st.forEachSession(func(r sessionRec) error {
		if r.archived() {
			recs = append(recs, r)
		}
		return nil
	}); err != nil {
		return fmt.Errorf("read archived sessions: %w", err)
	}
	s.mu.Lock()
	for _, r := range recs { // the transcripts read next take numbers after theirs
		s.nextSID = max(s.nextSID, r.SID+1)
	}
	s.mu.Unlock()
	b, a := &sessionBatch{}, s.ft.NewAnalyser()
	for i := range recs {
		rec := recs[i]
		for from := uint32(0); ; {
			n := s.batchMsgs - b.size
			stored, err := s.st.firstMessages(rec.SID, from, math.MaxUint32, n)
			if err != nil {
				return fmt.Errorf("read archived session %s: %w", rec.ID, err)
			}
			w := sessionWrite{rec: &rec, msgs: make([]pendingMsg, 0, len(stored))}
			for _, m := range stored {
				pm := pendingMsg{seq: m.seq, text: m.Text, rec: m.msgRec}
				pm.doc = fulltext.NewDoc(docID(rec.SID, m.seq), a.Message(m.Text))
				pm.rec.Lens = fulltext.FieldLens(pm.doc)
				w.msgs = append(w.msgs, pm)
			}
			b.add(rec.SID, w)
			if b.size >= s.batchMsgs {
				if err := s.apply(ctx, b); err != nil {
					return err
				}
				b, a = &sessionBatch{}, s.ft.NewAnalyser()
			}
			if len(stored) < n {
				break
			}
			from = stored[len(stored)-1].seq + 1
		}
	}
	return s.apply(ctx, b)
}

func (s *Corpus) noteError(err error) {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	s.mu.Lock()
	s.lastError = msg
	s.mu.Unlock()
}
