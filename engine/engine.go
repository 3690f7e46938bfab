package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"

	"mnemo/decay"
	"mnemo/engine/embed"
	"mnemo/engine/fulltext"
	"mnemo/engine/rank"
	"mnemo/engine/store"
	"mnemo/engine/vault"
	"mnemo/engine/vectors"
	"mnemo/markdown"
)

// Engine is an open memory index. It is safe for concurrent use: searches
// run in parallel with each other and see the state between two sync batches.
type Engine struct {
	cfg   Config
	emb   embed.Embedder
	rank  Ranking
	dim   int          // vector dimension of the index
	root  string       // absolute memory folder
	vault *vault.Vault // the memory folder's files: every read, write and walk of them

	st  *stateStore
	ft  *fulltext.Index
	vec vectors.Store // chunk vectors of the memories
	// countAll is the store size up to which a search asks for every chunk
	// (countAllChunks; tests lower it to exercise the partial path).
	countAll int
	// batchFiles and batchBytes bound one sync batch (see batchFiles in
	// sync.go; tests lower them so a few dozen files make several batches).
	batchFiles int
	batchBytes int64
	gs         graphState // the concept graph, guarded by mu (see graph.go)

	// damage is what was found wrong with the full-text index, nil if
	// nothing: set at open or by a query that failed in Bleve, cleared by
	// the rebuild (reset).
	damage store.DamageMark

	writeMu  sync.Mutex        // memory files' read-modify-writes (lockWrites)
	syncMu   sync.Mutex        // one sync at a time
	readsMu  sync.Mutex        // orders read-time changes: store, then map
	group    syncGroup         // SyncPaths calls waiting to share one batch
	persist  *fulltext.Tracker // which full-text batches are on disk (persist.go)
	indexing atomic.Bool       // a sync is running
	closed   atomic.Bool

	mu        sync.RWMutex // guards everything below
	files     map[string]*record
	reads     map[string]time.Time
	skips     map[string]string
	totals    [fulltext.NumFields]int64 // tokens per scored field over all files
	lastSync  time.Time
	lastError string // why the last sync failed, "" if it did not
	// unfinished says when a first or full sync began that has not
	// completed (it is kept in the state store, so it outlives a crash):
	// until one completes, the index holds only part of the folder.
	unfinished string
	unreadable []string        // folders the last sync could not read (relative)
	needFull   string          // why the next sync must rebuild, "" if it need not
	flavor     markdown.Flavor // whose link rules the vault follows (flavor.go)

	removedTemps []string // set once at open (no lock): temporary files a crashed writer left, removed
}

// now is the engine's clock: Config.Clock, else the wall clock.
func (e *Engine) now() time.Time {
	if e.cfg.Clock != nil {
		return e.cfg.Clock()
	}
	return time.Now()
}

// Layout of the index folder.
const (
	defaultLimit = 10 << 20
)

// Open opens the index in cfg.IndexDir for the memories in cfg.MemoryDir,
// creating it if needed. An index left half-written by a crash is repaired
// here; one written by an incompatible version is rebuilt (older) or refused
// (newer). The first Sync fills a new index.
func Open(ctx context.Context, cfg Config) (*Engine, error) {
	if cfg.MemoryDir == "" {
		return nil, errors.New("memory folder is not set")
	}
	root, err := filepath.Abs(cfg.MemoryDir)
	if err != nil {
		return nil, fmt.Errorf("memory folder: %w", err)
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("memory folder %s does not exist or is not a folder", root)
	}
	if cfg.IndexDir == "" {
		return nil, errors.New("index folder is not set")
	}
	if cfg.MaxFileBytes <= 0 {
		cfg.MaxFileBytes = defaultLimit
	}
	if cfg.Decay == (decay.Config{}) {
		cfg.Decay = decay.Default()
	}
	if err := cfg.Decay.Validate(); err != nil {
		return nil, err
	}
	var rk Ranking
	if cfg.Fusion, rk, err = rank.Settings(cfg.Fusion, cfg.Ranking); err != nil {
		return nil, err
	}
	emb, err := embed.OrBuiltin(cfg.Embedder)
	if err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, emb: emb, rank: rk, root: root, countAll: countAllChunks, batchFiles: batchFiles, batchBytes: batchBytes, persist: fulltext.NewTracker()}
	e.flavor = detectFlavor(root)
	if e.vault, err = vault.Open(root, e.vaultOptions()); err != nil {
		return nil, err
	}
	err = store.OpenCorpus(ctx, cfg.IndexDir, storeOptions(cfg.ReadOnly), e.now, e.open, e.Close)
	if errors.Is(err, store.ErrCorrupt) {
		return nil, fmt.Errorf("%w; a sync sets it aside and rebuilds the index from the files", err)
	}
	if err != nil {
		return nil, err
	}
	return e, nil
}

