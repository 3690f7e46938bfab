// Package vectors holds the semantic index of one corpus: every chunk's
// unit vector, grouped into items (a memory file, a session message), and
// answers "which chunks are nearest this query vector" within an optional
// scope of exact-match labels.
//
// Store is the seam between the engine and the library that does the work:
// Chromem (chromem-go) holds the memories' chunks; Flat, 8-bit vectors of
// one chunk per item in one slice, holds the sessions' messages, which are
// a hundred times as many (docs/design.md). An external vector
// database (pgvector, Qdrant) would be a second one with the same four
// verbs; docs/design.md describes that path. Each corpus gets its own
// Store, so memories and session messages never share a ranking.
package vectors

import (
	"context"
	"math"

	"mnemo/engine/rank"
)

// Store is a corpus's vector index. Items are replaced whole: Put drops the
// item's previous chunks. It is safe for concurrent use.
type Store interface {
	// Put replaces the chunks of each item with its Vectors (normalised here;
	// nil, all-zero or non-finite entries are left out: that chunk has no
	// meaning to search by). A vector already of unit length may be kept
	// as it is: the caller must not change it afterwards.
	Put(ctx context.Context, items ...Item) error
	// Delete drops every chunk of the item; an unknown id is not an error.
	Delete(ctx context.Context, id string) error
	// Query returns the items with a chunk among the n chunks nearest q
	// (q of unit length, see Normalize) that carry every label of scope,
	// each with its nearest chunk, best first.
	Query(ctx context.Context, q []float32, n int, scope []string) (Found, error)
	// Nearest returns the chunk of item id nearest q (unit length), for an
	// item that is a candidate for another reason (a text match): a few
	// dot products, not a search. ok is false for an item with no chunks.
	Nearest(q []float32, id string) (h Hit, ok bool)
	// Len is the number of chunks held.
	Len() int
}

// Item is one searchable unit and its chunk vectors.
type Item struct {
	ID string
	// Labels are the exact-match keys a query scope can require, e.g.
	// "folder:notes/meetings" (one per ancestor folder) or "tag:db".
	Labels []string
	// Meta is carried with every chunk (the path, the creation date) for
	// an inspection of the store; queries do not read it.
	Meta    map[string]string
	Vectors [][]float32 // one per chunk, by chunk number
}

// Hit is one item's nearest chunk, as ranking takes it.
type Hit = rank.VecHit

// Found is the answer to a Query.
type Found struct {
	Hits []Hit // one per item, best first (ties by id)
	// Bound is the highest similarity an item missing from Hits can have:
	// every chunk not returned is at most this similar. It is -1 when
	// Complete.
	Bound float32
	// Complete says every chunk in scope was returned: asking for more
	// would find nothing new.
	Complete bool
}

// Normalize returns v scaled to unit length (a copy), or nil for a vector
// that has no direction (all zero, or not finite).
func Normalize(v []float32) []float32 {
	inv, ok := inverseLength(v)
	if !ok {
		return nil
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

// inverseLength is 1/|v|, computed in float64; ok is false for a vector
// with no direction (all zero, or not finite).
func inverseLength(v []float32) (inv float64, ok bool) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		return 0, false
	}
	return 1 / math.Sqrt(s), true
}

// unit is Normalize(v) without the copy when v is already of unit length
// to the last bit, as the built-in embedder's vectors are: then v itself,
// which the caller must not change afterwards. About 70% of the built-in
// embedder's vectors are (3,000 tldr pages): their copies are saved.
func unit(v []float32) []float32 {
	inv, ok := inverseLength(v)
	if !ok {
		return nil
	}
	for i, x := range v {
		if float32(float64(x)*inv) != x {
			out := make([]float32, len(v))
			copy(out, v[:i]) // equal to their scaled selves so far
			for j := i; j < len(v); j++ {
				out[j] = float32(float64(v[j]) * inv)
			}
			return out
		}
	}
	return v
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
