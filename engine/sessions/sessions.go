// Package sessions is mnemo's second corpus: agent session transcripts
// (Claude Code, Codex, Gemini CLI, …) read in place, one Bleve document per
// message, scored by the same BM25 (engine/fulltext), the same vectors and
// the same fusion (engine/rank) as memories. It lives in INDEX/sessions/
// with its own state store, so the two corpora never wait on each other's
// writer lock. The readers behind Source own what a message is (active
// branch only, no tools, no thinking) and redact secrets before the index
// ever sees the text.
//
// It never imports engine (the memory corpus), nor engine it: the two
// share only the layers below them (rank, fulltext, store, vectors,
// embed, watch, admit, transcript).
package sessions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"

	"mnemo/engine/admit"
	"mnemo/engine/embed"
	"mnemo/engine/fulltext"
	"mnemo/engine/rank"
	"mnemo/engine/store"
	"mnemo/engine/transcript"
	"mnemo/engine/vectors"
)

// sessionsDir is the sessions index, inside the index folder.
const sessionsDir = "sessions"

// sessionsFormat versions what the sessions index keeps beyond the shared
// schema: "2" adds each transcript's line coverage, which only a read from
// the start can fill, so an index of an older format is read again whole
// (archived sessions are kept, and re-indexed from the store).
const (
	metaSessionsFormat = "sessionsFormat"
	sessionsFormat     = "2"
)

// sessionsSchema is the schema the sessions state store is written at:
// store.SchemaVersion's 6, then 7 for texts kept in blocks (texts.go) and
// vectors kept in 8 bits (vectors.Code). A mnemo that reads 6 would find
// no text and misread every vector in a store of 7, so the schema moved
// for this store alone — an older mnemo refuses it (store.CheckSchema) —
// and not for the memory index, which did not change. A store of 6
// (convertibleSchema) is not rebuilt: a writer's open converts it in
// place, having first marked it 7 (markConverting).
const (
	sessionsSchema    = 7
	convertibleSchema = 6
)

// Source is one root folder of one transcript format: what the index
// needs of a parser. Implementations must deliver only redacted text.
type Source interface {
	// Kind names the format ("claude-code", "codex", …).
	Kind() string
	// Root is the folder the source reads.
	Root() string
	// Discover lists every transcript the source owns, and what it skipped and why.
	Discover(ctx context.Context) (paths []string, skipped []store.Skip, err error)
	// Owns reports whether path (a file or a folder, existing or not) belongs to the source.
	Owns(path string) bool
	// Read reads one transcript from cursor (nil: from the start) and returns
	// the session and the cursor to resume from. If messages already read
	// have changed (a rewrite, a rewind), it calls h.Reset once before any
	// h.Message and then delivers the whole session again.
	Read(ctx context.Context, path string, cursor []byte, h TranscriptHandler) (TranscriptRead, error)
}

// TranscriptHandler receives what Read finds.
type TranscriptHandler struct {
	Reset   func() error
	Message func(TranscriptMessage) error
}

// TranscriptMessage is one user or assistant message, already redacted.
type TranscriptMessage struct {
	ID        string
	Role      string // "user" or "assistant"
	Timestamp time.Time
	Text      string
}

// TranscriptRead is what one Read learnt about its transcript.
type TranscriptRead struct {
	Session   Info
	Cursor    []byte
	Malformed int // lines skipped as malformed
	Ignored   int // records of unknown types
	// Coverage accounts for every line this read consumed: indexed, or
	// left out for a named reason. With Coverage.Whole the counts cover the
	// whole transcript and replace what earlier reads counted; otherwise
	// they add to it.
	Coverage transcript.Coverage
}

// Info describes one session (one transcript).
type Info struct {
	ID          string    `json:"sessionId"`
	Agent       string    `json:"sourceAgent"`
	Project     string    `json:"project"`
	ProjectHash string    `json:"-"`
	Path        string    `json:"path"`
	Summary     string    `json:"summary,omitempty"`
	Started     time.Time `json:"started,omitzero"`
	Ended       time.Time `json:"ended,omitzero"`
}