// vaultOptions are the options of the engine's vault: its limits, its
// index folder, the tool's ignore rules, and the index's stamps, which a
// write compares so that a change is never hidden by a coarse clock.
func (e *Engine) vaultOptions() vault.Options {
	return vault.Options{MaxFileBytes: e.cfg.MaxFileBytes, IndexDir: e.cfg.IndexDir, ReadOnly: e.cfg.ReadOnly,
		ToolIgnore: toolIgnore(e.flavor), Indexed: e.stamp}
}

// stamp is the size and modification time the index holds for rel (size
// -1 if none).
func (e *Engine) stamp(rel string) (size, mtimeNs int64) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if r := e.files[rel]; r != nil {
		return r.Size, r.MtimeNs
	}
	return -1, 0
}

// RemovedTemps lists the temporary files a crashed writer left, which Open
// removed (absolute paths).
func (e *Engine) RemovedTemps() []string { return e.removedTemps }

// open is Open's stages once the state store db is open (rebuild: why the
// index must be rebuilt, when a fresh store replaced a damaged one): what
// the stored meta says about the index, the full-text index, then what the
// state store holds.
func (e *Engine) open(ctx context.Context, db *bolt.DB, rebuild string) error {
	e.st, e.needFull = &stateStore{db: db}, rebuild
	if !e.cfg.ReadOnly {
		// Only the writer makes temporary files, and this process is it
		// now: any there are were left by one that died mid-write.
		e.removedTemps = e.vault.RemoveStaleTemps(e.cfg.IndexDir)
	}
	if err := e.checkMeta(); err != nil {
		return err
	}
	if err := e.openIndex(); err != nil {
		return err
	}
	var err error
	if e.vec, err = vectors.NewChromem(0); err != nil {
		return err
	}
	if err := e.loadState(ctx); err != nil {
		return err
	}
	if e.needFull == "" {
		if n, err := e.ft.DocCount(); err == nil && int(n) != len(e.files) {
			e.needFull = fmt.Sprintf("full-text index holds %d memories, state store %d", n, len(e.files))
		}
	}
	return e.loadVectors(ctx)
}

// checkMeta compares what the stored meta says the index was built with —
// schema, link rules, embedder — with this engine: a newer schema is
// refused, anything else that differs makes the next sync rebuild (and a
// reader refuses an index of another embedder).
func (e *Engine) checkMeta() error {
	if err := store.CheckSchema(e.cfg.IndexDir, e.st.meta("schema")); err != nil {
		return err
	}
	if ver, older := store.OlderSchema(e.st.meta("schema")); older {
		e.needFull = fmt.Sprintf("index schema %d is older than %d", ver, store.SchemaVersion)
	}
	if links := e.st.meta(metaLinks); e.needFull == "" && e.st.meta("schema") != "" && links != e.linkRules() {
		e.needFull = fmt.Sprintf("links were read by other rules (%q, now %q)", links, e.linkRules())
	}
	// A remote embedder that has not answered yet has dimension 0: it is
	// taken to be the one the index was built with if the names agree.
	e.dim = e.emb.Dim()
	if stored, _ := strconv.Atoi(e.st.meta("dim")); e.dim == 0 && e.st.meta("embedder") == e.emb.Name() {
		e.dim = stored
	}
	if name := e.st.meta("embedder"); name != "" && (name != e.emb.Name() || e.st.meta("dim") != strconv.Itoa(e.dim)) {
		if e.cfg.ReadOnly {
			return fmt.Errorf("index was embedded with %s (dim %s), not %s: %w", name, e.st.meta("dim"), e.emb.Name(), ErrIndexIncompatible)
		}
		e.needFull = fmt.Sprintf("embedder changed from %s to %s", name, e.emb.Name())
	}
	return nil
}

