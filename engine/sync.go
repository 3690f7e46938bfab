package engine

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"mnemo/engine/fulltext"
	"mnemo/engine/gcpace"
	"mnemo/engine/store"
	"mnemo/engine/vault"
	"mnemo/engine/vectors"
	"mnemo/graph"
	"mnemo/markdown"
)

// A sync applies files in batches: one Bleve batch (one segment) and one
// state-store transaction each, so the indexes and the state agree after
// every batch. A batch ends at batchFiles files or batchBytes of file
// content, whichever comes first; two are in flight (see reconcile).
//
// Larger batches do not pay here: on tldr (38,430 files of 485 bytes)
// 2,048 and 4,096 files a batch took 13.4–14.2 and 14.1–14.2 CPU seconds
// against 12.8 for 1,024, and 385–512 MB of peak RSS against 303–324 (the
// segment build grows faster than the merges it saves). The byte bound is
// what keeps memory flat on large files: 400 files of 128 KB peaked at
// 1.64 GB in one batch and at 326 MB with 4 MiB batches (PowerShell-Docs,
// 3,112 files of 10.7 KB: 480–552 MB → 299 MB, CPU unchanged).
const (
	batchFiles = 1024
	batchBytes = 4 << 20
)

// nextBatch is the length of the batch that starts jobs: at least one
// job, at most maxFiles, and no more than maxBytes of content unless the
// first job alone is larger.
func nextBatch(jobs []syncJob, maxFiles int, maxBytes int64) int {
	n, size := 0, int64(0)
	for n < len(jobs) && n < maxFiles {
		size += max(jobs[n].size, 0)
		if n > 0 && size > maxBytes {
			break
		}
		n++
	}
	return n
}

// seen is one markdown file found by a scan.
type seen struct {
	size    int64
	mtimeNs int64
	skip    string // why it is not indexed, for an entry that is not a regular file
}

// Sync brings both indexes in step with the memory folder: new files are
// added, changed ones re-indexed and re-embedded, deleted ones removed. With
// full, or when the index must be rebuilt (new embedder, repaired
// corruption), everything is indexed from scratch; read times are kept.
func (e *Engine) Sync(ctx context.Context, full bool) (rep Report, err error) {
	if e.cfg.ReadOnly {
		return Report{}, ErrReadOnly
	}
	defer func() { e.noteSyncError(err) }()
	e.syncMu.Lock()
	defer e.syncMu.Unlock()
	e.indexing.Store(true)
	defer e.indexing.Store(false)

	start := time.Now()
	rep = Report{Added: []string{}, Updated: []string{}, Removed: []string{}, Skipped: []Skip{}, Warnings: []Warning{}}
	e.mu.RLock()
	why := e.needFull
	e.mu.RUnlock()
	if err := e.damaged(); why == "" && err != nil {
		why = store.DamageDetail(err)
	}
	if full || why != "" {
		rep.Full, rep.Rebuilt = true, why
		if err := e.reset(); err != nil {
			return rep, err
		}
	}
	e.mu.RLock()
	first := e.lastSync.IsZero() || e.unfinished != ""
	e.mu.RUnlock()
	var pace *gcpace.Pacer
	if rep.Full || first {
		if err := e.markUnfinished(start); err != nil {
			return rep, err
		}
		pace = gcpace.Start(gcpace.MemoryBudget, 2) // everything is indexed: see engine/gcpace
		defer pace.Stop()
	}
	found, shut, err := e.scan(ctx)
	if err != nil {
		return rep, err
	}
	rep.Scan = time.Since(start)

	t0 := time.Now()
	before := e.readsWithin(nil)
	reportShut(shut, &rep)
	if err := e.reconcile(ctx, found, func(p string) bool { return !vault.InAnyFolder(p, shut) }, pace, &rep); err != nil {
		return rep, err
	}
	if err := e.followMoves(before, rep); err != nil {
		return rep, err
	}
	rep.Index = time.Since(t0)
	if err := e.flushFulltext(); err != nil { // a completed sync leaves nothing to repair
		return rep, err
	}
	if err := e.recordSync(shut); err != nil {
		return rep, err
	}
	// Communities are recomputed after a sync that changed something
	// (lazily after edits, and in a process that has not computed them).
	if len(rep.Added)+len(rep.Updated)+len(rep.Removed) > 0 && !e.gs.off {
		if _, err := e.communities(ctx); err != nil {
			return rep, err
		}
	}
	rep.Total = time.Since(start)
	return rep, nil
}