// Config says where the sessions index lives and what it reads.
type Config struct {
	IndexDir string         // the index folder; the sessions index is IndexDir/sessions
	Sources  []Source       // the transcript roots to index
	Embedder embed.Embedder // nil means the built-in static embedder
	Fusion   rank.Fusion    // default WeightedSum
	Ranking  *rank.Ranking  // nil means the sessions' DefaultRanking()
	ReadOnly bool           // search an existing index; Sync returns ErrReadOnly
	// MirrorDeleted makes the index mirror the transcripts: a session whose
	// transcript is gone (or whose source is no longer configured) leaves
	// the index. By default it stays, archived: searchable and readable
	// from what the index stores, until forgotten (Forget).
	MirrorDeleted bool
	// Progress, if set, is called during Sync with transcripts done and total.
	Progress func(done, total int)
	// Admit is the process's search gate, shared with the memory corpus
	// (engine.Config.Admit): every Search waits its turn there. nil admits every
	// search at once.
	Admit *admit.Gate
}

// Corpus is an open sessions index. It is safe for concurrent use.
type Corpus struct {
	cfg  Config
	dir  string
	emb  embed.Embedder
	rank rank.Ranking
	dim  int

	st  *sessionStore
	ft  *fulltext.Index
	vec *vectors.Flat // one item per message, 8 bits a dimension
	// vec is loaded when a query (or Status) first needs it
	// (vectorsLoaded): a full-text query, a cold CLI query's open and a
	// no-op sync need none of it.
	vecOnce  sync.Once
	vecErr   error
	vecLoads atomic.Int32 // how many times vec was loaded: once (tests check)
	vecScans atomic.Int64 // how many queries scanned every vector in scope (tests check)
	vecReady atomic.Bool  // vec holds every stored vector (vectorsLoaded succeeded)

	syncMu    sync.Mutex
	batchMsgs int // messages per batch: batchMessages (tests set fewer)
	readers   int // sync workers: 0 is GOMAXPROCS; -1 none, the committer reads every transcript (tests)
	indexing  atomic.Bool
	closed    atomic.Bool
	// damage is what was found wrong with the full-text index, at open or
	// by a query: read-only, the damaged index is all there is; a writer
	// has replaced it by an empty one, or keeps it until its next sync
	// rebuilds. Text searches refuse to answer from either.
	damage store.DamageMark

	mu        sync.RWMutex // guards everything below
	sessions  map[uint32]*session
	byPath    map[string]*session
	cols      msgCols // the live messages, by number (msgcols.go)
	nextSID   uint32
	totals    [fulltext.NumFields]int64
	skips     map[string][]store.Skip // by source key
	forgotten map[[32]byte]string     // forgotten transcripts: path hash → source key
	srcErrs   map[string]string       // by source key: why Discover failed
	lastSync  time.Time
	lastError string
	needFull  string
	// unfinished says when a first or full sync began that has not
	// completed, or one that committed a transcript in slices: until one
	// does, the index holds part of the transcripts.
	unfinished string
	// recovered is what each set-aside copy of a damaged state store gave
	// back of its archived sessions, by copy name.
	recovered map[string]Recovery
	// purging is the purge mark of a forget whose files are not all
	// rewritten yet ("" when none is).
	purging string
	// msgsGen changes whenever a message number may come to mean another
	// message (a message dropped, its number free; the columns reset):
	// what docs learnt of message numbers holds while it stands. A
	// message added takes a free number or a new one, which no document
	// resolved to before.
	msgsGen uint64
	// docs is the full-text index's document numbers resolved to messages
	// (its own lock: searches fill it under the read lock).
	docs docCache

	// pre is what preload read of the store while the open verified it,
	// until the open's load takes it.
	pre *preloaded
	// storeLoads counts the loads that read the store after verify rather
	// than take the preload (tests check).
	storeLoads int
}

