package sessions

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"mnemo/engine/fulltext"
	"mnemo/engine/transcript"
)

// The sync pipeline. Workers, one per core, take a run's transcripts in
// order and read each one once — decoded, redacted, analysed and embedded —
// handing what it delivers to the committer in parts of at most
// a batch's eighth, a long transcript as it is read. The committer
// (Corpus.run, one goroutine) replays each read, in the order of the jobs,
// through the handler a read on its own goroutine uses: numbering,
// batching, slicing and every write stay there, so the index is the one a
// serial sync leaves, whatever the number of workers.
//
// Memory is bounded whatever the corpus: the parts not yet replayed hold at
// most 2 × batchMsgs messages between them, besides those of the
// transcript the committer replays, which never waits for room (so the
// workers always make progress in the committer's order) and holds at most
// partsAhead parts; each worker fills one part at a time.

// partsAhead is how many parts of one transcript may wait for the committer.
const partsAhead = 4

// readPart is a run of what one read delivered, in order, with the
// worker's analysis and vectors.
type readPart struct {
	events []readEvent
	n      int // messages among events
	last   bool
	// With last: what the read returned, and its summary analysed.
	res TranscriptRead
	err error
	sum readEvent
}

// readEvent is one call a source made to its handler.
type readEvent struct {
	reset  bool
	m      TranscriptMessage
	fields []*fulltext.Field
	vec    []float32 // nil: not embedded ahead (embedWrites embeds it)
}

// aheadRead is one job as a worker hands it to the committer.
type aheadRead struct {
	k     int // its job
	parts chan *readPart
	quit  chan struct{} // closed by the committer once it wants no more parts
	// Set before the first part is sent:
	read    bool   // read from cursor; false: not read (forgotten, unchanged)
	cursor  []byte // the cursor it was read from
	fi      os.FileInfo
	statErr error
	// Guarded by pipeline.mu: the messages its parts hold against the
	// limit, and whether the committer is through with it.
	held int
	over bool
}

// pipeline is one run's workers and what they hand over.
type pipeline struct {
	s     *Corpus
	jobs  []sessionJob
	ahead []aheadRead
	next  atomic.Int64 // the next job a worker takes
	// partMsgs is the most messages a part holds: a batch's eighth.
	partMsgs int
	cancel   context.CancelFunc
	wg       sync.WaitGroup

	mu      sync.Mutex
	room    *sync.Cond
	held    int // messages in parts sent and not yet replayed
	limit   int
	head    int // the job the committer replays
	stopped bool

	cmu        sync.Mutex
	containers map[string]*sync.Mutex // by container file
}

// errStopped ends a worker's read the committer no longer wants.
var errStopped = errors.New("sessions sync pipeline stopped")

// startPipeline starts the workers over jobs, or returns nil when the
// committer is to read every transcript itself (Corpus.readers < 0).
func (s *Corpus) startPipeline(ctx context.Context, jobs []sessionJob) *pipeline {
	workers := s.readers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(jobs))
	if workers <= 0 {
		return nil
	}
	pl := &pipeline{s: s, jobs: jobs, ahead: make([]aheadRead, len(jobs)), limit: 2 * s.batchMsgs, partMsgs: max(1, s.batchMsgs/8), containers: map[string]*sync.Mutex{}}
	pl.room = sync.NewCond(&pl.mu)
	for i := range pl.ahead {
		pl.ahead[i].k = i
		pl.ahead[i].parts = make(chan *readPart, partsAhead)
		pl.ahead[i].quit = make(chan struct{})
	}
	ctx, pl.cancel = context.WithCancel(ctx)
	for range workers {
		pl.wg.Add(1)
		go pl.work(ctx)
	}
	return pl
}

// stop ends the workers and waits for them: no read runs once it returns.
func (pl *pipeline) stop() {
	if pl == nil {
		return
	}
	pl.mu.Lock()
	pl.stopped = true
	pl.mu.Unlock()
	pl.room.Broadcast()
	pl.cancel()
	pl.wg.Wait()
}

// work reads jobs in order, one at a time, until there are none left or
// the run stops.
func (pl *pipeline) work(ctx context.Context) {
	defer pl.wg.Done()
	w := &pipeWorker{pl: pl, a: pl.s.ft.NewAnalyser()}
	for ctx.Err() == nil {
		k := int(pl.next.Add(1) - 1)
		if k >= len(pl.jobs) {
			return
		}
		w.readJob(ctx, k)
	}
}

// take waits for job k's first part; the committer replays job k from now.
func (pl *pipeline) take(ctx context.Context, k int) (*aheadRead, *readPart, error) {
	pl.mu.Lock()
	pl.head = k
	pl.mu.Unlock()
	pl.room.Broadcast()
	ah := &pl.ahead[k]
	p, err := ah.recv(ctx)
	return ah, p, err
}