// recordSync records a completed sync: what the index was built with, when,
// the folders it could not read, and the unfinished mark cleared.
func (e *Engine) recordSync(shut []string) error {
	now := time.Now().UTC()
	if err := e.st.setMeta(map[string]string{
		"schema":             itoa(store.SchemaVersion),
		metaLinks:            e.linkRules(),
		"embedder":           e.emb.Name(),
		"dim":                itoa(e.dim),
		"lastSync":           now.Format(time.RFC3339Nano),
		store.MetaUnfinished: "",
		metaUnreadable:       strings.Join(shut, "\n"),
	}); err != nil {
		return fmt.Errorf("record sync: %w", err)
	}
	e.mu.Lock()
	e.lastSync = now
	e.needFull = ""
	e.unfinished = ""
	e.unreadable = shut
	e.mu.Unlock()
	return nil
}

// markUnfinished records, before a first or full sync writes anything, that
// the index is about to hold part of the folder (store.MarkUnfinished); a
// completed Sync clears it.
func (e *Engine) markUnfinished(start time.Time) error {
	v, err := store.MarkUnfinished(e.st.db, "sync", start)
	if err != nil {
		return fmt.Errorf("state store: %w", err)
	}
	e.mu.Lock()
	e.unfinished = v
	e.mu.Unlock()
	return nil
}

// reconcile makes the indexes agree with found for every path inside the
// part of the tree that within says was scanned: files found are added or
// re-indexed if changed; known files not found are removed. pace, if not
// nil, is told after every batch (engine/gcpace).
func (e *Engine) reconcile(ctx context.Context, found map[string]seen, within func(string) bool, pace *gcpace.Pacer, rep *Report) error {
	jobs, removed, unskip := e.compare(found, within, rep)
	total := len(jobs) + len(removed)
	done := 0
	progress := func() {
		if e.cfg.Progress != nil && total > 0 {
			e.cfg.Progress(done, total)
		}
	}
	progress()
	if len(removed) > 0 || len(unskip) > 0 {
		var out []outcome
		for _, p := range removed {
			out = append(out, outcome{path: p, removed: true})
		}
		if err := e.apply(ctx, out, unskip, rep); err != nil {
			return err
		}
		done += len(removed)
		progress()
	}
	return e.pipeline(ctx, jobs, func(out []outcome) error {
		if err := e.apply(ctx, out, nil, rep); err != nil {
			return err
		}
		pace.KeepUp()
		done += len(out)
		progress()
		return nil
	})
}

// compare compares found with what is indexed: the files to (re)index, in
// path order, the known files that are gone, and the skips to forget.
func (e *Engine) compare(found map[string]seen, within func(string) bool, rep *Report) (jobs []syncJob, removed, unskip []string) {
	e.mu.RLock()
	for p, s := range found {
		r := e.files[p]
		why, wasSkipped := e.skips[p]
		switch {
		case s.skip != "" && r == nil && why == s.skip:
			rep.Unchanged++ // still not a regular file
		case r == nil || wasSkipped:
			jobs = append(jobs, syncJob{path: p, seen: s, old: r})
		case r.Size != s.size || r.MtimeNs != s.mtimeNs:
			jobs = append(jobs, syncJob{path: p, seen: s, old: r})
		default:
			rep.Unchanged++
		}
	}
	for p := range e.files {
		if !within(p) { // first: a path-wise sync scans one corner of many files
			continue
		}
		if _, ok := found[p]; !ok {
			removed = append(removed, p)
		}
	}
	for p := range e.skips {
		if _, ok := found[p]; !ok && within(p) {
			unskip = append(unskip, p)
		}
	}
	e.mu.RUnlock()
	sort.Slice(jobs, func(i, j int) bool { return jobs[i].path < jobs[j].path })
	sort.Strings(removed)
	return jobs, removed, unskip
}