// Index is the sessions corpus as a front end reaches it: what the
// MCP session tools and the sessions commands call. *Corpus implements
// it, and so does a client of the serve that holds the index
// (cmd/mnemo/remote).
type Index interface {
	Search(ctx context.Context, q Query) (Page, error)
	GetSession(ctx context.Context, id string, offset, limit int) (View, error)
	GetMessage(ctx context.Context, id, messageID string, n int) (View, error)
	Sync(ctx context.Context, full bool) (Report, error)
	Status(ctx context.Context) (Status, error)
	List(ctx context.Context, q ListQuery) (Listing, error)
	Forget(ctx context.Context, q ForgetQuery) (ForgetReport, error)
}

var _ Index = (*Corpus)(nil)

// sourceKey names a source in the state store and in Status.
func sourceKey(kind, root string) string { return kind + "=" + root }

// sessionsVectorWeight is the semantic list's weight in a hybrid sessions
// search: half the memories' (rank.DefaultRanking's 0.5). Messages are
// short and many share one BM25 score, so with the built-in embedder the
// similarity decided their order and pushed text matches out of the top
// 10. Measured at 0.25 against 0.5, nothing else changed: needle recall@10
// on the 100k scale history .923 → .933, the sessions bench msg / sess
// nDCG@10 .494 / .803 → .496 / .804 (docs/benchmarks.md); 0 (text only)
// gives .943 recall but no semantic evidence at all.
const sessionsVectorWeight = 0.25

// DefaultRanking is rank.DefaultRanking with the sessions' vector weight.
func DefaultRanking() rank.Ranking {
	r := rank.DefaultRanking()
	r.VectorWeight = sessionsVectorWeight
	return r
}

// Open opens (creating if needed) the sessions index in
// cfg.IndexDir/sessions. A batch a crash interrupted is undone here; a
// damaged or outdated index is rebuilt by the next Sync.
func Open(ctx context.Context, cfg Config) (*Corpus, error) {
	if cfg.IndexDir == "" {
		return nil, errors.New("index folder is not set")
	}
	if cfg.Ranking == nil {
		rk := DefaultRanking()
		cfg.Ranking = &rk
	}
	fusion, rk, err := rank.Settings(cfg.Fusion, cfg.Ranking)
	if err != nil {
		return nil, err
	}
	emb, err := embed.OrBuiltin(cfg.Embedder)
	if err != nil {
		return nil, err
	}
	cfg.Fusion = fusion
	s := &Corpus{cfg: cfg, dir: filepath.Join(cfg.IndexDir, sessionsDir), emb: emb, rank: rk, batchMsgs: batchMessages}
	o := sessionStoreOptions(cfg.ReadOnly)
	o.Preload = s.preload
	if err := store.OpenCorpus(ctx, s.dir, o, time.Now, s.open, s.Close); err != nil {
		return nil, err
	}
	return s, nil
}

// open is Open's stages once the state store db is open (rebuild:
// why the index must be rebuilt, when a fresh store replaced a damaged one).
func (s *Corpus) open(ctx context.Context, db *bolt.DB, rebuild string) error {
	s.st, s.needFull = newSessionStore(db), rebuild
	meta := s.st.metaAll()
	if err := s.checkMeta(meta); err != nil {
		return err
	}
	if err := s.openFulltext(); err != nil {
		return err
	}
	if err := s.resetMemory(); err != nil {
		return err
	}
	if t, err := time.Parse(time.RFC3339Nano, meta["lastSync"]); err == nil {
		s.lastSync = t
	}
	s.unfinished, s.purging = meta[store.MetaUnfinished], meta[metaPurge]
	if err := s.loadState(ctx, meta); err != nil {
		return err
	}
	if s.needFull == "" {
		if n, err := s.ft.DocCount(); err == nil && int(n) != s.cols.live {
			s.needFull = fmt.Sprintf("full-text index holds %d messages, state store %d", n, s.cols.live)
		}
	}
	s.releasePages()
	return nil
}

// releasePages lets go of the state store's pages that the open (or a
// read-only corpus's first vector load) read whole and no query reads
// again: they would stay in the process's RSS (store.ReleasePages). A
// failure costs only memory, so it is not an error of the open.
func (s *Corpus) releasePages() {
	s.st.pages.Release()
}