// done says the committer is through with job k: a worker still reading
// it stops, and what its parts not replayed hold is free again.
func (pl *pipeline) done(k int) {
	if pl == nil {
		return
	}
	ah := &pl.ahead[k]
	close(ah.quit)
	pl.mu.Lock()
	ah.over = true
	free := ah.held
	pl.held, ah.held = pl.held-free, 0
	pl.mu.Unlock()
	if free > 0 {
		pl.room.Broadcast()
		for len(ah.parts) > 0 { // their memory too
			<-ah.parts
		}
	}
}

// release gives back the room n messages of ah took.
func (pl *pipeline) release(ah *aheadRead, n int) {
	if n == 0 {
		return
	}
	pl.mu.Lock()
	if !ah.over {
		pl.held, ah.held = pl.held-n, ah.held-n
	}
	pl.mu.Unlock()
	pl.room.Broadcast()
}

// hold takes room for n more messages of ah, waiting while the parts not
// yet replayed hold the limit, unless ah is the job the committer replays;
// false once the committer is through with it or the run stops.
func (pl *pipeline) hold(ah *aheadRead, n int) bool {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	for pl.held+n > pl.limit && ah.k != pl.head && !pl.stopped && !ah.over {
		pl.room.Wait()
	}
	if pl.stopped || ah.over {
		return false
	}
	pl.held, ah.held = pl.held+n, ah.held+n
	if pipelineTrace != nil {
		pipelineTrace("held", pl.held)
	}
	return true
}

// pipelineTrace, when set (tests), is told what the parts hold each time
// a worker takes room ("held"), of every transcript the committer reads
// itself although workers read ahead ("read here"), and of every analyser
// a worker renews ("analyser").
var pipelineTrace func(what string, n int)

// inContainer runs fn, a read or a drop of the transcript at path, under
// its container's lock when it is a contained session.
func (pl *pipeline) inContainer(path string, fn func() error) error {
	if mu := pl.container(path); mu != nil {
		mu.Lock()
		defer mu.Unlock()
	}
	return fn()
}

// container is the lock of the container file holding the session at
// path (a database, an export), or nil for a transcript of its own. A read
// of a contained session may extract the whole container into the scratch
// folder, which two reads must not do at once; a read holding the lock
// never waits for the committer, so the lock never waits on the pipeline.
func (pl *pipeline) container(path string) *sync.Mutex {
	if pl == nil || !transcript.Contained(path) {
		return nil
	}
	c := filepath.Dir(path)
	pl.cmu.Lock()
	defer pl.cmu.Unlock()
	mu := pl.containers[c]
	if mu == nil {
		mu = &sync.Mutex{}
		pl.containers[c] = mu
	}
	return mu
}

