package sessions

import (
	"context"
	"math"
	"math/bits"
	"slices"
	"sort"
	"sync"

	"mnemo/engine/fulltext"
	"mnemo/engine/rank"
)

// docCache is the full-text index's document numbers resolved to
// message numbers: a query of common words matches most of the history,
// and reading each match's stored id from its segment, then finding its
// message by that string, cost more than scoring it, so a warm query
// resolves no number it has met before. What it learnt holds across
// snapshots for the numbers of the segments the new one kept
// (fulltext.KeptNumbers): an append adds a segment after the others, a
// merge replaces the few small newest ones, so after either only their
// documents are resolved again (before, every change of the index or of
// the messages dropped all of it, and a serve whose transcripts were
// being written paid a cold resolution on every query: ~0.7 µs a match,
// ~65 ms for a query of common words at 1M messages). A drop of a message
// (msgsGen) drops it all, as its number may come to mean another message;
// a document not resolved to a message is not kept, as its message may
// come after it.
type docCache struct {
	mu     sync.Mutex
	ft     *fulltext.Index // the index snap is of: another (rebuilt, swapped in) keeps nothing
	snap   fulltext.Snapshot
	layout []fulltext.SegmentSpan // snap's
	gen    uint64
	docs   []docEntry // by document number
	reads  uint64     // stored ids read (resolve), for tests
}

// follow readies c for snap of index ft and the corpus's message
// generation gen, keeping what still holds. The caller holds c.mu.
func (c *docCache) follow(ft *fulltext.Index, snap fulltext.Snapshot, gen uint64) {
	if c.ft == ft && c.snap.Same(snap) && c.gen == gen {
		return
	}
	layout := snap.Layout()
	keep := uint64(0)
	if c.ft == ft && c.gen == gen && layout != nil {
		keep = fulltext.KeptNumbers(c.layout, layout)
	}
	c.ft, c.snap, c.layout, c.gen = ft, snap, layout, gen
	c.docs = c.docs[:min(uint64(len(c.docs)), keep)]
}

// docEntry is what a document number resolved to: its message's number +
// 1 (0 not resolved yet, noMsg none), and that message's session, kept
// beside it so that a match reads one cache line, in document order (the
// columns' sid, by message number, is read at random).
type docEntry struct {
	msg msgNum
	sid uint32
}

// resolve is what document num resolves to, read from its stored id and
// kept in c (its message noMsg when the corpus holds none). The caller
// holds c.mu, and s.mu (read or write): msgsGen cannot change under it.
func (s *Corpus) resolve(c *docCache, snap fulltext.Snapshot, num uint64) (docEntry, error) {
	if num >= uint64(len(c.docs)) {
		// grown by a quarter at least: a cold query's hits come in
		// ascending number, and growing to each one allocated a slice a hit
		n := len(c.docs)
		want := max(int(num)+1, n+n/4+4096)
		c.docs = slices.Grow(c.docs, want-n)[:want]
		clear(c.docs[n:]) // what a snapshot before left past n
	}
	ext, err := snap.ExternalID(num)
	if err != nil {
		return docEntry{}, err
	}
	c.reads++
	n := s.messageOf(ext)
	if n == noMsg {
		return docEntry{msg: noMsg}, nil // not kept: its message may come after it
	}
	e := docEntry{n + 1, s.cols.sid[n]}
	c.docs[num] = e
	return e, nil
}

// messageOf is the number of the message of document id ext; noMsg when
// the corpus holds none.
func (s *Corpus) messageOf(ext string) msgNum {
	sid, seq, ok := parseDocID(ext)
	if !ok {
		return noMsg
	}
	ss := s.sessions[sid]
	if ss == nil {
		return noMsg
	}
	return ss.num(seq)
}