// pipeline processes jobs batch by batch and hands each batch's outcomes
// to apply, in order. Batches run as a pipeline: the next batch is read,
// parsed and embedded while the current one is written, so the cores are
// not idle while Bleve builds a segment or bbolt syncs to disk.
func (e *Engine) pipeline(ctx context.Context, jobs []syncJob, apply func([]outcome) error) error {
	pctx, stop := context.WithCancel(ctx)
	defer stop()
	processed := make(chan []outcome, 1)
	go func() {
		defer close(processed)
		for i := 0; i < len(jobs); {
			if pctx.Err() != nil {
				return
			}
			batch := jobs[i : i+nextBatch(jobs[i:], e.batchFiles, e.batchBytes)]
			i += len(batch)
			fr := e.vault.NewReader()
			for k := range batch {
				batch[k].reader = fr
			}
			out := e.process(pctx, batch)
			fr.Close()
			select {
			case processed <- out:
			case <-pctx.Done():
				return
			}
		}
	}()
	defer func() {
		stop()
		for range processed { // never leave the producer behind
		}
	}()
	for out := range processed {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := apply(out); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// syncPaths is SyncPaths' work, for the union of the paths of the calls
// that share one batch. The caller holds syncMu.
func (e *Engine) syncPaths(ctx context.Context, paths []string) (rep Report, err error) {
	start := time.Now()
	rep = Report{Added: []string{}, Updated: []string{}, Removed: []string{}, Skipped: []Skip{}, Warnings: []Warning{}}
	found := map[string]seen{}
	var roots, shut []string
	for _, p := range paths {
		rel, err := vault.CleanRel(p)
		if err != nil {
			return rep, err
		}
		roots = append(roots, rel)
		if rel == "" {
			all, s, err := e.scan(ctx)
			if err != nil {
				return rep, err
			}
			found, shut = all, append(shut, s...)
			continue
		}
		sub, s, err := e.scanPath(ctx, rel)
		if err != nil {
			return rep, err
		}
		for k, v := range sub {
			found[k] = v
		}
		shut = append(shut, s...)
	}
	within := func(p string) bool { return !vault.InAnyFolder(p, shut) && vault.InAnyFolder(p, roots) }
	reportShut(shut, &rep)
	before := e.readsWithin(roots)
	if err := e.reconcile(ctx, found, within, nil, &rep); err != nil {
		return rep, err
	}
	if err := e.followMoves(before, rep); err != nil {
		return rep, err
	}
	rep.Total = time.Since(start)
	rep.Index = rep.Total
	return rep, nil
}

// reset empties both indexes and the indexed state, keeping read times.
func (e *Engine) reset() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	ftPath := filepath.Join(e.cfg.IndexDir, fulltext.Dir)
	if e.ft != nil {
		e.ft.Close()
	}
	if err := os.RemoveAll(ftPath); err != nil {
		return fmt.Errorf("remove full-text index: %w", err)
	}
	ft, err := e.openFulltext(ftPath, true)
	if err != nil {
		return err
	}
	e.ft = ft
	e.damage.Clear()
	if e.vec, err = vectors.NewChromem(0); err != nil {
		return err
	}
	e.gs.g = graph.New()
	if err := e.st.resetIndexed(); err != nil {
		return fmt.Errorf("reset state store: %w", err)
	}
	e.persist.Forget() // the old index's batches, persisted or not, are gone with their marks
	e.files = map[string]*record{}
	e.skips = map[string]string{}
	e.totals = [fulltext.NumFields]int64{}
	return nil
}

// scan lists every memory file under the root (see vault.Walk for what is
// left out). It also returns the folders it could not read (relative
// paths): what they held is unknown, not gone.
func (e *Engine) scan(ctx context.Context) (map[string]seen, []string, error) {
	return e.scanPath(ctx, "")
}

// shutReason is why an unreadable folder is listed among the skipped paths.
const shutReason = "folder unreadable (permission denied?); its memories are kept as last indexed"

// reportShut lists unreadable folders among the skipped paths: their
// memories stay indexed as they were until the folder can be read again.
func reportShut(shut []string, rep *Report) {
	for _, f := range shut {
		rep.Skipped = append(rep.Skipped, Skip{Path: f + "/", Reason: shutReason})
	}
}

// scanPath scans one file or folder below the root ("" is the root); a
// path that does not exist, or that the scan would not index, yields nothing.
func (e *Engine) scanPath(ctx context.Context, rel string) (map[string]seen, []string, error) {
	found := map[string]seen{}
	r, err := e.vault.OpenRoot()
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	rules, err := e.vault.LoadRules(r)
	if err != nil {
		return nil, nil, err
	}
	if rel != "" {
		fi, ok := e.vault.WalkStart(r, rel)
		if !ok || rules.Skip(rel, fi.IsDir()) {
			return found, nil, nil
		}
		if !fi.IsDir() && !fi.Mode().IsRegular() {
			// fs.WalkDir would follow a link given as its start.
			if vault.IsMemoryName(rel) {
				found[rel] = seen{skip: notMemory(fi.Mode())}
			}
			return found, nil, nil
		}
	}
	var shut []string
	err = vault.Walk(ctx, r, rules, rel, func(p string, d fs.DirEntry) error {
		if d.IsDir() || !vault.IsMemoryName(d.Name()) {
			return nil
		}
		if !d.Type().IsRegular() {
			found[p] = seen{skip: notMemory(d.Type())}
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil // gone since the listing
		}
		found[p] = seen{size: fi.Size(), mtimeNs: fi.ModTime().UnixNano()}
		return nil
	}, func(p string) { shut = append(shut, p) })
	if err != nil {
		return nil, nil, fmt.Errorf("scan %s: %w", e.vault.Abs(rel), err)
	}
	return found, shut, nil
}

// notMemory is the skip reason for an entry with a memory file's name that
// is not a regular file.
func notMemory(m fs.FileMode) string {
	return vault.KindOf(m) + ", not a regular file: left alone (never opened or followed)"
}

type syncJob struct {
	path string
	seen
	old    *record
	reader *vault.Reader // the batch's: reads the file
}

// outcome is what processing one file produced.
type outcome struct {
	path    string
	removed bool
	skip    string // reason, if the file is not indexed
	touched bool   // same content, new size/mtime: no re-indexing
	rec     *record
	doc     *fulltext.Doc // full-text document, text fields pre-analysed
	vecs    [][]float32
	excerpt []byte
	links   []graph.Mention // the concepts the file links to
	concept string          // the concept the file stands for, and its other names
	aliases []string
	err     error
}

// process reads, parses and embeds a batch of files in parallel.
func (e *Engine) process(ctx context.Context, jobs []syncJob) []outcome {
	out := make([]outcome, len(jobs))
	e.mu.RLock()
	dim := e.dim
	e.mu.RUnlock()
	// Workers take the next file from a shared counter. They were handed
	// files one by one over a channel: a worker that finished a file
	// waited for the sending goroutine to be scheduled again (tldr, a
	// runtime trace: 0.77 s of the workers' time blocked there).
	workers := min(runtime.GOMAXPROCS(0), len(jobs))
	var wg sync.WaitGroup
	var next atomic.Int64
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &worker{a: e.ft.NewAnalyser()}
			for {
				i := int(next.Add(1) - 1)
				if i >= len(jobs) {
					return
				}
				out[i] = e.processOne(ctx, jobs[i], dim, w)
			}
		}()
	}
	wg.Wait()
	return out
}

