package engine

import (
	"math"
	"runtime"
	"sync"
)

// vectors is the semantic index: every chunk's unit vector in one flat
// matrix, scanned exhaustively per query. It lives in memory; the vectors
// are persisted in the state store (one bbolt value per chunk) and loaded
// at open.
//
// It replaced a chromem-go collection after measuring both on the tldr
// corpus (38k files): chromem-go's query spent ~10 ms of a 27 ms hybrid
// search sending every document through a channel to filter it, taking a
// mutex per candidate for its heap, and summing each dot product in one
// dependency chain. The flat scan below does the same exact, exhaustive
// cosine search in ~1–2 ms (docs/design.md).
type vectors struct {
	dim   int
	data  []float32 // row r is data[r*dim:(r+1)*dim]
	owner []int32   // row → file slot; -1 for a dead row awaiting compaction
	chunk []int32   // row → chunk number within its file
	dead  int

	slots  []string         // slot → path; "" when free
	recs   []*record        // slot → the file's record; nil when free
	slotOf map[string]int32 // path → slot
	rowsOf map[int32][]int32
	free   []int32
}

func newVectors(dim int) *vectors {
	return &vectors{dim: dim, slotOf: map[string]int32{}, rowsOf: map[int32][]int32{}}
}

// isZero reports an all-zero vector: a text the embedder could not represent.
func isZero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// normalize returns v scaled to unit length (a copy), or nil for a zero vector.
func normalize(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		return nil
	}
	inv := float32(1 / math.Sqrt(s))
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = x * inv
	}
	return out
}

// put replaces the chunks of path with vecs (nil, zero or wrong-sized
// entries are left out: that chunk has no meaning to search by).
func (v *vectors) put(rec *record, vecs [][]float32) {
	path := rec.Path
	v.remove(path)
	var rows []int32
	for i, vec := range vecs {
		if len(vec) != v.dim {
			continue
		}
		u := normalize(vec)
		if u == nil {
			continue
		}
		if rows == nil {
			rows = []int32{}
		}
		rows = append(rows, int32(len(v.owner)))
		v.data = append(v.data, u...)
		v.chunk = append(v.chunk, int32(i))
		v.owner = append(v.owner, -2) // slot set below
	}
	if len(rows) == 0 {
		return
	}
	s := v.slot(path)
	v.recs[s] = rec
	for _, r := range rows {
		v.owner[r] = s
	}
	v.rowsOf[s] = rows
}

func (v *vectors) slot(path string) int32 {
	if s, ok := v.slotOf[path]; ok {
		return s
	}
	var s int32
	if n := len(v.free); n > 0 {
		s, v.free = v.free[n-1], v.free[:n-1]
		v.slots[s] = path
	} else {
		s = int32(len(v.slots))
		v.slots = append(v.slots, path)
		v.recs = append(v.recs, nil)
	}
	v.slotOf[path] = s
	return s
}

// retarget points path's chunks at a new record of the same content.
func (v *vectors) retarget(rec *record) {
	if s, ok := v.slotOf[rec.Path]; ok {
		v.recs[s] = rec
	}
}

// remove drops every chunk of path.
func (v *vectors) remove(path string) {
	s, ok := v.slotOf[path]
	if !ok {
		return
	}
	for _, r := range v.rowsOf[s] {
		v.owner[r] = -1
		v.dead++
	}
	delete(v.rowsOf, s)
	delete(v.slotOf, path)
	v.slots[s] = ""
	v.recs[s] = nil
	v.free = append(v.free, s)
	if v.dead > 1024 && v.dead*4 > len(v.owner) {
		v.compact()
	}
}

// compact squeezes out dead rows.
func (v *vectors) compact() {
	w := 0
	v.rowsOf = make(map[int32][]int32, len(v.slotOf))
	for r, s := range v.owner {
		if s < 0 {
			continue
		}
		if w != r {
			copy(v.data[w*v.dim:(w+1)*v.dim], v.data[r*v.dim:(r+1)*v.dim])
			v.owner[w], v.chunk[w] = s, v.chunk[r]
		}
		v.rowsOf[s] = append(v.rowsOf[s], int32(w))
		w++
	}
	v.data, v.owner, v.chunk = v.data[:w*v.dim], v.owner[:w], v.chunk[:w]
	v.dead = 0
}

// count is the number of live chunks.
func (v *vectors) count() int { return len(v.owner) - v.dead }

// best holds, per file slot, the cosine similarity of its best chunk.
type best struct {
	sim   []float32 // by slot; -2 where the slot has no chunk or is out of scope
	chunk []int32
	v     *vectors
}

// query scores every chunk against qv (exhaustive, exact) and keeps each
// file's best. keep, if not nil, says which files are in scope.
func (v *vectors) query(qv []float32, keep func(*record) bool) best {
	b := best{sim: make([]float32, len(v.slots)), chunk: make([]int32, len(v.slots)), v: v}
	for i := range b.sim {
		b.sim[i] = -2
	}
	q := normalize(qv)
	if q == nil || len(q) != v.dim {
		return b
	}
	var allowed []bool
	if keep != nil {
		allowed = make([]bool, len(v.slots))
		for s, r := range v.recs {
			allowed[s] = r != nil && keep(r)
		}
	}
	n := len(v.owner)
	workers := min(runtime.GOMAXPROCS(0), max(1, n/4096))
	parts := make([]best, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := n*w/workers, n*(w+1)/workers
		part := b
		if w > 0 {
			part = best{sim: make([]float32, len(v.slots)), chunk: make([]int32, len(v.slots))}
			for i := range part.sim {
				part.sim[i] = -2
			}
		}
		parts[w] = part
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := lo; r < hi; r++ {
				s := v.owner[r]
				if s < 0 || (allowed != nil && !allowed[s]) {
					continue
				}
				d := dot(q, v.data[r*v.dim:(r+1)*v.dim])
				if d > part.sim[s] {
					part.sim[s], part.chunk[s] = d, v.chunk[r]
				}
			}
		}()
	}
	wg.Wait()
	for _, p := range parts[1:] {
		for s, x := range p.sim {
			if x > b.sim[s] {
				b.sim[s], b.chunk[s] = x, p.chunk[s]
			}
		}
	}
	return b
}

// dot is the dot product of two equal-length vectors, in four independent
// accumulators so the additions pipeline.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}
