package fulltext

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"sync"

	"github.com/blevesearch/bleve/v2/index/scorch"
	segment "github.com/blevesearch/scorch_segment_api/v2"
	zap "github.com/blevesearch/zapx/v17"
)

// hitChunk is how many hits scoreSegments hands use at a time: enough
// that a call costs nothing beside them, few enough that the buffer stays
// in a core's cache (a query of common words matches most of 1M
// messages, and a slice of all of them was 2 MB of garbage a query).
const hitChunk = 1024

// scoreSegments scores document at a time as scoreDocAtATime does, over
// scorch's segments rather than through its TermFieldReader: each
// segment's postings are read in step by their number in the segment,
// and a hit's number in the snapshot is the segment's offset plus it.
// The TermFieldReader wrapped every posting in a TermFieldDoc with an
// 8-byte id, a segment switch and four interface calls, which cost more
// than reading the posting (docs/benchmarks.md, "The text stage per
// posting"). Hits go to use in ascending number, hitChunk at a time.
//
// A segment's documents are numbered from the running sum of the counts
// (deleted documents included) of the segments before it, in the
// snapshot's order: scorch's introducer and persister number them so.
// Each field's dictionary is the field's own: the TermFieldReader also
// honours scorch's record of fields whose mapping an index update
// dropped, which mnemo's indexes never have (their mapping is fixed,
// newMapping, and an index of another is rebuilt).
//
// How it reads them is cfg's (tests try every way; scoreAll reads
// zapx's postings by their own type and caches the parts of long lists).
func scoreSegments(ctx context.Context, is *scorch.IndexSnapshot, lists []postingList, p BM25, cfg segConfig, use func(Snapshot, []NumHit) error) error {
	segs := is.Segments()
	pls, err := openSegmentLists(is, lists)
	if err != nil {
		return err
	}
	snap := Snapshot{is}
	s := segScorer{hits: make([]NumHit, 0, hitChunk), cs: make([]*segCursor, 0, len(lists))}
	cursors := make([]segCursor, len(lists)) // one a list, its iterator and cache reused from segment to segment
	defer func() {
		for _, c := range cursors {
			if c.parts != nil {
				partCaches.Put(c.parts)
			}
		}
	}()
	for li := range lists {
		cursors[li] = segCursor{l: &lists[li], p: &p, bit: lists[li].tw.bit, generic: cfg.generic}
		if lists[li].df >= cfg.cacheFrom {
			cursors[li].parts = newPartCache()
		}
	}
	var offset uint64
	for si, ss := range segs {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.cs = s.cs[:0]
		for li := range lists {
			if pl := pls[li*len(segs)+si]; pl != nil {
				c := &cursors[li]
				if err := c.open(pl); err != nil {
					return err
				}
				s.cs = append(s.cs, c)
			}
		}
		if err := s.segment(ctx, snap, offset, use); err != nil {
			return err
		}
		offset += ss.Segment().Count()
	}
	return use(snap, s.hits)
}

// segConfig is how scoreSegments reads postings: the lists of cacheFrom
// documents or more cache their parts (partCache), and generic reads
// every segment's through the segment interfaces alone, as it reads a
// segment that is not zapx's.
type segConfig struct {
	cacheFrom uint64
	generic   bool
}

// openSegmentLists opens every list's postings in every segment of is
// (by list, then segment; nil where the segment holds none of it alive),
// and sets each list's document frequency (the sum of its segments'
// counts, what a TermFieldReader's Count is) and idf.
func openSegmentLists(is *scorch.IndexSnapshot, lists []postingList) ([]segment.PostingsList, error) {
	segs := is.Segments()
	pls := make([]segment.PostingsList, len(lists)*len(segs))
	dicts := map[string][]segment.TermDictionary{} // by field: lists share them
	for li := range lists {
		l := &lists[li]
		ds, ok := dicts[l.tw.field]
		if !ok {
			ds = make([]segment.TermDictionary, len(segs))
			for si, ss := range segs {
				d, err := ss.Segment().Dictionary(l.tw.field)
				if err != nil {
					return nil, fmt.Errorf("dictionary of %s: %w", l.tw.field, err)
				}
				ds[si] = d
			}
			dicts[l.tw.field] = ds
		}
		term := []byte(l.term)
		l.df = 0
		for si, ss := range segs {
			if ds[si] == nil { // a segment type that has no dictionary for the field
				continue
			}
			pl, err := ds[si].PostingsList(term, ss.Deleted(), nil)
			if err != nil {
				return nil, fmt.Errorf("postings of %q: %w", l.term, err)
			}
			if pl == nil {
				continue
			}
			if c := pl.Count(); c > 0 {
				pls[li*len(segs)+si] = pl
				l.df += c
			}
		}
		if l.df > 0 {
			l.idf = l.tw.idf(l.df)
		}
	}
	return pls, nil
}