// worker is what one goroutine of process keeps from file to file.
type worker struct {
	a        *fulltext.Analyser
	excerpts fulltext.ExcerptEncoder
}

// processOne reads, parses and embeds one file; dim is the index's vector
// dimension (0 while a remote embedder has not answered yet), w the
// worker's reusable state. The text is analysed once, for the full-text
// document and the excerpt index.
func (e *Engine) processOne(ctx context.Context, j syncJob, dim int, w *worker) outcome {
	o := outcome{path: j.path}
	if j.skip != "" {
		o.skip = j.skip
		return o
	}
	if j.size > e.cfg.MaxFileBytes {
		o.skip = fmt.Sprintf("file is %d bytes, over the %d-byte limit", j.size, e.cfg.MaxFileBytes)
		return o
	}
	data, _, err := j.reader.Read(j.path)
	if err != nil {
		o.skip = "unreadable: " + err.Error()
		return o
	}
	hash := vault.Hash(data)
	if j.old != nil && j.old.Hash == hash {
		r := *j.old
		r.Size, r.MtimeNs = j.size, j.mtimeNs
		o.rec, o.touched = &r, true
		return o
	}
	doc, err := markdown.Parse(j.path, data, e.parseOptions())
	if err != nil {
		o.skip = err.Error()
		return o
	}
	texts := make([]string, 0, len(doc.Chunks)+1)
	for _, c := range doc.Chunks {
		texts = append(texts, chunkText(doc.Title, c))
	}
	if len(texts) == 0 {
		texts = append(texts, doc.Title)
	}
	vecs, err := e.emb.Embed(ctx, texts)
	if err != nil {
		o.err = fmt.Errorf("embed %s: %w", j.path, err)
		return o
	}
	for _, v := range vecs {
		if len(v) != dim && dim != 0 {
			o.err = fmt.Errorf("embed %s: embedder %s returned %d dimensions, the index has %d (rebuild with sync --full)", j.path, e.emb.Name(), len(v), dim)
			return o
		}
	}
	bounds := make([][2]int, len(doc.Chunks))
	for i, c := range doc.Chunks {
		bounds[i] = [2]int{c.Start, c.Start + len(c.Text)}
	}
	mt := w.a.Memory(doc.Title, doc.Text, strings.Join(doc.Tags, " "))
	excerpt := w.excerpts.Encode(doc.Text, bounds, mt.Excerpt)
	o.doc, o.vecs, o.excerpt, o.links = fulltext.NewDoc(j.path, mt.Fields), vecs, bytes.Clone(excerpt), graphMentions(doc)
	o.concept, o.aliases = doc.Concept, doc.Aliases
	o.rec = &record{
		Lens:     fulltext.FieldLens(o.doc),
		Path:     j.path,
		Size:     j.size,
		MtimeNs:  j.mtimeNs,
		Hash:     hash,
		Title:    doc.Title,
		Created:  doc.Created,
		Modified: doc.Modified,
		Tags:     doc.Tags,
		Chunks:   len(vecs),
		Warnings: doc.Warnings,
	}
	return o
}

