package fulltext

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2/index/scorch"
	index "github.com/blevesearch/bleve_index_api"

	"mnemo/engine/rank"
)

// TestSortedSumOrderBlind checks that a document's score does not depend on
// the order its contributions arrive in (the query terms' map order): two
// documents with the same contributions must tie exactly, so that ranking's
// tie-break decides their order and not the map. Each case's contributions
// sum to different floats when added in the orders listed as they come.
func TestSortedSumOrderBlind(t *testing.T) {
	tests := []struct {
		name   string
		orders [][]float64
	}{
		{"three tenths", [][]float64{{0.1, 0.2, 0.3}, {0.3, 0.2, 0.1}, {0.2, 0.3, 0.1}}},
		{"four matches", [][]float64{
			{0.484738, 1.099381, 1.751205, 0.272567},
			{0.272567, 1.751205, 1.099381, 0.484738},
			{1.751205, 0.484738, 0.272567, 1.099381},
		}},
		{"more than fit inline", [][]float64{
			{1e-3, 0.7, 3.1, 0.9, 0.1, 2.2},
			{2.2, 0.1, 0.9, 3.1, 0.7, 1e-3},
			{0.9, 2.2, 1e-3, 0.1, 3.1, 0.7},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			running := map[float64]bool{}
			var want float64
			for i, parts := range tc.orders {
				var r float64
				for _, s := range parts {
					r += s
				}
				running[r] = true
				got := sortedSum(slices.Clone(parts))
				if i == 0 {
					want = got
				} else if got != want {
					t.Errorf("order %v sums to %v, order %v to %v", parts, got, tc.orders[0], want)
				}
			}
			if len(running) < 2 {
				t.Fatalf("the orders sum to the same float as they come (%v): the case tests nothing", running)
			}
		})
	}
}

// scoringWay is one of scoreAll's ways to score.
type scoringWay = func(context.Context, index.IndexReader, uint64, []postingList, BM25, func(Snapshot, []NumHit) error) error