// segScorer is one query's document-at-a-time pass over one segment at a
// time: the cursors of the lists the segment holds, and the hits not
// handed over yet.
type segScorer struct {
	cs    []*segCursor
	hits  []NumHit
	parts []float64
}

// segment scores every document of the segment whose documents are
// numbered from offset in the snapshot, handing use the hits as they
// fill a chunk. Once one list alone is left in the segment (a query's
// common word outlasts its rare ones) its postings are read on their own.
func (s *segScorer) segment(ctx context.Context, snap Snapshot, offset uint64, use func(Snapshot, []NumHit) error) error {
	s.drop()
	if cap(s.parts) < len(s.cs) {
		s.parts = make([]float64, len(s.cs))
	}
	for n := 0; ; n++ {
		switch len(s.cs) {
		case 0:
			return nil
		case 1:
			return s.alone(ctx, snap, offset, use)
		}
		num := uint64(math.MaxUint64)
		for _, c := range s.cs {
			num = min(num, c.nums[c.at])
		}
		if n%4096 == 4095 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		// Without a branch on which lists hold num, which the processor
		// cannot predict: every live cursor writes its part, and those at
		// num count it and move on.
		parts := s.parts[:len(s.cs)]
		k, terms, refill := 0, uint64(0), false
		for _, c := range s.cs {
			at := c.at
			parts[k] = c.parts1[at]
			on, mask := 0, uint64(0)
			if c.nums[at] == num {
				on, mask = 1, ^uint64(0)
			}
			k, terms = k+on, terms|c.bit&mask
			if c.at = at + on; c.at == c.n {
				refill = true
			}
		}
		if refill {
			if err := s.refill(); err != nil {
				return err
			}
		}
		if err := s.hit(snap, NumHit{Num: offset + num, Score: sortedSum(parts[:k]), Matched: bits.OnesCount64(terms)}, use); err != nil {
			return err
		}
	}
}

// refill decodes the next block of every cursor at the end of its block,
// and drops those at the end of their list.
func (s *segScorer) refill() error {
	for _, c := range s.cs {
		if c.at == c.n {
			if err := c.fill(); err != nil {
				return err
			}
		}
	}
	s.drop()
	return nil
}

// drop takes the cursors at the end of their lists out of s.cs, so that
// the merge looks at live ones alone (a rare word's list ends early).
func (s *segScorer) drop() {
	live := s.cs[:0]
	for _, c := range s.cs {
		if c.at < c.n {
			live = append(live, c)
		}
	}
	s.cs = live
}

// alone scores the rest of the one list left in the segment: a hit's
// score is its one part (what sortedSum makes of it).
func (s *segScorer) alone(ctx context.Context, snap Snapshot, offset uint64, use func(Snapshot, []NumHit) error) error {
	c := s.cs[0]
	for c.at < c.n {
		if err := ctx.Err(); err != nil {
			return err
		}
		for i := c.at; i < c.n; i++ {
			if err := s.hit(snap, NumHit{Num: offset + c.nums[i], Score: c.parts1[i], Matched: 1}, use); err != nil {
				return err
			}
		}
		if err := c.fill(); err != nil {
			return err
		}
	}
	return nil
}

// hit adds h to the hits, handing them to use when they fill a chunk.
func (s *segScorer) hit(snap Snapshot, h NumHit, use func(Snapshot, []NumHit) error) error {
	s.hits = append(s.hits, h)
	if len(s.hits) < cap(s.hits) {
		return nil
	}
	err := use(snap, s.hits)
	s.hits = s.hits[:0]
	return err
}