// chunkText is what the embedder sees of a chunk: the memory's title and
// the heading path give a short chunk its context.
func chunkText(title string, c markdown.Chunk) string {
	var b strings.Builder
	b.WriteString(title)
	for _, h := range c.Headings {
		if h != title {
			b.WriteString(" — ")
			b.WriteString(h)
		}
	}
	b.WriteString("\n")
	b.WriteString(c.Text)
	return b.String()
}

// apply writes one batch to the state store, the full-text index and the
// vector store. The state store's commit comes first and marks the paths
// pending in the same transaction (one fsync), so a crash at any later
// point leaves a mark that the next Open repairs (persist.go).
func (e *Engine) apply(ctx context.Context, out []outcome, unskip []string, rep *Report) error {
	for _, o := range out {
		if o.err != nil {
			return o.err
		}
	}
	b, err := e.fulltextBatch(out)
	if err != nil {
		return err
	}
	pending, changes, skips := e.changesOf(out)
	// Durable first, then visible: the commit and its fsync happen before
	// the engine mutex is taken, so searches never wait on the disk. Until
	// the swap below they see the state before this batch (Bleve may
	// already have its documents; hits without a record are left out).
	seq, err := e.commitBatch(pending, changes, skips, unskip)
	if err != nil {
		return fmt.Errorf("state store: %w", err)
	}
	if err := e.ftBatch(b, seq); err != nil {
		return fmt.Errorf("full-text batch: %w", err)
	}
	return e.swapIn(ctx, out, changes, unskip, rep)
}