// scoredBy is what one of scoreAll's ways scores q with in snapshot rd.
func scoredBy(t *testing.T, way scoringWay,
	rd index.IndexReader, n uint64, q Terms, p BM25, totals [NumFields]int64) map[uint64]NumHit {
	t.Helper()
	out := map[uint64]NumHit{}
	err := way(context.Background(), rd, n, queryLists(q, p, totals, n), p, func(_ Snapshot, hits []NumHit) error {
		for _, h := range hits {
			if _, dup := out[h.Num]; dup {
				t.Errorf("document %d handed over twice", h.Num)
			}
			out[h.Num] = h
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// segmentedIndex is an index of random documents of a small vocabulary in
// several segments (a batch of perBatch each), some deleted or replaced, opened
// read-only (so that no merge changes the snapshot between two queries),
// its totals, and a maker of random texts of up to max words.
func segmentedIndex(t *testing.T, r *rand.Rand, perBatch int) (*Index, [NumFields]int64, func(max int) string) {
	t.Helper()
	words := strings.Fields("apple orchard harvest ladder basket pear cider press frost blossom root graft prune soil rain wind bee hive honey wax")
	text := func(max int) string {
		ws := make([]string, r.IntN(max+1))
		for i := range ws {
			ws[i] = words[r.IntN(len(words))]
		}
		return strings.Join(ws, " ")
	}
	path := filepath.Join(t.TempDir(), "ft")
	ft, err := Open(path, true, DurableBatches, nil)
	if err != nil {
		t.Fatal(err)
	}
	var totals [NumFields]int64
	count := func(field int, s string) {
		ts, err := EnglishTerms(s)
		if err != nil {
			t.Fatal(err)
		}
		totals[field] += int64(len(ts))
	}
	for b := range 6 { // a batch a segment
		batch := ft.NewBatch()
		for i := range perBatch {
			title, body := text(3), text(12)
			count(0, title)
			count(1, body)
			if err := batch.Index(fmt.Sprintf("d%d", r.IntN(perBatch*14/3)), MappedDoc(title, body)); err != nil {
				t.Fatal(err)
			}
			if b > 0 && i%10 == 0 {
				batch.Delete(fmt.Sprintf("d%d", r.IntN(perBatch*14/3)))
			}
		}
		if err := ft.Batch(batch); err != nil {
			t.Fatal(err)
		}
	}
	if err := ft.Close(); err != nil {
		t.Fatal(err)
	}
	if ft, err = Open(path, false, DurableBatches, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ft.Close() })
	return ft, totals, text
}

// TestScoreMatchesTermAtATime: scoring document at a time, the postings of
// every query term and field read in step, finds every document that
// scoring term at a time (into a table by number) finds, with the same
// score (to the bit) and term count, in the same snapshot, over random
// documents of a small vocabulary in several segments, some deleted or
// replaced, and random queries: repeated, absent and shared terms, titles
// as well as bodies.
func TestScoreMatchesTermAtATime(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	ft, totals, text := segmentedIndex(t, r, 150)
	sameScores(t, ft, totals, text, scoreTermAtATime, scoreDocAtATime)
}

// sameScores holds way got to way want over 200 random queries of text's
// vocabulary in one snapshot of ft: the same documents, scores (to the
// bit) and term counts.
func sameScores(t *testing.T, ft *Index, totals [NumFields]int64, text func(int) string, want, got scoringWay) {
	t.Helper()
	p := NewBM25(rank.DefaultRanking())
	rd, n, err := ft.reader()
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	found := 0
	for i := range 200 {
		qt := text(6) + " " + []string{"", "absentword", "apple apple", "honey"}[i%4]
		q := ft.AnalyzeQuery(qt)
		want := scoredBy(t, want, rd, n, q, p, totals)
		got := scoredBy(t, got, rd, n, q, p, totals)
		if len(got) != len(want) {
			t.Errorf("%q: %d hits, want %d", qt, len(got), len(want))
		}
		if len(want) > 0 {
			found++
		}
		for num, h := range got {
			if w, ok := want[num]; !ok || h != w {
				t.Errorf("%q: document %d scored %+v, want %+v (found: %v)", qt, num, h, w, ok)
			}
		}
	}
	if found < 150 {
		t.Errorf("%d of 200 queries matched a document, want 150 or more: the case tests little", found)
	}
}

// TestScoreSegmentsMatchTermFieldReader: reading scorch's segments'
// postings directly, each numbered from its segment's offset, scores
// every document as reading them through Bleve's TermFieldReader does
// (the same numbers, scores to the bit, term counts, and so the same
// document frequencies), parts cached or not, postings read by zapx's
// own types or through the segment interfaces, over an index of several
// segments where later batches replaced and deleted documents of earlier
// ones.
func TestScoreSegmentsMatchTermFieldReader(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 4))
	// segments long enough that a common word's postings in one take
	// several of a cursor's blocks
	ft, totals, text := segmentedIndex(t, r, 4*blockLen)
	rd, _, err := ft.reader()
	if err != nil {
		t.Fatal(err)
	}
	is, ok := rd.(*scorch.IndexSnapshot)
	if !ok {
		t.Fatalf("the reader is a %T, not scorch's snapshot: the case tests nothing", rd)
	}
	deleted := 0
	for _, ss := range is.Segments() {
		if d := ss.Deleted(); d != nil {
			deleted += int(d.GetCardinality())
		}
	}
	honey, err := EnglishTerms("honey")
	if err != nil {
		t.Fatal(err)
	}
	longest := uint64(0) // honey's postings in one segment, at most
	for _, ss := range is.Segments() {
		d, err := ss.Segment().Dictionary(fBody)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := d.PostingsList([]byte(honey[0]), ss.Deleted(), nil)
		if err != nil {
			t.Fatal(err)
		}
		longest = max(longest, pl.Count())
	}
	if len(is.Segments()) < 2 || deleted == 0 || longest <= blockLen {
		t.Fatalf("%d segments, %d deleted documents, %d postings of a word in a segment: the case tests little", len(is.Segments()), deleted, longest)
	}
	rd.Close()
	// zapx's postings with every list's parts cached, none, and through
	// the segment interfaces alone
	for _, cfg := range []segConfig{{cacheFrom: 0}, {cacheFrom: math.MaxUint64}, {generic: true}} {
		bySegments := func(ctx context.Context, rd index.IndexReader, _ uint64, lists []postingList, p BM25, use func(Snapshot, []NumHit) error) error {
			return scoreSegments(ctx, rd.(*scorch.IndexSnapshot), lists, p, cfg, use)
		}
		sameScores(t, ft, totals, text, scoreDocAtATime, bySegments)
	}
}

// TestKeptNumbers: two snapshots' documents share their numbers up to
// the first segment their layouts do not share.
func TestKeptNumbers(t *testing.T) {
	a := []SegmentSpan{{1, 0, 100}, {2, 100, 50}, {3, 150, 5}}
	for _, tc := range []struct {
		name string
		b    []SegmentSpan
		want uint64
	}{
		{"the same", a, 155},
		{"a segment added", append(append([]SegmentSpan{}, a...), SegmentSpan{4, 155, 9}), 155},
		{"the newest merged", []SegmentSpan{{1, 0, 100}, {2, 100, 50}, {5, 150, 5}}, 150},
		{"the first replaced", []SegmentSpan{{6, 0, 100}, {2, 100, 50}}, 0},
		{"none", nil, 0},
		{"a count changed", []SegmentSpan{{1, 0, 100}, {2, 100, 51}}, 100},
	} {
		if got := KeptNumbers(a, tc.b); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}