// checkMeta compares what the stored meta says the index was built with
// (schema, format, embedder) with this build, noting what asks for a rebuild.
func (s *Corpus) checkMeta(meta map[string]string) error {
	if err := store.CheckSchemaOf(s.dir, meta["schema"], sessionsSchema); err != nil {
		return err
	}
	if v, older := store.OlderSchemaOf(meta["schema"], sessionsSchema); older && v != convertibleSchema {
		s.needFull = fmt.Sprintf("sessions index schema %d is older than %d", v, sessionsSchema)
	} else if v != 0 && meta[metaSessionsFormat] != sessionsFormat {
		s.needFull = "the sessions index predates per-line coverage; reading the transcripts again"
	}
	s.dim = s.emb.Dim()
	if stored, _ := strconv.Atoi(meta["dim"]); s.dim == 0 && meta["embedder"] == s.emb.Name() {
		s.dim = stored
	}
	if name := meta["embedder"]; name != "" && (name != s.emb.Name() || meta["dim"] != strconv.Itoa(s.dim)) {
		if s.cfg.ReadOnly {
			return fmt.Errorf("sessions index was embedded with %s (dim %s), not %s: %w", name, meta["dim"], s.emb.Name(), store.ErrIndexIncompatible)
		}
		s.needFull = fmt.Sprintf("embedder changed from %s to %s", name, s.emb.Name())
	}
	return nil
}

// openFulltext opens the full-text index; a writer that finds it
// unreadable starts an empty one and notes the rebuild.
func (s *Corpus) openFulltext() error {
	ftPath, err := s.fulltextPath()
	if err != nil {
		return err
	}
	ft, err := fulltext.Open(ftPath, !s.cfg.ReadOnly, fulltext.DurableBatches, nil)
	if err != nil && !s.cfg.ReadOnly && !errors.Is(err, store.ErrIndexNotReady) {
		if rmErr := os.RemoveAll(ftPath); rmErr != nil {
			return fmt.Errorf("%w (and removing it failed: %v)", err, rmErr)
		}
		s.needFull = "full-text index was unreadable: " + err.Error()
		s.noteDamage(err)
		ft, err = fulltext.Open(ftPath, true, fulltext.DurableBatches, nil)
	}
	if err != nil {
		return err
	}
	s.noteDamage(ft.Damage())
	s.ft = ft
	return nil
}

// loadState reads what the state store holds: archived sessions recovered
// from a set-aside copy, recoveries, forgotten transcripts, pending marks
// repaired, the sessions themselves, and a forget cut short finished.
func (s *Corpus) loadState(ctx context.Context, meta map[string]string) error {
	var err error
	if !s.cfg.ReadOnly && !s.cfg.MirrorDeleted && meta[metaPurge] == "" {
		got, err := s.recoverArchived()
		if err != nil {
			return err
		}
		for _, r := range got {
			// Recovered sessions are in the store only: the rebuild
			// indexes them. A copy that gave nothing asks for none.
			if r.Recovered > 0 || s.needFull != "" {
				s.noteRebuild(r.Summary())
			}
		}
	}
	if s.recovered, err = s.st.recoveries(); err != nil {
		return fmt.Errorf("read sessions state store: %w", err)
	}
	if s.forgotten, err = s.st.loadForgotten(); err != nil {
		return fmt.Errorf("read sessions state store: %w", err)
	}
	if !s.cfg.ReadOnly {
		if err := s.repairPending(); err != nil {
			return err
		}
		if err := s.st.markConverting(meta); err != nil {
			return err
		}
		if meta[metaVectorForm] != vectorFormCode && s.dim > 0 {
			if _, err := s.st.convertVectors(s.dim); err != nil {
				return err
			}
		}
		if meta[metaTextForm] != textFormBlocks {
			if _, err := s.st.convertTexts(); err != nil {
				return err
			}
		}
	}
	if err := s.load(ctx); err != nil {
		if s.cfg.ReadOnly {
			return fmt.Errorf("read sessions state store: %w", err)
		}
		s.needFull = "state store was unreadable: " + err.Error()
		if err := s.resetMemory(); err != nil {
			return err
		}
		// Nothing to load from a store that does not read: the rebuild
		// puts every vector as it indexes.
		s.vecOnce.Do(func() {})
	}
	if meta[metaPurge] != "" && !s.cfg.ReadOnly {
		// A forget was cut short: finish rewriting what may hold its words.
		if _, err := s.purge(ctx); err != nil {
			return fmt.Errorf("finish an interrupted forget: %w", err)
		}
	}
	return nil
}