// fulltextBatch is what a batch writes to the full-text index: the new
// documents, and deletions for the files removed or skipped now.
func (e *Engine) fulltextBatch(out []outcome) (*fulltext.Batch, error) {
	b := e.ft.NewBatch()
	for _, o := range out {
		switch {
		case o.touched:
		case o.doc != nil:
			if err := b.IndexAdvanced(o.doc); err != nil {
				return nil, fmt.Errorf("index %s: %w", o.path, err)
			}
		default: // removed, or skipped now
			b.Delete(o.path)
		}
	}
	return b, nil
}

// changesOf is what a batch writes to the state store: the paths whose
// full-text documents change (marked pending until Bleve has them on
// disk), one change per outcome, and the new skips.
func (e *Engine) changesOf(out []outcome) (pending []string, changes []change, skips map[string]string) {
	changes = make([]change, 0, len(out))
	skips = map[string]string{}
	for _, o := range out {
		if !o.touched {
			pending = append(pending, o.path)
		}
		switch {
		case o.skip != "":
			skips[o.path] = o.skip
			changes = append(changes, change{path: o.path})
		case o.removed:
			changes = append(changes, change{path: o.path})
		default:
			changes = append(changes, change{path: o.path, rec: o.rec, vectors: o.vecs, excerpt: o.excerpt, keepVectors: o.touched})
		}
		changes[len(changes)-1].graph = e.graphChangeFor(o)
	}
	return pending, changes, skips
}

// swapIn makes a committed batch visible: the records, skips, totals,
// vectors and graph in memory, under the engine mutex, and the report.
func (e *Engine) swapIn(ctx context.Context, out []outcome, changes []change, unskip []string, rep *Report) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	var puts []vectors.Item
	for i, o := range out {
		old := e.files[o.path]
		_, wasSkipped := e.skips[o.path]
		switch {
		case o.touched:
			e.files[o.path] = o.rec // same content: its vectors stand
			rep.Unchanged++
			continue
		case o.skip != "":
			rep.Skipped = append(rep.Skipped, Skip{Path: o.path, Reason: o.skip})
		case o.removed:
			rep.Removed = append(rep.Removed, o.path)
		case old == nil || wasSkipped:
			rep.Added = append(rep.Added, o.path)
		default:
			rep.Updated = append(rep.Updated, o.path)
		}
		if old != nil {
			e.addTotals(old, -1)
			if err := e.vec.Delete(ctx, o.path); err != nil {
				return err
			}
			delete(e.files, o.path)
		}
		delete(e.skips, o.path)
		if o.skip != "" {
			e.skips[o.path] = o.skip
		}
		if c := changes[i]; c.rec != nil {
			e.noteDim(c.vectors)
			puts = append(puts, vectorItem(c.rec, c.vectors))
			e.files[o.path] = c.rec
			e.addTotals(c.rec, 1)
			rep.Chunks += len(c.vectors)
			for _, w := range c.rec.Warnings {
				rep.Warnings = append(rep.Warnings, Warning{Path: o.path, Message: w})
			}
		}
	}
	if err := e.vec.Put(ctx, puts...); err != nil {
		return err
	}
	for _, p := range unskip {
		delete(e.skips, p)
	}
	e.applyGraph(changes)
	return nil
}

// noteDim learns the vector dimension from a batch's vectors when a remote
// embedder that was offline at open has now answered. e.mu must be held.
func (e *Engine) noteDim(vecs [][]float32) {
	if e.dim != 0 {
		return
	}
	for _, v := range vecs {
		if len(v) > 0 {
			e.dim = len(v)
			return
		}
	}
}

// noteSyncError keeps the last sync's failure for Status (nil clears it).
func (e *Engine) noteSyncError(err error) {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	e.mu.Lock()
	e.lastError = msg
	e.mu.Unlock()
}