// textMatch is one text match in scope, before it is a candidate: its
// message by number only, since a query of common words matches most of
// the history and only the kept ones become items (reading a message's
// columns for each match was 9 % of a hybrid query's CPU at 1M).
type textMatch struct {
	n       msgNum
	sid     uint32  // its session's number (s.cols.sid[n])
	text    float64 // BM25, then divided by the best in scope
	matched int
}

// textCandidates is stage one: the messages in scope that match a query
// term, each with its BM25 score divided by the best one in scope, the
// best k of them when more match (see maxTextCandidates; ties at the cut
// in the page's order), and then the sessions all of them belong to, so
// that totalSessions still counts every session with a match (nil when
// none was dropped). Only the kept matches become candidates.
//
// The hits come from the index a chunk at a time and each is touched
// once (textPass): resolved, held to the scope, counted for the best
// score and the sessions, and kept only if it can still be among the
// best k. Dividing by the best is monotone, so the best k by raw BM25
// are the best k divided, and bestMatches then cuts the few kept exactly
// as it cut every match before (ties included).
func (s *Corpus) textCandidates(ctx context.Context, terms fulltext.Terms, sc sessionScope, k int) ([]msgCandidate, *sidSet, error) {
	t := textPasses.Get().(*textPass)
	defer func() {
		t.s, t.all = nil, nil // a pooled pass holds no corpus alive
		textPasses.Put(t)
	}()
	t.start(s, sc, k)
	err := s.ft.ScoreEach(ctx, terms, fulltext.NewBM25(s.rank), s.totals, t.add)
	if err != nil {
		s.noteDamage(err)
		return nil, nil, err
	}
	cands, all := t.candidates()
	return cands, all, nil
}

// textPass is one query's single pass over its text matches: how many
// are in scope, the best score, the sessions they belong to, and the
// ones that can still be among the best k by raw BM25, in the index's
// order. Passes are pooled for their kept matches' arrays.
type textPass struct {
	s       *Corpus
	sc      sessionScope
	filters bool // asked once: most queries have none, and a match costs a few ns
	k       int
	n       int     // matches in scope
	best    float64 // their best BM25 score (0 for none)
	all     *sidSet // their sessions
	last    uint32  // the session added last: a session's matches mostly come together
	kept    []textMatch
	// floor is what a match must score to be kept: a hair below the k-th
	// best kept at the last cut (see cut), -Inf before it.
	floor  float64
	limit  int // the length of kept that calls for a cut
	scores []float64
	ents   []docEntry // a chunk's hits' entries in the doc cache
}

var textPasses = sync.Pool{New: func() any { return &textPass{} }}

// start readies t for a query of scope sc that keeps k matches.
func (t *textPass) start(s *Corpus, sc sessionScope, k int) {
	*t = textPass{s: s, sc: sc, filters: sc.filters(), k: k, all: &sidSet{}, last: ^uint32(0),
		kept: t.kept[:0], floor: math.Inf(-1), limit: max(2*k, 64), scores: t.scores[:0], ents: t.ents[:0]}
}

// add takes one chunk of the index's hits (ScoreEach's use).
func (t *textPass) add(snap fulltext.Snapshot, hits []fulltext.NumHit) error {
	s := t.s
	c := &s.docs
	c.mu.Lock()
	defer c.mu.Unlock()
	c.follow(s.ft, snap, s.msgsGen)
	// Each hit's entry is read first, in a loop of nothing else, so that
	// the reads of a table of 8 bytes a document (8 MB at 1M messages)
	// wait for memory side by side rather than one a hit.
	ents := t.ents[:0]
	for _, h := range hits {
		var e docEntry
		if h.Num < uint64(len(c.docs)) {
			e = c.docs[h.Num]
		}
		ents = append(ents, e)
	}
	t.ents = ents
	for i, h := range hits {
		e := ents[i]
		if e.msg == 0 {
			var err error
			if e, err = s.resolve(c, snap, h.Num); err != nil {
				return err
			}
		}
		v, sid := e.msg, e.sid
		if v == noMsg || (t.filters && !s.inScope(t.sc, v-1)) {
			continue
		}
		t.n++
		if h.Score > t.best {
			t.best = h.Score
		}
		if sid != t.last {
			t.all.add(sid)
			t.last = sid
		}
		if h.Score >= t.floor {
			t.kept = append(t.kept, textMatch{n: v - 1, sid: sid, text: h.Score, matched: h.Matched})
			if len(t.kept) >= t.limit {
				t.cut()
			}
		}
	}
	return nil
}