// noteRebuild adds why to the reasons the next sync must rebuild.
func (s *Corpus) noteRebuild(why string) {
	if s.needFull == "" {
		s.needFull = why
	} else {
		s.needFull += "; " + why
	}
}

func (s *Corpus) noteDamage(err error) { s.damage.Note(err) }
func (s *Corpus) damaged() error       { return s.damage.Get() }

func (s *Corpus) resetMemory() error {
	s.sessions = map[uint32]*session{}
	s.byPath = map[string]*session{}
	s.cols = newMsgCols()
	s.msgsGen++
	s.nextSID = 1
	s.totals = [fulltext.NumFields]int64{}
	s.skips = map[string][]store.Skip{}
	s.srcErrs = map[string]string{}
	s.vec = vectors.NewFlat(s.dim, s.docKey)
	return nil
}

// docKey appends message n's document id to buf: what the vector store
// groups and orders ties by, as it did when it held the ids. Flat calls
// it under its own lock while the caller holds s.mu, so the columns hold
// still.
func (s *Corpus) docKey(buf []byte, n uint32) []byte {
	return appendDocID(buf, s.cols.sid[n], s.cols.seq[n])
}

// load fills the in-memory sessions and the message columns from the
// state store (the vectors wait for vectorsLoaded): from what preload read
// beside the open's verify when the store is still as it read it (no
// transaction committed since), else from the store, here.
func (s *Corpus) load(ctx context.Context) error {
	pre := s.pre
	s.pre = nil
	return s.st.db.View(func(tx *bolt.Tx) error {
		if pre != nil && pre.txid == tx.ID() {
			s.adopt(pre.c)
			return nil
		}
		s.storeLoads++
		return s.loadTx(tx, nil)
	})
}

// preloaded is what preload read, as of the transaction txid.
type preloaded struct {
	txid int
	c    *Corpus // its sessions, byPath, cols, nextSID, totals and skips
}

// preload is the state store's Options.Preload: the load, into a corpus
// of its own, on the open's second core while verify reads the whole
// store (at 1M messages ~0.33 s of CPU each, one after the other before:
// docs/design.md, "An open in two halves"). Nothing
// of s is touched but s.pre, set only when the load succeeded; the open
// takes it (load) only once verify found nothing wrong.
func (s *Corpus) preload(tx *bolt.Tx, tend func()) error {
	s.pre = nil
	p := &Corpus{st: newSessionStore(tx.DB())}
	if err := p.resetMemory(); err != nil {
		return err
	}
	if err := p.loadTx(tx, tend); err != nil {
		return err
	}
	s.pre = &preloaded{txid: tx.ID(), c: p}
	return nil
}

// adopt takes what p loaded as s's sessions and messages.
func (s *Corpus) adopt(p *Corpus) {
	s.sessions, s.byPath, s.cols, s.nextSID, s.totals, s.skips = p.sessions, p.byPath, p.cols, p.nextSID, p.totals, p.skips
	s.msgsGen += p.msgsGen
}

// tendEvery is how many message records a preload reads between calls of
// its tend (store.Options.Preload): ~5 ms of reading.
const tendEvery = 1 << 14

