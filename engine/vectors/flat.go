package vectors

import (
	"bytes"
	"cmp"
	hp "container/heap"
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Flat holds one 8-bit vector per item (Code), in one flat slice scanned
// whole by a query: what the sessions corpus keeps, a message being one
// item. Items are the caller's numbers (a message's number in the
// corpus's columns), dense from 0: Flat keeps no id string per item and
// no map from ids, only a slot per number, and the caller names an item
// (its key function) when a group or a tie needs its id. At 100k
// messages of the built-in embedder's 100 dimensions it holds ~11 MB
// where Chromem held ~115 MB (float32 vectors, chromem-go documents and
// their metadata maps), it loads without building a chromem-go
// collection, and its scan is exact over the codes, so Found is never
// short of what a Chromem would find (docs/design.md).
//
// Labels are kept as the item's label set, interned: messages share a
// handful of sets (their session's agent and id, their role), so an
// item costs 4 bytes of labels whatever their count.
//
// A query answers as the Chromem it replaced: items fall into
// DefaultShards groups by the same hash of their id, and a query returns
// each group's n nearest (Chromem's collections each returned theirs),
// ties in the order of their ids, so the sessions' answers moved only
// where 8 bits moved a similarity.
type Flat struct {
	mu     sync.RWMutex
	dim    int
	key    KeyFunc
	nums   []uint32 // item number by slot
	dims   []int8   // dim per slot
	scales []float32
	sets   []uint32 // label set per slot
	groups []uint8  // shardOf(id, DefaultShards) per slot
	slotOf []int32  // by item number: its slot, or -1
	buf    []byte   // key's scratch under the write lock
	// untrusted counts the codes held whose |d|·scale may pass
	// 1+normSlack (not Quantize's): while any is, no coarse bound.
	untrusted int
	// Label sets, interned: a set is its labels' ids, sorted.
	setOf   map[string]uint32 // labels joined by "\x00" → set
	setIDs  [][]uint32
	labelOf map[string]uint32
}

// KeyFunc appends item n's id to buf: the id its group is a hash of and
// that orders items of equal similarity.
type KeyFunc func(buf []byte, n uint32) []byte

// decimalKey names item n by its number in decimal.
func decimalKey(buf []byte, n uint32) []byte { return strconv.AppendUint(buf, uint64(n), 10) }

// NumHit is an item of a Flat, by number, and its similarity to a query.
type NumHit struct {
	Num        uint32
	Similarity float32
}

// NumFound is a Flat's answer to a Query, as Found is a Store's.
type NumFound struct {
	Hits     []NumHit // one per item, best first (ties by id)
	Bound    float32  // the highest similarity an item missing from Hits can have; -1 when Complete
	Complete bool     // every item in scope was returned
}

// NewFlat returns an empty Flat for vectors of dim dimensions (0: the
// length of the first vector put) whose items are named by key (nil: by
// their number in decimal).
func NewFlat(dim int, key KeyFunc) *Flat {
	if key == nil {
		key = decimalKey
	}
	return &Flat{dim: dim, key: key, setOf: map[string]uint32{}, labelOf: map[string]uint32{}}
}

// LabelSet is a set of labels as a Flat holds it, for PutCode.
type LabelSet uint32

// Labels interns a set of labels, for PutCode: a caller that puts many
// items of the same labels (the messages of a session, by role) interns
// them once.
func (f *Flat) Labels(labels []string) LabelSet {
	f.mu.Lock()
	defer f.mu.Unlock()
	return LabelSet(f.labelSet(labels))
}

// Reserve makes room for n more items, so that loading a store's worth
// of vectors grows nothing.
func (f *Flat) Reserve(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dim == 0 || n <= 0 {
		return
	}
	f.nums = slices.Grow(f.nums, n)
	f.dims = slices.Grow(f.dims, n*f.dim)
	f.scales = slices.Grow(f.scales, n)
	f.sets = slices.Grow(f.sets, n)
	f.groups = slices.Grow(f.groups, n)
	f.slotOf = slices.Grow(f.slotOf, n)
}

// Put quantises v and puts it as item n's vector; a vector with no
// direction leaves the item out (as Store.Put does).
func (f *Flat) Put(n uint32, labels LabelSet, v []float32) error {
	c, ok := Quantize(v)
	if !ok {
		f.Delete(n)
		return nil
	}
	return f.PutCode(n, labels, c)
}

// PutCode replaces item n's vector by c, already a Code (as the state
// store keeps it), with labels interned by Labels: nothing is quantised
// again.
func (f *Flat) PutCode(n uint32, labels LabelSet, c Code) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if int(labels) >= len(f.setIDs) {
		return fmt.Errorf("vector store: item %d: label set %d was not made by Labels", n, labels)
	}
	if n == math.MaxUint32 {
		return fmt.Errorf("vector store: item number %d is out of range", n)
	}
	if f.dim == 0 {
		f.dim = len(c.Dims)
	}
	if len(c.Dims) != f.dim {
		return fmt.Errorf("vector store: item %d has %d dimensions, the store %d", n, len(c.Dims), f.dim)
	}
	for int(n) >= len(f.slotOf) {
		f.slotOf = append(f.slotOf, -1)
	}
	if !normed(c.Dims, c.Scale) {
		f.untrusted++
	}
	if i := f.slotOf[n]; i >= 0 {
		if !normed(f.dims[int(i)*f.dim:int(i+1)*f.dim], f.scales[i]) {
			f.untrusted--
		}
		copy(f.dims[int(i)*f.dim:], c.Dims)
		f.scales[i], f.sets[i] = c.Scale, uint32(labels)
		return nil
	}
	f.slotOf[n] = int32(len(f.nums))
	f.nums = append(f.nums, n)
	f.dims = append(f.dims, c.Dims...)
	f.scales = append(f.scales, c.Scale)
	f.sets = append(f.sets, uint32(labels))
	f.buf = f.key(f.buf[:0], n)
	f.groups = append(f.groups, uint8(shardOfBytes(f.buf, DefaultShards)))
	return nil
}