// candidates is the pass's kept matches, divided by the best score and
// cut to the best k, as candidates, and the sessions of every match (nil
// when none was dropped).
func (t *textPass) candidates() ([]msgCandidate, *sidSet) {
	matches := t.kept
	for i := range matches {
		matches[i].text /= t.best
	}
	var all *sidSet
	if t.n > t.k {
		all = t.all
		matches = bestMatches(&t.s.cols, matches, t.k)
	}
	cands := make([]msgCandidate, len(matches))
	for i, m := range matches {
		cands[i] = msgCandidate{Rec: t.s.cols.item(m.n), Text: m.text, Matched: m.matched, TextRank: 1}
	}
	return cands, all
}

// cut drops the kept matches that can no longer be among the best k, in
// place and in order. A match below the k-th best score kept so far is
// out, save one so close to it (within 2⁻⁵⁰ of it, relatively) that
// divided by the best it could round to the same quotient as the k-th
// and tie with it at bestMatches' cut: those stay, so that the cut ties
// exactly what dividing every match first tied.
func (t *textPass) cut() {
	t.scores = t.scores[:0]
	for _, m := range t.kept {
		t.scores = append(t.scores, m.text)
	}
	kth := rank.KthLargest(t.scores, t.k)
	t.floor = kth - kth*0x1p-50
	kept := t.kept[:0]
	for _, m := range t.kept {
		if m.text >= t.floor {
			kept = append(kept, m)
		}
	}
	t.kept = kept
	t.limit = max(t.limit, 2*len(kept)) // many ties at the floor: cut less often
}

// bestMatches keeps the k best of ms by score; ties at the cut fill what
// is left in the page's own order of equal scores (newer first, then
// key), not in the order the index handed them over: that is a map's, and
// the same query would keep a different share of them each time.
func bestMatches(c *msgCols, ms []textMatch, k int) []textMatch {
	scores := make([]float64, len(ms))
	for i := range ms {
		scores[i] = ms[i].text
	}
	cut := rank.KthLargest(scores, k)
	kept := make([]textMatch, 0, k)
	type tie struct {
		t  textMatch
		it msgItem // read once, not at every comparison
	}
	var ties []tie
	for _, t := range ms {
		switch {
		case t.text > cut:
			kept = append(kept, t)
		case t.text == cut:
			ties = append(ties, tie{t, c.item(t.n)})
		}
	}
	sort.Slice(ties, func(i, j int) bool { return newerFirst(ties[i].it, ties[j].it) })
	for _, t := range ties[:k-len(kept)] {
		kept = append(kept, t.t)
	}
	return kept
}

// newerFirst is rank.SortCandidates' order of two messages of equal
// score: the newer first, then by key (rank.CandidateBefore's own).
func newerFirst(a, b msgItem) bool {
	return rank.CandidateBefore(&msgCandidate{Rec: a}, &msgCandidate{Rec: b}, rank.ByRelevance)
}

// sidSet is a set of session numbers, one bit each.
type sidSet struct{ words []uint64 }

func (s *sidSet) add(sid uint32) {
	w := int(sid / 64)
	if w >= len(s.words) {
		s.words = append(s.words, make([]uint64, w+1-len(s.words))...)
	}
	s.words[w] |= 1 << (sid % 64)
}

func (s *sidSet) len() int {
	n := 0
	for _, w := range s.words {
		n += bits.OnesCount64(w)
	}
	return n
}