// loadTx fills the in-memory sessions and the message columns from tx.
// Message records are decoded straight into the columns
// (messageColsIn): nothing is allocated per message. tend, if set, is
// called every tendEvery records.
func (s *Corpus) loadTx(tx *bolt.Tx, tend func()) error {
	err := sessionsIn(tx, func(r sessionRec) error {
		ss := &session{sessionRec: r}
		s.sessions[r.SID] = ss
		if cur := s.byPath[r.Path]; cur == nil || (cur.archived() && (!r.archived() || r.Archived.After(cur.Archived))) {
			s.byPath[r.Path] = ss // a live session holds its path before an archived one
		}
		s.nextSID = max(s.nextSID, r.SID+1)
		return nil
	})
	if err != nil {
		return err
	}
	reserve := 0
	for _, ss := range s.sessions {
		reserve += int(min(ss.NextSeq, maxSeqGap)) // seqs are dense: about its messages
	}
	s.cols.reserve(reserve)
	var ss *session
	read := 0
	err = messageColsIn(tx, &s.cols, func(sid, seq uint32, m colRec) error {
		if read++; tend != nil && read%tendEvery == 0 {
			tend()
		}
		if ss == nil || ss.SID != sid {
			if ss = s.sessions[sid]; ss == nil {
				return nil
			}
		}
		_, err := s.addMessage(ss, seq, m)
		return err
	})
	if err != nil {
		return err
	}
	s.skips = skipsIn(tx)
	return nil // vectorsLoaded reads the vectors on first need
}

// vectorsLoaded makes sure vec holds every message's vector, loading them
// here, once, when a query (or Status) first needs them: at 1M messages
// they are ~110 MB of heap and a third of an open's CPU, which a cold
// full-text query or a no-op sync would spend for nothing. Concurrent
// first callers wait for the one load. The caller holds s.mu, read or
// write, and everything that changes the messages or vec (a batch's
// applyMemory, a forget, a reset) holds it to write, so nothing changes
// under the load. A writer's sync may have put vectors before it: a
// batch commits its vectors to the store before it puts them in vec, so
// the load puts the same codes again (a message not yet in the columns,
// between a commit and its applyMemory, is passed over, and applyMemory
// puts it).
func (s *Corpus) vectorsLoaded() error {
	// Not the caller's ctx: a first query cancelled mid-load must not
	// leave the corpus without vectors for the next one.
	s.vecOnce.Do(func() {
		s.vecErr = s.loadVectors(context.Background())
		s.vecReady.Store(s.vecErr == nil)
		s.releasePages()
	})
	return s.vecErr
}

// LoadVectors loads every message's vector now rather than when a query
// first needs them (vectorsLoaded), and is a no-op once they are. A
// long-lived process calls it when it starts: at 1M messages the load is
// ~1 s of CPU and ~110 MB of heap that its first query needing a full
// vector scan would otherwise pay, in its latency, in the middle of its
// work. A one-shot command leaves them to the query that needs them.
func (s *Corpus) LoadVectors() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.vectorsLoaded()
}

// loadVectors fills the vector store from the state store, for the
// messages in the columns: the stored codes go in as they are, with each
// session's labels interned once per role.
func (s *Corpus) loadVectors(ctx context.Context) error {
	s.vecLoads.Add(1)
	s.vec.Reserve(s.cols.live)
	var ss *session
	sets := map[uint8]vectors.LabelSet{} // of ss, by role
	err := s.st.forEachVector(s.dim, func(sid, seq uint32, c vectors.Code) error {
		if ss == nil || ss.SID != sid {
			if ss = s.sessions[sid]; ss == nil {
				return nil
			}
			clear(sets)
		}
		n := ss.num(seq)
		if n == noMsg {
			return nil
		}
		return s.vec.PutCode(n, s.labelSet(ss, n, sets), c)
	})
	if err != nil {
		return fmt.Errorf("load session vectors: %w", err)
	}
	return nil
}

// labelSet is the vector store's label set of message n of ss, interned
// once per role in sets (ss's, by role).
func (s *Corpus) labelSet(ss *session, n msgNum, sets map[uint8]vectors.LabelSet) vectors.LabelSet {
	r := s.cols.role[n]
	set, ok := sets[r]
	if !ok {
		set = s.vec.Labels(vectorLabels(ss, s.cols.roles[r]))
		sets[r] = set
	}
	return set
}

// vectorLabels are a message's exact-match labels, what a query can
// require exactly: its role, its session's agent and id.
func vectorLabels(ss *session, role string) []string {
	return []string{"role:" + role, "agent:" + strings.ToLower(ss.Agent), "session:" + ss.ID}
}