// labelSet interns a set of labels.
func (f *Flat) labelSet(labels []string) uint32 {
	sorted := slices.Clone(labels)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	key := strings.Join(sorted, "\x00")
	if s, ok := f.setOf[key]; ok {
		return s
	}
	ids := make([]uint32, len(sorted))
	for i, l := range sorted {
		id, ok := f.labelOf[l]
		if !ok {
			id = uint32(len(f.labelOf))
			f.labelOf[l] = id
		}
		ids[i] = id
	}
	s := uint32(len(f.setIDs))
	f.setOf[key] = s
	f.setIDs = append(f.setIDs, ids)
	return s
}

// Delete drops item n (an unknown one is not an error); the last slot
// moves into its place.
func (f *Flat) Delete(n uint32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if int(n) >= len(f.slotOf) || f.slotOf[n] < 0 {
		return
	}
	i := f.slotOf[n]
	if !normed(f.dims[int(i)*f.dim:int(i+1)*f.dim], f.scales[i]) {
		f.untrusted--
	}
	last := int32(len(f.nums) - 1)
	if i != last {
		f.nums[i] = f.nums[last]
		copy(f.dims[int(i)*f.dim:int(i+1)*f.dim], f.dims[int(last)*f.dim:])
		f.scales[i], f.sets[i], f.groups[i] = f.scales[last], f.sets[last], f.groups[last]
		f.slotOf[f.nums[i]] = i
	}
	f.slotOf[n] = -1
	f.nums, f.scales, f.sets, f.groups = f.nums[:last], f.scales[:last], f.sets[:last], f.groups[:last]
	f.dims = f.dims[:int(last)*f.dim]
}

// Len is the number of items held (one vector each).
func (f *Flat) Len() int {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return len(f.nums)
}

// Nearest returns the similarity of item n to q; false when n has no
// vector.
func (f *Flat) Nearest(q []float32, n uint32) (float32, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.similarity(q, n)
}

// similarity is Nearest under the caller's read lock.
func (f *Flat) similarity(q []float32, n uint32) (float32, bool) {
	if int(n) >= len(f.slotOf) || f.slotOf[n] < 0 || len(q) != f.dim {
		return -2, false
	}
	i := f.slotOf[n]
	return dotCode(q, f.dims[int(i)*f.dim:], f.scales[i]), true
}

// NearestEach sets out[i] to q's similarity to item nums[i], as Nearest
// gives it (-2 for an item without a vector), under one read lock: what
// a query's few thousand text candidates need.
func (f *Flat) NearestEach(q []float32, nums []uint32, out []float32) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	for i, n := range nums {
		out[i], _ = f.similarity(q, n)
	}
}