// recv waits for the job's next part.
func (ah *aheadRead) recv(ctx context.Context) (*readPart, error) {
	select {
	case p := <-ah.parts:
		return p, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// replay makes the calls to h the source made to the worker's handler,
// messages through deliver with the worker's analysis and vectors, part by
// part from first, and returns what the read returned with its last part.
func (pl *pipeline) replay(ctx context.Context, ah *aheadRead, first *readPart, h TranscriptHandler,
	deliver func(TranscriptMessage, []*fulltext.Field, []float32) error) (TranscriptRead, *readPart, error) {
	for p := first; ; {
		for i := range p.events {
			e := &p.events[i]
			var err error
			if e.reset {
				err = h.Reset()
			} else {
				err = deliver(e.m, e.fields, e.vec)
			}
			if err != nil {
				return TranscriptRead{}, nil, err
			}
		}
		pl.release(ah, p.n)
		if p.last {
			return p.res, p, p.err
		}
		var err error
		if p, err = ah.recv(ctx); err != nil {
			return TranscriptRead{}, nil, err
		}
	}
}

// workerMemo is the most words a worker's analyser remembers before it
// is renewed. One batch (batchMessages) of the 100k-message history
// leaves ~24,000 in it, of which all but 2,000–4,000 the next batch
// finds again: renewed every batch, as it was, a worker ran the English
// filters on ~20,000 words a batch again; kept, a worker's memo reaches
// ~61,000 at the end of that sync (about 10 MB).
const workerMemo = 1 << 16

// pipeWorker is what one worker keeps from transcript to transcript.
type pipeWorker struct {
	pl *pipeline
	a  *fulltext.Analyser
}

// readJob reads job k from the cursor its session holds, unless the
// committer has nothing to read (a forgotten transcript, an unchanged
// one), and hands it over in parts. Nothing the committer writes before it
// reaches job k changes that session (each path is one job, and syncs hold
// syncMu); the committer checks anyway (Corpus.readOne).
func (w *pipeWorker) readJob(ctx context.Context, k int) {
	s, j, ah := w.pl.s, w.pl.jobs[k], &w.pl.ahead[k]
	s.mu.RLock()
	_, forgotten := s.forgotten[pathHash(j.path)]
	ss := s.byPath[j.path]
	held := ss != nil && ss.Source == j.key
	var old sessionRec
	if held {
		old = ss.sessionRec
	}
	s.mu.RUnlock()
	if forgotten {
		w.send(ctx, k, &readPart{last: true})
		return
	}
	ah.fi, ah.statErr = os.Stat(j.path)
	if unchanged(old, !held, ah.fi, ah.statErr) {
		w.send(ctx, k, &readPart{last: true})
		return
	}
	ah.read, ah.cursor = true, old.Cursor
	// A contained session is read whole under its container's lock, and
	// handed over once the lock is let go (the reader holds such a session
	// whole anyway); any other is handed over as it is read.
	mu := w.pl.container(j.path)
	p := &readPart{}
	var parts []*readPart
	h := TranscriptHandler{
		Reset: func() error {
			p.events = append(p.events, readEvent{reset: true})
			return nil
		},
		Message: func(m TranscriptMessage) error {
			p.events = append(p.events, readEvent{m: m})
			if p.n++; p.n < w.pl.partMsgs {
				return nil
			}
			if mu != nil {
				parts, p = append(parts, p), &readPart{}
				return nil
			}
			if !w.send(ctx, k, p) {
				return errStopped
			}
			p = &readPart{}
			return nil
		},
	}
	if mu != nil {
		mu.Lock()
	}
	res, err := j.src.Read(ctx, j.path, ah.cursor, h)
	if mu != nil {
		mu.Unlock()
	}
	if errors.Is(err, errStopped) || ctx.Err() != nil {
		return // the committer wants no more, or the run stops
	}
	for _, q := range parts {
		if !w.send(ctx, k, q) {
			return
		}
	}
	p.last, p.res, p.err = true, res, err
	if sum := res.Session.Summary; err == nil && sum != "" {
		p.sum = readEvent{m: TranscriptMessage{Text: sum}}
	}
	w.send(ctx, k, p)
}

// send analyses and embeds p's messages and hands p to the committer as
// job k's next part, once there is room for it; false if the committer
// wants no more of job k or the run stops.
func (w *pipeWorker) send(ctx context.Context, k int, p *readPart) bool {
	w.prepare(ctx, p)
	ah := &w.pl.ahead[k]
	if !w.pl.hold(ah, p.n) {
		return false
	}
	select {
	case ah.parts <- p:
		return true
	case <-ah.quit:
	case <-ctx.Done():
	}
	w.pl.release(ah, p.n) // never replayed: its room is free again
	return false
}

// prepare analyses p's messages (and its summary) and embeds them, in
// calls of embedBatch texts. Vectors the embedder fails to give are left
// for the committer (embedWrites), which embeds them again and reports
// its failure as a serial sync does.
func (w *pipeWorker) prepare(ctx context.Context, p *readPart) {
	var texts []string
	var dst []*readEvent
	for i := range p.events {
		if e := &p.events[i]; !e.reset {
			e.fields = w.a.Message(e.m.Text)
			texts, dst = append(texts, e.m.Text), append(dst, e)
		}
	}
	if p.sum.m.Text != "" {
		p.sum.fields = w.a.Message(p.sum.m.Text)
		texts, dst = append(texts, p.sum.m.Text), append(dst, &p.sum)
	}
	// A fresh analyser once its memos pass workerMemo words, so that they
	// do not grow with the sync; until then each batch finds most of its
	// words analysed by the ones before.
	if w.a.Memo() > workerMemo {
		w.a = w.pl.s.ft.NewAnalyser()
		if pipelineTrace != nil {
			pipelineTrace("analyser", 1)
		}
	}
	for lo := 0; lo < len(texts); lo += embedBatch {
		hi := min(lo+embedBatch, len(texts))
		vs, err := w.pl.s.emb.Embed(ctx, texts[lo:hi])
		if err != nil || len(vs) != hi-lo {
			return
		}
		for i, v := range vs {
			dst[lo+i].vec = v
		}
	}
}

// unchanged reports whether a transcript whose file stats as fi (statErr)
// is what the session old (isNew: none) last read: nothing to read.
func unchanged(old sessionRec, isNew bool, fi os.FileInfo, statErr error) bool {
	return statErr == nil && !fi.IsDir() && !isNew && !old.Partial && fi.Size() == old.Size && fi.ModTime().UnixNano() == old.MtimeNs
}