// openIndex opens the full-text index. A writer replaces one it cannot
// open by an empty one, marked damaged until the rebuild.
func (e *Engine) openIndex() error {
	ftPath := filepath.Join(e.cfg.IndexDir, fulltext.Dir)
	ft, err := e.openFulltext(ftPath, !e.cfg.ReadOnly)
	if err != nil && !e.cfg.ReadOnly && !errors.Is(err, ErrIndexNotReady) {
		// A corrupt full-text index is rebuilt from the files, never trusted.
		if rmErr := os.RemoveAll(ftPath); rmErr != nil {
			return fmt.Errorf("%w (and removing it failed: %v)", err, rmErr)
		}
		if e.needFull == "" { // an older schema's reason says more
			e.needFull = store.DamageDetail(err)
		}
		e.noteDamage(err) // until the rebuild, the new empty index is not the truth
		ft, err = e.openFulltext(ftPath, true)
	}
	if err != nil {
		return err
	}
	if ft.Damage() != nil {
		e.noteDamage(ft.Damage())
	}
	e.ft = ft
	return nil
}

// loadState reads what the state store holds into memory, and undoes the
// batch a crash interrupted (its pending marks).
func (e *Engine) loadState(ctx context.Context) error {
	l, err := e.st.load()
	if err != nil {
		if e.cfg.ReadOnly {
			return fmt.Errorf("read state store: %w", err)
		}
		e.needFull = "state store was unreadable: " + err.Error()
		l = &loaded{files: map[string]*record{}, reads: map[string]time.Time{}, skips: map[string]string{}}
	}
	e.files, e.reads, e.skips = l.files, l.reads, l.skips
	if t, err := time.Parse(time.RFC3339Nano, e.st.meta("lastSync")); err == nil {
		e.lastSync = t
	}
	e.unfinished = e.st.meta(store.MetaUnfinished)
	if u := e.st.meta(metaUnreadable); u != "" {
		e.unreadable = strings.Split(u, "\n")
	}
	if len(l.pending) > 0 && !e.cfg.ReadOnly {
		if err := e.dropPending(ctx, l.pending); err != nil {
			return err
		}
	}
	if err := e.loadGraph(); err != nil {
		return err
	}
	for _, r := range e.files {
		e.addTotals(r, 1)
	}
	return nil
}

// dropPending undoes a batch a crash interrupted: its paths leave both the
// full-text index and the state, so the next sync indexes them afresh.
func (e *Engine) dropPending(ctx context.Context, paths []string) error {
	b := e.ft.NewBatch()
	changes := make([]change, 0, len(paths))
	for _, p := range paths {
		b.Delete(p)
		changes = append(changes, change{path: p})
		delete(e.files, p)
	}
	seq, err := e.commitBatch(paths, changes, nil, nil) // marked already: this numbers the batch
	if err != nil {
		return fmt.Errorf("repair interrupted batch: %w", err)
	}
	if err := e.ftBatch(b, seq); err != nil {
		return fmt.Errorf("repair interrupted batch: %w", err)
	}
	// Rare, and at open: wait for Bleve and clear the marks, so that the
	// repair is done once.
	return e.flushFulltext()
}

// loadVectors fills the vector store from the state store, where every
// chunk's vector is persisted with its record (measured faster to open than
// chromem-go's own persistence, docs/design.md).
func (e *Engine) loadVectors(ctx context.Context) error {
	byFile := map[string][][]float32{}
	err := e.st.forEachVector(func(path string, chunk int, v []float32) error {
		r := e.files[path]
		if r == nil || chunk >= r.Chunks {
			return nil
		}
		vs := byFile[path]
		if vs == nil {
			vs = make([][]float32, r.Chunks)
			byFile[path] = vs
		}
		vs[chunk] = v
		return nil
	})
	if err != nil {
		return fmt.Errorf("load vectors: %w", err)
	}
	items := make([]vectors.Item, 0, len(byFile))
	for p, vs := range byFile {
		items = append(items, vectorItem(e.files[p], vs))
	}
	if err := e.vec.Put(ctx, items...); err != nil {
		return fmt.Errorf("load vectors: %w", err)
	}
	return nil
}