// blockLen is how many postings a cursor decodes at a time: the merge of
// the lists then reads arrays, not a call a posting.
const blockLen = 256

// segCursor is one list's postings in the segment being scored, read in
// step with the others a block at a time: nums[at:n] and parts1[at:n]
// are the documents (by number in the segment) and parts not consumed
// yet; at == n once the list has no more in the segment.
type segCursor struct {
	l   *postingList
	p   *BM25
	bit uint64
	it  segment.PostingsIterator // reused from segment to segment
	zit *zap.PostingsIterator    // it, when zapx's: called with no interface
	// generic: read it through the interface even if it is zapx's (tests)
	generic bool
	parts   *partCache // nil for a short list
	at, n   int
	nums    [blockLen]uint64
	parts1  [blockLen]float64
}

// open starts c on the postings of its list in the next segment.
func (c *segCursor) open(pl segment.PostingsList) error {
	c.it = pl.Iterator(true, true, false, c.it)
	c.zit = nil
	if zit, ok := c.it.(*zap.PostingsIterator); ok && !c.generic {
		c.zit = zit
	}
	return c.fill()
}

// fill decodes c's next block. A posting of zapx's segments (what scorch
// writes) is read through its own type, with no interface call, and its
// part looked up by frequency and field length when c's list is long
// enough to have a cache (fillZap); any other segment's through the
// interface.
func (c *segCursor) fill() error {
	c.at, c.n = 0, 0
	if c.zit != nil {
		return c.fillZap()
	}
	for c.n < blockLen {
		ps, err := c.it.Next()
		if err != nil {
			return fmt.Errorf("postings of %q: %w", c.l.term, err)
		}
		if ps == nil {
			return nil
		}
		c.nums[c.n], c.parts1[c.n] = ps.Number(), c.l.tw.partOf(float64(ps.Frequency()), ps.Norm(), c.l.idf, *c.p)
		c.n++
	}
	return nil
}

// fillZap is fill from zapx's iterator.
func (c *segCursor) fillZap() error {
	for c.n < blockLen {
		ps, err := c.zit.Next()
		if err != nil {
			return fmt.Errorf("postings of %q: %w", c.l.term, err)
		}
		if ps == nil {
			return nil
		}
		zp, ok := ps.(*zap.Posting)
		if !ok {
			return fmt.Errorf("postings of %q: a %T from zapx's iterator", c.l.term, ps)
		}
		c.nums[c.n], c.parts1[c.n] = zp.Number(), c.part(zp)
		c.n++
	}
	return nil
}

// part is the part of zapx posting zp, from c's cache where it has one.
func (c *segCursor) part(zp *zap.Posting) float64 {
	tf, length := zp.Frequency(), zp.NormUint64()
	if c.parts == nil || tf-1 >= cachedTF || length >= cachedLen {
		return c.l.tw.partOf(float64(tf), zp.Norm(), c.l.idf, *c.p)
	}
	at := &c.parts[(tf-1)*cachedLen+length]
	if *at == 0 {
		*at = c.l.tw.partOf(float64(tf), zp.Norm(), c.l.idf, *c.p)
	}
	return *at
}

// A list's part depends on a posting's frequency and its field's length
// alone (zapx keeps the length as the norm's bits; the norm, 1/√length
// rounded to a float32, is what Bleve hands over): a long list's parts
// are computed once for each pair met, of frequencies below cachedTF and
// lengths below cachedLen, by the same partOf, so they are the same to
// the bit. A list of cachedFrom documents or more gets a cache: computing
// the part (a square root and two divisions) was a fifth of the cost of
// a posting at 1M messages, and clearing a cache costs about what
// computing the parts of a few thousand postings does.
const (
	cachedTF   = 4
	cachedLen  = 1024
	cachedFrom = 4096
)

// partCache is a list's parts by frequency − 1, then field length; 0 for
// one not computed yet (a part is never 0: its idf, weight and frequency
// are positive).
type partCache [cachedTF * cachedLen]float64

var partCaches = sync.Pool{New: func() any { return new(partCache) }}

// newPartCache is a cleared cache from the pool.
func newPartCache() *partCache {
	pc := partCaches.Get().(*partCache)
	clear(pc[:])
	return pc
}