// Query scans every item in scope and returns each group's n nearest q,
// exactly (over the codes). As Chromem's, the answer is Complete when no
// group has n in scope, else Bound is the highest n-th similarity of a
// group that has.
func (f *Flat) Query(ctx context.Context, q []float32, n int, scope []string) (NumFound, error) {
	if n <= 0 {
		return NumFound{}, fmt.Errorf("vector store: asked for %d results, want > 0", n)
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	found := NumFound{Bound: -1, Complete: true}
	in, ok := f.inScope(scope)
	if !ok || len(f.nums) == 0 || len(q) != f.dim {
		return found, nil
	}
	var tops [DefaultShards]topHits
	for g := range tops {
		tops[g].f = f
	}
	var seen [DefaultShards]int
	if err := f.scan(ctx, q, n, in, &tops, &seen); err != nil {
		return NumFound{}, err
	}
	for g, t := range tops {
		if seen[g] >= n {
			found.Complete = false
			found.Bound = max(found.Bound, t.hits[0].Similarity) // the group's worst kept
		}
		found.Hits = append(found.Hits, t.hits...)
	}
	slices.SortFunc(found.Hits, func(a, b NumHit) int {
		if c := cmp.Compare(b.Similarity, a.Similarity); c != 0 {
			return c
		}
		return f.compareKeys(a.Num, b.Num)
	})
	return found, nil
}

// scan is Query's pass over every item in scope, under its read lock:
// into tops each group's n nearest, into seen how many it has in scope.
// A code is scored exactly (dotCode) unless its group holds n already
// and the prefilter shows it below the worst of them: first the coarse
// bound (coarseQuery.below, while every code held is normed), then
// dotWide's (queryCode.below), each with the code's bytes read in
// place: the loop runs once a code, 1M times at 1M messages.
func (f *Flat) scan(ctx context.Context, q []float32, n int, in []bool, tops *[DefaultShards]topHits, seen *[DefaultShards]int) error {
	qc := quantizeQuery(q)
	filter, dim, wide := qc.step != 0, f.dim, qc.wide()
	coarse := filter && f.untrusted == 0
	all := codeBytes(f.dims)
	var pad []byte // the last codes, when wide reaches past the end
	nums, scales, sets, groups := f.nums, f.scales, f.sets, f.groups
	scales, sets, groups = scales[:len(nums)], sets[:len(nums)], groups[:len(nums)]
	for i, num := range nums {
		if i&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if in != nil && !in[sets[i]] {
			continue
		}
		g := groups[i] % DefaultShards // always < DefaultShards: no bounds check below
		seen[g]++
		t := &tops[g]
		if len(t.hits) == n && filter {
			code := all[i*dim:]
			if len(code) < wide {
				pad = append(append(pad[:0], code...), make([]byte, wide-len(code))...)
				code = pad
			}
			if coarse && qc.coarse.below(code, scales[i], t.hits[0].Similarity) {
				continue // cannot enter, by the coarse bound
			}
			if qc.below(code, scales[i], t.hits[0].Similarity) {
				continue // cannot enter: less similar than the group's worst kept
			}
		}
		h := NumHit{Num: num, Similarity: dotCode(q, f.dims[i*dim:], scales[i])}
		if len(t.hits) < n {
			hp.Push(t, h)
		} else if f.worse(t.hits[0], h) {
			t.hits[0] = h
			hp.Fix(t, 0)
		}
	}
	return nil
}

// inScope marks the label sets that carry every label of scope (nil: no
// scope, every set); ok is false when no set can (a label never seen).
func (f *Flat) inScope(scope []string) (in []bool, ok bool) {
	if len(scope) == 0 {
		return nil, true
	}
	want := make([]uint32, 0, len(scope))
	for _, l := range scope {
		id, known := f.labelOf[l]
		if !known {
			return nil, false
		}
		want = append(want, id)
	}
	in = make([]bool, len(f.setIDs))
	for s, ids := range f.setIDs {
		in[s] = true
		for _, w := range want {
			j := sort.Search(len(ids), func(k int) bool { return ids[k] >= w })
			if j == len(ids) || ids[j] != w {
				in[s] = false
				break
			}
		}
	}
	return in, true
}

// worse orders hits for the top-n heap: lower similarity first, and at
// equal similarity the larger id (the one a sorted answer puts last).
func (f *Flat) worse(a, b NumHit) bool {
	if a.Similarity != b.Similarity {
		return a.Similarity < b.Similarity
	}
	return f.compareKeys(a.Num, b.Num) > 0
}

// compareKeys compares the ids of items a and b (key's): only equal
// similarities need it.
func (f *Flat) compareKeys(a, b uint32) int {
	var ka, kb [32]byte
	return bytes.Compare(f.key(ka[:0], a), f.key(kb[:0], b))
}

// topHits is a min-heap of the best hits so far, the worst on top.
type topHits struct {
	f    *Flat
	hits []NumHit
}

func (t *topHits) Len() int           { return len(t.hits) }
func (t *topHits) Less(i, j int) bool { return t.f.worse(t.hits[i], t.hits[j]) }
func (t *topHits) Swap(i, j int)      { t.hits[i], t.hits[j] = t.hits[j], t.hits[i] }
func (t *topHits) Push(x any)         { t.hits = append(t.hits, x.(NumHit)) }
func (t *topHits) Pop() any {
	h := t.hits[len(t.hits)-1]
	t.hits = t.hits[:len(t.hits)-1]
	return h
}