// addMessage puts one message into the columns (not the vectors),
// replacing the one of the same seq.
func (s *Corpus) addMessage(ss *session, seq uint32, m colRec) (msgNum, error) {
	if old := ss.num(seq); old != noMsg {
		s.dropMessage(old)
	}
	n := s.cols.add(ss.SID, seq, m.role, m.time, m.lens)
	if err := ss.setNum(seq, n); err != nil {
		s.cols.remove(n)
		return noMsg, err
	}
	for i := range s.totals {
		s.totals[i] += int64(m.lens[i])
	}
	return n, nil
}

// dropMessages removes every message of ss.
func (s *Corpus) dropMessages(ss *session) {
	ss.each(func(_ uint32, n msgNum) { s.dropMessage(n) })
}

// dropMessage removes message n from the columns, its session and the
// vectors.
func (s *Corpus) dropMessage(n msgNum) {
	for i := range s.totals {
		s.totals[i] -= int64(s.cols.lens[n][i])
	}
	s.vec.Delete(n)
	if ss := s.sessions[s.cols.sid[n]]; ss != nil {
		ss.clearNum(s.cols.seq[n])
	}
	s.cols.remove(n)
	s.msgsGen++
}

// Close flushes state and releases the index.
func (s *Corpus) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	var errs []error
	if s.ft != nil {
		errs = append(errs, s.ft.Close())
	}
	if s.st != nil {
		if !s.cfg.ReadOnly {
			store.RemovePID(s.dir)
		}
		errs = append(errs, s.st.close())
	}
	return errors.Join(errs...)
}

// Status describes the sessions index, source by source.
type Status struct {
	IndexDir string `json:"indexDir"`
	Sessions int    `json:"sessions"`
	Archived int    `json:"archived"` // of Sessions, those whose transcript is gone
	Messages int    `json:"messages"`
	Vectors  int    `json:"vectors"`
	// Coverage sums the sources' coverage.
	Coverage  transcript.Coverage `json:"coverage"`
	Embedder  string              `json:"embedder"`
	LastSync  time.Time           `json:"lastSync,omitzero"`
	LastError string              `json:"lastError,omitempty"`
	Indexing  bool                `json:"indexing"` // a sync is running, or a sync that left the index partial was cut short
	// Unfinished says which sync was cut short while the index held part of
	// its transcripts: a first or full sync, or one cut between the slices
	// of a long transcript. A completed Sync clears it.
	Unfinished string          `json:"unfinished,omitempty"`
	ReadOnly   bool            `json:"readOnly"`
	Sources    []SourceStatus  `json:"sources"`
	FullText   int64           `json:"fullTextBytes"`
	State      int64           `json:"stateBytes"`
	Other      []SourceSummary `json:"otherSources,omitempty"` // indexed sessions of sources no longer configured
	// Damaged says what is wrong with a damaged full-text index; the next
	// sync of a writer rebuilds it, and until then text searches fail with
	// ErrIndexDamaged.
	Damaged string `json:"damaged,omitempty"`
	// Recovery says, for each set-aside copy of a damaged state store,
	// how many archived sessions were recovered from it and how many were
	// lost, and why: their transcripts are gone, so the copy held them.
	Recovery []Recovery `json:"recovery,omitempty"`
	// ForgetUnfinished names a forget that was cut short before every file
	// was rewritten: its sessions are in no answer, but their words may
	// remain in the index's files until a writer opens the index (a sync,
	// serve, another forget), which finishes the rewrite first.
	ForgetUnfinished string `json:"forgetUnfinished,omitempty"`
}

// SourceStatus is one configured source: its root, what it holds and what it skipped.
type SourceStatus struct {
	Kind      string `json:"kind"`
	Root      string `json:"root"`
	Exists    bool   `json:"exists"`
	Sessions  int    `json:"sessions"`
	Archived  int    `json:"archived"` // of Sessions, those whose transcript is gone
	Messages  int    `json:"messages"`
	Malformed int    `json:"malformedLines"`
	// Coverage accounts for every line read of this source's transcripts
	// (archived ones included): lines indexed, lines left out by reason,
	// broken parent links repaired. Indexed plus every reason equals lines.
	Coverage transcript.Coverage `json:"coverage"`
	Error    string              `json:"error,omitempty"`
	Skipped  []store.Skip        `json:"skipped"`
	// SkippedBy counts the files not read, by reason (unreadable, a
	// symbolic link, subagent transcripts, …).
	SkippedBy map[string]int `json:"skippedByReason"`
	// Forgotten counts transcripts left out because their session was
	// forgotten (Forget) while the transcript was still there.
	Forgotten int `json:"forgotten"`
}

