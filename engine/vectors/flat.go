package vectors

import (
	"cmp"
	hp "container/heap"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Flat is a Store of one 8-bit vector per item (Code), held in one flat
// slice and scanned whole by a query: what the sessions corpus keeps, a
// message being one chunk. At 100k messages of the built-in embedder's
// 100 dimensions it holds ~12 MB where Chromem held ~115 MB (float32
// vectors, chromem-go documents and their metadata maps), it loads
// without building a chromem-go collection, and its scan is exact over
// the codes, so Found is never short of what a Chromem would find
// (docs/design.md). Items with more than one chunk are refused.
//
// Labels are kept as the item's label set, interned: messages share a
// handful of sets (their session's agent and id, their role), so an
// item costs 4 bytes of labels whatever their count.
//
// A query answers as the Chromem it replaced: items fall into
// DefaultShards groups by the same hash of their id, and a query returns
// each group's n nearest (Chromem's collections each returned theirs),
// so the sessions' answers moved only where 8 bits moved a similarity.
type Flat struct {
	mu     sync.RWMutex
	dim    int
	ids    []string // by slot
	dims   []int8   // dim per slot
	scales []float32
	sets   []uint32         // label set per slot
	groups []uint8          // shardOf(id, DefaultShards) per slot
	slot   map[string]int32 // id → slot
	// Label sets, interned: a set is its labels' ids, sorted.
	setOf   map[string]uint32 // labels joined by "\x00" → set
	setIDs  [][]uint32
	labelOf map[string]uint32
}

// NewFlat returns an empty Flat for vectors of dim dimensions (0: the
// length of the first vector Put).
func NewFlat(dim int) *Flat {
	return &Flat{dim: dim, slot: map[string]int32{}, setOf: map[string]uint32{}, labelOf: map[string]uint32{}}
}

// Put replaces each item's vector (quantised here; an item whose vector
// has no direction is left out, as Store says).
func (f *Flat) Put(ctx context.Context, items ...Item) error {
	codes := make([]Code, len(items))
	ok := make([]bool, len(items))
	for i, it := range items {
		if it.ID == "" {
			return errors.New("vector store: item id is empty")
		}
		switch len(it.Vectors) {
		case 0:
		case 1:
			codes[i], ok[i] = Quantize(it.Vectors[0])
		default:
			return fmt.Errorf("vector store: item %s has %d chunks; a flat store holds one", it.ID, len(it.Vectors))
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, it := range items {
		if err := f.putLocked(it.ID, f.labelSet(it.Labels), codes[i], ok[i]); err != nil {
			return err
		}
	}
	return nil
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
	f.ids = slices.Grow(f.ids, n)
	f.dims = slices.Grow(f.dims, n*f.dim)
	f.scales = slices.Grow(f.scales, n)
	f.sets = slices.Grow(f.sets, n)
	f.groups = slices.Grow(f.groups, n)
	if len(f.slot) == 0 {
		f.slot = make(map[string]int32, n)
	}
}

// PutCode is Put of one item whose vector is already a Code (as the
// state store keeps it), with labels interned by Labels: nothing is
// quantised again.
func (f *Flat) PutCode(id string, labels LabelSet, c Code) error {
	if id == "" {
		return errors.New("vector store: item id is empty")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if int(labels) >= len(f.setIDs) {
		return fmt.Errorf("vector store: item %s: label set %d was not made by Labels", id, labels)
	}
	return f.putLocked(id, uint32(labels), c, true)
}

func (f *Flat) putLocked(id string, set uint32, c Code, ok bool) error {
	if !ok {
		f.deleteLocked(id)
		return nil
	}
	if f.dim == 0 {
		f.dim = len(c.Dims)
	}
	if len(c.Dims) != f.dim {
		return fmt.Errorf("vector store: item %s has %d dimensions, the store %d", id, len(c.Dims), f.dim)
	}
	i, had := f.slot[id]
	if !had {
		i = int32(len(f.ids))
		f.slot[id] = i
		f.ids = append(f.ids, id)
		f.dims = append(f.dims, c.Dims...)
		f.scales = append(f.scales, c.Scale)
		f.sets = append(f.sets, set)
		f.groups = append(f.groups, uint8(shardOf(id, DefaultShards)))
		return nil
	}
	copy(f.dims[int(i)*f.dim:], c.Dims)
	f.scales[i], f.sets[i] = c.Scale, set
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

// Delete drops the item; the last slot moves into its place.
func (f *Flat) Delete(ctx context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deleteLocked(id)
	return nil
}

func (f *Flat) deleteLocked(id string) {
	i, ok := f.slot[id]
	if !ok {
		return
	}
	last := int32(len(f.ids) - 1)
	if i != last {
		f.ids[i] = f.ids[last]
		copy(f.dims[int(i)*f.dim:int(i+1)*f.dim], f.dims[int(last)*f.dim:])
		f.scales[i], f.sets[i], f.groups[i] = f.scales[last], f.sets[last], f.groups[last]
		f.slot[f.ids[i]] = i
	}
	delete(f.slot, id)
	f.ids[last] = ""
	f.ids, f.scales, f.sets, f.groups = f.ids[:last], f.scales[:last], f.sets[:last], f.groups[:last]
	f.dims = f.dims[:int(last)*f.dim]
}

// Len is the number of items held (one chunk each).
func (f *Flat) Len() int {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return len(f.ids)
}

// Nearest returns the similarity of item id to q.
func (f *Flat) Nearest(q []float32, id string) (Hit, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	i, ok := f.slot[id]
	if !ok || len(q) != f.dim {
		return Hit{ID: id, Similarity: -2}, false
	}
	return Hit{ID: id, Similarity: dotCode(q, f.dims[int(i)*f.dim:], f.scales[i])}, true
}

// Query scans every item in scope and returns each group's n nearest q,
// exactly (over the codes). As Chromem's, the answer is Complete when no
// group has n in scope, else Bound is the highest n-th similarity of a
// group that has.
func (f *Flat) Query(ctx context.Context, q []float32, n int, scope []string) (Found, error) {
	if n <= 0 {
		return Found{}, fmt.Errorf("vector store: asked for %d results, want > 0", n)
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	found := Found{Bound: -1, Complete: true}
	in, ok := f.inScope(scope)
	if !ok || len(f.ids) == 0 || len(q) != f.dim {
		return found, nil
	}
	var tops [DefaultShards]topHits
	var seen [DefaultShards]int
	qc := quantizeQuery(q)
	for i := range f.ids {
		if i&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return Found{}, err
			}
		}
		if in != nil && !in[f.sets[i]] {
			continue
		}
		g := f.groups[i]
		seen[g]++
		if t := tops[g]; len(t) == n && qc.below(f.dims[i*f.dim:], f.scales[i], t[0].Similarity) {
			continue // cannot enter: less similar than the group's worst kept
		}
		h := Hit{ID: f.ids[i], Similarity: dotCode(q, f.dims[i*f.dim:], f.scales[i])}
		if t := &tops[g]; len(*t) < n {
			hp.Push(t, h)
		} else if worse((*t)[0], h) {
			(*t)[0] = h
			hp.Fix(t, 0)
		}
	}
	for g, t := range tops {
		if seen[g] >= n {
			found.Complete = false
			found.Bound = max(found.Bound, t[0].Similarity) // the group's worst kept
		}
		found.Hits = append(found.Hits, t...)
	}
	slices.SortFunc(found.Hits, func(a, b Hit) int {
		if c := cmp.Compare(b.Similarity, a.Similarity); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return found, nil
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
func worse(a, b Hit) bool {
	if a.Similarity != b.Similarity {
		return a.Similarity < b.Similarity
	}
	return a.ID > b.ID
}

// topHits is a min-heap of the best hits so far, the worst on top.
type topHits []Hit

func (t topHits) Len() int           { return len(t) }
func (t topHits) Less(i, j int) bool { return worse(t[i], t[j]) }
func (t topHits) Swap(i, j int)      { t[i], t[j] = t[j], t[i] }
func (t *topHits) Push(x any)        { *t = append(*t, x.(Hit)) }
func (t *topHits) Pop() any {
	old := *t
	h := old[len(old)-1]
	*t = old[:len(old)-1]
	return h
}

var _ Store = (*Flat)(nil)