// vectorItem is what the vector store holds of a memory: its chunk
// vectors, with every ancestor folder and tag as a label a query scope can
// require (chromem-go filters by exact match only).
func vectorItem(r *record, vecs [][]float32) vectors.Item {
	it := vectors.Item{ID: r.Path, Vectors: vecs, Meta: map[string]string{"path": r.Path}}
	for _, f := range vault.Ancestors(r.Path) {
		it.Labels = append(it.Labels, folderLabel(f))
	}
	for _, t := range r.Tags {
		it.Labels = append(it.Labels, tagLabel(t))
	}
	if !r.Created.IsZero() {
		it.Meta["created"] = r.Created.UTC().Format(time.RFC3339)
	}
	return it
}

func folderLabel(f string) string { return "folder:" + f }
func tagLabel(t string) string    { return "tag:" + t }

func (e *Engine) addTotals(r *record, sign int64) {
	for i := range e.totals {
		e.totals[i] += sign * int64(r.Lens[i])
	}
}

// Close flushes state and releases the index. A change to a memory file
// under way finishes first, and none starts after: once the lock is let go
// another serve may take the index over and write the same files, and a
// late read-modify-write from this one would undo what it acknowledged.
func (e *Engine) Close() error {
	if !e.closed.CompareAndSwap(false, true) {
		return nil // already closed: the pid file may belong to a new writer now
	}
	e.writeMu.Lock()
	defer e.writeMu.Unlock()
	var errs []error
	if e.ft != nil {
		if !e.cfg.ReadOnly {
			errs = append(errs, e.flushFulltext())
		}
		errs = append(errs, e.ft.Close())
	}
	if e.st != nil {
		if !e.cfg.ReadOnly {
			store.RemovePID(e.cfg.IndexDir)
		}
		errs = append(errs, e.st.close())
	}
	return errors.Join(errs...)
}

// Status describes the engine and its indexes.
func (e *Engine) Status(ctx context.Context) (Status, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	s := Status{
		MemoryDir:    e.root,
		IndexDir:     e.cfg.IndexDir,
		Files:        len(e.files),
		Chunks:       e.vec.Len(),
		Embedder:     e.emb.Name(),
		Dimensions:   e.dim,
		LastError:    e.lastError,
		FullTextSize: fulltext.Size(filepath.Join(e.cfg.IndexDir, fulltext.Dir)),
		StateSize:    e.st.size(),
		LastSync:     e.lastSync,
		Indexing:     e.indexing.Load() || e.unfinished != "",
		Unfinished:   e.unfinished,
		ReadOnly:     e.cfg.ReadOnly,
		Skipped:      []Skip{},
		Warnings:     []Warning{},
		Graph:        e.graphStatus(),
	}
	if err := e.damaged(); err != nil {
		s.Damaged = err.Error()
	}
	for p, why := range e.skips {
		s.Skipped = append(s.Skipped, Skip{Path: p, Reason: why})
	}
	for _, f := range e.unreadable {
		s.Skipped = append(s.Skipped, Skip{Path: f + "/", Reason: shutReason})
	}
	for p, r := range e.files {
		for _, w := range r.Warnings {
			s.Warnings = append(s.Warnings, Warning{Path: p, Message: w})
		}
	}
	if o, ok := e.emb.(interface{ Offline() error }); ok {
		if err := o.Offline(); err != nil {
			s.EmbedderError = err.Error()
		}
	}
	sortSkips(s.Skipped)
	sortWarnings(s.Warnings)
	return s, nil
}

// building reports whether the index holds only part of the folder because
// a first or full sync is running or was cut short. e.mu must be held.
func (e *Engine) building() bool {
	return e.unfinished != "" || (e.indexing.Load() && (e.lastSync.IsZero() || e.needFull != ""))
}
