package sessions

import (
	"context"
	"math"
	"math/bits"
	"sort"
	"sync"

	"mnemo/engine/fulltext"
	"mnemo/engine/rank"
)

// docCache is the full-text index's document numbers resolved to
// message numbers, for one snapshot of the index and one state of the corpus's
// message map (msgsGen): a query of common words matches most of the
// history, and reading each match's stored id from its segment, then
// finding its message by that string, cost more than scoring it. A
// snapshot lasts until the index changes, so a warm query resolves no
// number it has met before. The first query after a change pays what
// every query paid before.
type docCache struct {
	mu   sync.Mutex
	snap fulltext.Snapshot
	gen  uint64
	nums []msgNum // by document number: 0 not resolved yet, noMsg gone, else the message's number + 1
	// by document number: its message's session, read in document order
	// beside nums (the columns' sid, by message number, is read at random)
	sids []uint32
}

// resolve is the hits whose message the corpus holds and sc keeps, each
// with its message. The caller holds s.mu (read or write): msgsGen cannot
// change under it.
func (s *Corpus) resolve(snap fulltext.Snapshot, hits []fulltext.NumHit, sc sessionScope) ([]textMatch, error) {
	c := &s.docs
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.snap.Same(snap) || c.gen != s.msgsGen {
		c.snap, c.gen, c.nums, c.sids = snap, s.msgsGen, c.nums[:0], c.sids[:0]
	}
	out := make([]textMatch, 0, len(hits))
	filters := sc.filters() // asked once: most queries have none, and a match costs a few ns
	for _, h := range hits {
		if h.Num >= uint64(len(c.nums)) {
			c.nums = append(c.nums, make([]msgNum, int(h.Num)+1-len(c.nums))...)
			c.sids = append(c.sids, make([]uint32, int(h.Num)+1-len(c.sids))...)
		}
		if c.nums[h.Num] == 0 {
			ext, err := snap.ExternalID(h.Num)
			if err != nil {
				return nil, err
			}
			c.nums[h.Num] = noMsg
			if n := s.messageOf(ext); n != noMsg {
				c.nums[h.Num], c.sids[h.Num] = n+1, s.cols.sid[n]
			}
		}
		if v := c.nums[h.Num]; v != noMsg && (!filters || s.inScope(sc, v-1)) {
			out = append(out, textMatch{n: v - 1, sid: c.sids[h.Num], text: h.Score, matched: h.Matched})
		}
	}
	return out, nil
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
func (s *Corpus) textCandidates(ctx context.Context, terms fulltext.Terms, sc sessionScope, k int) ([]msgCandidate, *sidSet, error) {
	var matches []textMatch
	err := s.ft.ScoreEach(ctx, terms, fulltext.NewBM25(s.rank), s.totals, func(snap fulltext.Snapshot, hits []fulltext.NumHit) error {
		var err error
		matches, err = s.resolve(snap, hits, sc)
		return err
	})
	if err != nil {
		s.noteDamage(err)
		return nil, nil, err
	}
	var best float64
	for _, t := range matches {
		best = math.Max(best, t.text)
	}
	for i := range matches {
		matches[i].text /= best
	}
	var all *sidSet
	if len(matches) > k {
		all = &sidSet{}
		last := ^uint32(0)
		for _, t := range matches {
			// by document number, a session's matches mostly come together
			if sid := t.sid; sid != last {
				all.add(sid)
				last = sid
			}
		}
		matches = bestMatches(&s.cols, matches, k)
	}
	cands := make([]msgCandidate, len(matches))
	for i, t := range matches {
		cands[i] = msgCandidate{Rec: s.cols.item(t.n), Text: t.text, Matched: t.matched, TextRank: 1}
	}
	return cands, all, nil
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