// skipKind is the reason of a skip without its details: the words before
// the first colon or parenthesis, and a leading count as the number of files
// it stands for ("3 subagent transcripts (not indexed by default)").
func skipKind(reason string) (string, int) {
	n := 1
	if i := strings.IndexByte(reason, ' '); i > 0 {
		if v, err := strconv.Atoi(reason[:i]); err == nil && v > 0 {
			n, reason = v, reason[i+1:]
		}
	}
	if i := strings.IndexAny(reason, ":("); i >= 0 {
		reason = reason[:i]
	}
	return strings.TrimSpace(reason), n
}

// SourceSummary counts the indexed sessions of one source key.
type SourceSummary struct {
	Source   string `json:"source"`
	Sessions int    `json:"sessions"`
	Archived int    `json:"archived"`
}

// Status describes the index and every configured source.
func (s *Corpus) Status(ctx context.Context) (Status, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.vectorsLoaded(); err != nil {
		return Status{}, err
	}
	st := Status{
		IndexDir: s.dir, Sessions: len(s.sessions), Messages: s.cols.live, Vectors: s.vec.Len(),
		Embedder: s.emb.Name(), LastSync: s.lastSync, LastError: s.lastError,
		Indexing: s.indexing.Load() || s.unfinished != "", Unfinished: s.unfinished, ReadOnly: s.cfg.ReadOnly, Sources: []SourceStatus{},
		FullText: fulltext.Size(filepath.Join(s.dir, fulltext.Dir)), State: s.st.size(), ForgetUnfinished: s.purging,
	}
	if err := s.damaged(); err != nil {
		st.Damaged = err.Error()
	}
	known := map[string]bool{}
	for _, src := range s.cfg.Sources {
		key := sourceKey(src.Kind(), src.Root())
		known[key] = true
		ss := SourceStatus{Kind: src.Kind(), Root: src.Root(), Error: s.srcErrs[key], Skipped: append([]store.Skip{}, s.skips[key]...),
			SkippedBy: map[string]int{}}
		for _, k := range ss.Skipped {
			kind, n := skipKind(k.Reason)
			ss.SkippedBy[kind] += n
		}
		for _, src := range s.forgotten {
			if src == key {
				ss.Forgotten++
			}
		}
		if fi, err := os.Stat(src.Root()); err == nil && fi.IsDir() {
			ss.Exists = true
		}
		for _, x := range s.sessions {
			if x.Source == key {
				ss.Sessions++
				ss.Messages += x.count
				ss.Malformed += x.Malformed
				ss.Coverage.Add(x.Coverage)
				if x.archived() {
					ss.Archived++
				}
			}
		}
		st.Coverage.Add(ss.Coverage)
		st.Sources = append(st.Sources, ss)
	}
	other := map[string]*SourceSummary{}
	for _, x := range s.sessions {
		if x.archived() {
			st.Archived++
		}
		if !known[x.Source] {
			o := other[x.Source]
			if o == nil {
				o = &SourceSummary{Source: x.Source}
				other[x.Source] = o
			}
			o.Sessions++
			if x.archived() {
				o.Archived++
			}
		}
	}
	for _, o := range other {
		st.Other = append(st.Other, *o)
	}
	sort.Slice(st.Other, func(i, j int) bool { return st.Other[i].Source < st.Other[j].Source })
	for _, r := range s.recovered {
		st.Recovery = append(st.Recovery, r)
	}
	sort.Slice(st.Recovery, func(i, j int) bool { return st.Recovery[i].SetAside < st.Recovery[j].SetAside })
	return st, nil
}
