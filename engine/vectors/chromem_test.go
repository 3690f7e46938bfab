package vectors

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"testing"
)

func randomUnit(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return Normalize(v)
}

// bruteForce is the exact answer: every item's nearest chunk, best first.
func bruteForce(items map[string][][]float32, q []float32, keep func(string) bool) []Hit {
	var out []Hit
	for id, vs := range items {
		if keep != nil && !keep(id) {
			continue
		}
		h := Hit{ID: id, Similarity: -2}
		for i, v := range vs {
			if v == nil {
				continue
			}
			if d := dot(q, Normalize(v)); d > h.Similarity {
				h.Chunk, h.Similarity = i, d
			}
		}
		if h.Similarity > -2 {
			out = append(out, h)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Similarity != out[j].Similarity {
			return out[i].Similarity > out[j].Similarity
		}
		return out[i].ID < out[j].ID
	})
	return out
}

func TestChromemQueryIsExact(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(1, 2))
	const dim = 16
	s, err := NewChromem(4)
	if err != nil {
		t.Fatal(err)
	}
	items := map[string][][]float32{}
	var batch []Item
	for i := range 300 {
		id := fmt.Sprintf("f%d/m%03d.md", i%3, i)
		vs := make([][]float32, 1+i%3)
		for c := range vs {
			vs[c] = randomUnit(r, dim)
			for k := range vs[c] {
				vs[c][k] *= 3 // not unit: the store normalises
			}
		}
		items[id] = vs
		batch = append(batch, Item{ID: id, Labels: []string{fmt.Sprintf("folder:f%d", i%3)}, Vectors: vs})
	}
	if err := s.Put(ctx, batch...); err != nil {
		t.Fatal(err)
	}
	if got, want := s.Len(), 300+300; got != want { // 1+2+3 chunks per three items
		t.Fatalf("Len = %d, want %d", got, want)
	}
	q := randomUnit(r, dim)
	tests := []struct {
		name  string
		n     int
		scope []string
		keep  func(string) bool
	}{
		{"all, few", 10, nil, nil},
		{"all, every chunk", 600, nil, nil},
		{"all, more than held", 5000, nil, nil},
		{"folder scope", 10, []string{"folder:f1"}, func(id string) bool { return id[:2] == "f1" }},
		{"unknown label", 10, []string{"folder:none"}, func(string) bool { return false }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := s.Query(ctx, q, tc.n, tc.scope)
			if err != nil {
				t.Fatal(err)
			}
			want := bruteForce(items, q, tc.keep)
			if f.Complete {
				if len(f.Hits) != len(want) {
					t.Fatalf("complete answer has %d items, want %d", len(f.Hits), len(want))
				}
			} else if len(want) > 0 && f.Bound < want[len(want)-1].Similarity {
				t.Fatalf("bound %v is below an existing similarity %v", f.Bound, want[len(want)-1].Similarity)
			}
			// Every item above the bound is returned, in exact order.
			var above []Hit
			for _, h := range want {
				if f.Complete || h.Similarity > f.Bound {
					above = append(above, h)
				}
			}
			if len(above) == 0 && len(want) > 0 {
				t.Fatalf("nothing above the bound %v", f.Bound)
			}
			for i, h := range above {
				g := f.Hits[i]
				if g.ID != h.ID || g.Chunk != h.Chunk || abs(g.Similarity-h.Similarity) > 1e-5 {
					t.Fatalf("hit %d = %+v, want %+v", i, g, h)
				}
			}
		})
	}
}

func abs(x float32) float32 { return max(x, -x) }

func TestChromemPutReplacesAndDeleteForgets(t *testing.T) {
	ctx := context.Background()
	s, err := NewChromem(2)
	if err != nil {
		t.Fatal(err)
	}
	x, y := []float32{1, 0}, []float32{0, 1}
	if err := s.Put(ctx, Item{ID: "a", Vectors: [][]float32{x, y}}, Item{ID: "b", Vectors: [][]float32{y}}); err != nil {
		t.Fatal(err)
	}
	// Replacing a with one chunk drops its old second chunk.
	if err := s.Put(ctx, Item{ID: "a", Vectors: [][]float32{{0, 0}, x}}); err != nil {
		t.Fatal(err)
	}
	if got := s.Len(); got != 2 {
		t.Fatalf("Len = %d after replacing a, want 2 (a's zero chunk is left out)", got)
	}
	if h, ok := s.Nearest(y, "a"); !ok || h.Chunk != 1 || h.Similarity != 0 {
		t.Fatalf("Nearest(y, a) = %+v %v, want chunk 1 at 0", h, ok)
	}
	f, err := s.Query(ctx, y, 5, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ids := hitIDs(f.Hits); !slices.Equal(ids, []string{"b", "a"}) || !f.Complete {
		t.Fatalf("Query(y) = %v complete %v, want [b a] complete", ids, f.Complete)
	}
	if err := s.Delete(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "never-there"); err != nil {
		t.Fatalf("deleting an unknown item: %v", err)
	}
	if _, ok := s.Nearest(y, "b"); ok {
		t.Fatal("a deleted item still has a nearest chunk")
	}
	if f, _ := s.Query(ctx, y, 5, nil); !slices.Equal(hitIDs(f.Hits), []string{"a"}) {
		t.Fatalf("after delete, Query = %v, want [a]", hitIDs(f.Hits))
	}
	// The same item twice in one batch: the later one stands.
	if err := s.Put(ctx, Item{ID: "c", Vectors: [][]float32{x}}, Item{ID: "c", Vectors: [][]float32{y, y}}); err != nil {
		t.Fatal(err)
	}
	if got := s.Len(); got != 3 {
		t.Fatalf("Len = %d, want 3", got)
	}
	if _, err := s.Query(ctx, y, 0, nil); err == nil {
		t.Fatal("Query with n = 0 must fail")
	}
	if err := s.Put(ctx, Item{Vectors: [][]float32{x}}); err == nil {
		t.Fatal("Put of an item without id must fail")
	}
}

func hitIDs(hs []Hit) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.ID)
	}
	return out
}

// TestChromemQueryTies: a collection asked for its n nearest chunks when
// more than n of them tie at the n-th similarity returns an arbitrary
// share of the tie (chromem-go's goroutines race for its heap), so Query
// keeps none of a full collection's last tie: the same query returns the
// same hits every time, and every item it leaves out is at most Bound.
func TestChromemQueryTies(t *testing.T) {
	ctx := context.Background()
	s, err := NewChromem(2)
	if err != nil {
		t.Fatal(err)
	}
	same := []float32{1, 1, 0, 0}
	var batch []Item
	for i := range 400 {
		v := same
		if i%50 == 0 {
			v = []float32{1, 1, 0.2, 0} // a few nearer ones
		}
		batch = append(batch, Item{ID: fmt.Sprintf("m%03d", i), Vectors: [][]float32{v}})
	}
	if err := s.Put(ctx, batch...); err != nil {
		t.Fatal(err)
	}
	q := Normalize([]float32{1, 1, 0.1, 0})
	first, err := s.Query(ctx, q, 30, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 30 {
		f, err := s.Query(ctx, q, 30, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(f, first) {
			t.Fatalf("two queries differ: %d hits, bound %v; %d hits, bound %v", len(first.Hits), first.Bound, len(f.Hits), f.Bound)
		}
	}
	if first.Complete || len(first.Hits) != 8 {
		t.Errorf("complete %v, %d hits; want the 8 nearer ones of an incomplete answer", first.Complete, len(first.Hits))
	}
}
