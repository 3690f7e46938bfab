package vectors

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

func TestQuantize(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	tests := []struct {
		name string
		v    []float32
		ok   bool
	}{
		{"random", randomUnit(r, 100), true},
		{"not unit", []float32{3, 4}, true},
		{"one axis", []float32{0, -2, 0}, true},
		{"zero", []float32{0, 0}, false},
		{"nan", []float32{float32(math.NaN()), 1}, false},
		{"empty", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := Quantize(tc.v)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			u := Normalize(tc.v)
			if d := dot(c.Float(), c.Float()); math.Abs(float64(d)-1) > 1e-5 {
				t.Errorf("|code|² = %v, want 1", d)
			}
			if d := dotCode(u, c.Dims, c.Scale); d < 0.999 {
				t.Errorf("similarity to itself %v, want ≥ 0.999", d)
			}
			back, ok := DecodeCode(EncodeCode(c), len(tc.v))
			if !ok || back.Scale != c.Scale || !slices.Equal(back.Dims, c.Dims) {
				t.Errorf("EncodeCode/DecodeCode: %v %v, want %v", back, ok, c)
			}
			old, ok := DecodeCode(Encode(tc.v), len(tc.v))
			if !ok || old.Scale != c.Scale || !slices.Equal(old.Dims, c.Dims) {
				t.Errorf("DecodeCode of a float32 vector: %v %v, want %v", old, ok, c)
			}
		})
	}
	if _, ok := DecodeCode(make([]byte, 7), 100); ok {
		t.Error("DecodeCode of 7 bytes for 100 dimensions: ok")
	}
}

// TestQuantizeError bounds what 8 bits cost a similarity, on random unit
// vectors of the built-in embedder's 100 dimensions.
func TestQuantizeError(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	var worst float64
	for range 2000 {
		a, b := randomUnit(r, 100), randomUnit(r, 100)
		c, _ := Quantize(b)
		worst = max(worst, math.Abs(float64(dotCode(a, c.Dims, c.Scale)-dot(a, b))))
	}
	if worst > 0.01 {
		t.Errorf("worst similarity error %.4f, want ≤ 0.01", worst)
	}
}

// mKey names item n "m%03d", as the tests' Chromem items are named.
func mKey(buf []byte, n uint32) []byte { return fmt.Appendf(buf, "m%03d", n) }

// putFloat puts v as item n with labels, failing the test on an error.
func putFloat(t testing.TB, f *Flat, n uint32, v []float32, labels ...string) {
	t.Helper()
	if err := f.Put(n, f.Labels(labels), v); err != nil {
		t.Fatal(err)
	}
}

func TestFlatQuery(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(3, 3))
	f := NewFlat(0, mKey)
	exact := map[uint32][]float32{}
	for i := range uint32(500) {
		v := randomUnit(r, 32)
		labels := []string{"role:user"}
		if i%2 == 1 {
			labels = []string{"role:assistant", "session:odd"}
		}
		putFloat(t, f, i, v, labels...)
		exact[i] = v
	}
	q := randomUnit(r, 32)
	tests := []struct {
		name     string
		n        int
		scope    []string
		in       func(i int) bool
		complete bool
	}{
		{"all", 10, nil, func(int) bool { return true }, false},
		{"one label", 10, []string{"role:assistant"}, func(i int) bool { return i%2 == 1 }, false},
		{"two labels", 300, []string{"session:odd", "role:assistant"}, func(i int) bool { return i%2 == 1 }, true},
		{"unknown label", 10, []string{"role:nobody"}, func(int) bool { return false }, true},
		{"some groups full", 60, []string{"role:user"}, func(i int) bool { return i%2 == 0 }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			found, err := f.Query(ctx, q, tc.n, tc.scope)
			if err != nil {
				t.Fatal(err)
			}
			// Each group's n nearest by id, as Chromem's collections answered.
			byGroup := make([][]Hit, DefaultShards)
			for i := range 500 {
				if id := fmt.Sprintf("m%03d", i); tc.in(i) {
					sim, _ := f.Nearest(q, uint32(i))
					g := shardOf(id, DefaultShards)
					byGroup[g] = append(byGroup[g], Hit{ID: id, Similarity: sim})
				}
			}
			var want []Hit
			bound := float32(-1)
			for _, hs := range byGroup {
				sort.Slice(hs, func(i, j int) bool { return worseHit(hs[j], hs[i]) })
				if len(hs) >= tc.n {
					hs = hs[:tc.n]
					bound = max(bound, hs[tc.n-1].Similarity)
				}
				want = append(want, hs...)
			}
			sort.Slice(want, func(i, j int) bool { return worseHit(want[j], want[i]) })
			if got := namedHits(found.Hits); !slices.Equal(got, want) {
				t.Fatalf("hits %v\nwant %v", got, want)
			}
			if found.Complete != tc.complete {
				t.Errorf("Complete = %v, want %v", found.Complete, tc.complete)
			}
			if found.Bound != bound {
				t.Errorf("Bound = %v, want the highest n-th of a group, %v", found.Bound, bound)
			}
			for _, h := range found.Hits {
				if d := math.Abs(float64(h.Similarity - dot(q, exact[h.Num]))); d > 0.01 {
					t.Errorf("%d: similarity %v, float32 %v", h.Num, h.Similarity, dot(q, exact[h.Num]))
				}
			}
		})
	}
}

// worseHit is Flat's order of hits by id: lower similarity first, then
// the larger id.
func worseHit(a, b Hit) bool {
	if a.Similarity != b.Similarity {
		return a.Similarity < b.Similarity
	}
	return a.ID > b.ID
}

// namedHits is hits of items named by mKey, as a Store's hits.
func namedHits(hs []NumHit) []Hit {
	out := make([]Hit, len(hs))
	for i, h := range hs {
		out[i] = Hit{ID: string(mKey(nil, h.Num)), Similarity: h.Similarity}
	}
	return out
}

// Equal similarities (the same text twice) are ordered by id, not by
// number, within a group and across groups: the order the string-keyed
// Flat gave.
func TestFlatTiesByID(t *testing.T) {
	f := NewFlat(2, func(buf []byte, n uint32) []byte { return fmt.Appendf(buf, "%d", 20-n) })
	for n := range uint32(12) {
		putFloat(t, f, n, []float32{1, 0})
	}
	found, err := f.Query(context.Background(), []float32{1, 0}, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]string, len(found.Hits))
	for i, h := range found.Hits {
		got[i] = fmt.Sprint(20 - h.Num)
	}
	if !slices.IsSorted(got) {
		t.Errorf("hits of equal similarity in the order %v, want their ids sorted", got)
	}
	byGroup := map[int][]string{}
	for n := range 12 {
		id := fmt.Sprint(20 - n)
		byGroup[shardOf(id, DefaultShards)] = append(byGroup[shardOf(id, DefaultShards)], id)
	}
	var want []string
	for _, ids := range byGroup {
		slices.Sort(ids)
		want = append(want, ids[:min(3, len(ids))]...)
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("hits %v, want each group's 3 first ids %v", got, want)
	}
}

func TestFlatPutDelete(t *testing.T) {
	f := NewFlat(2, nil)
	const a, b, c, d = 0, 1, 7, 3 // numbers need not be dense
	putFloat(t, f, a, []float32{1, 0}, "l:a")
	putFloat(t, f, b, []float32{0, 1}, "l:b")
	putFloat(t, f, c, []float32{-1, 0}, "l:c")
	putFloat(t, f, a, []float32{0, -1}, "l:a") // replaced in place
	f.Delete(b)
	f.Delete(99)
	putFloat(t, f, d, []float32{0, 0}, "l:d") // no direction: left out
	if f.Len() != 2 {
		t.Fatalf("Len = %d, want 2", f.Len())
	}
	for n, want := range map[uint32]float32{a: -1, c: 0} {
		sim, ok := f.Nearest([]float32{0, 1}, n)
		if !ok || math.Abs(float64(sim-want)) > 1e-6 {
			t.Errorf("Nearest %d = %v %v, want %v", n, sim, ok, want)
		}
	}
	for _, n := range []uint32{b, d, 99} {
		if _, ok := f.Nearest([]float32{0, 1}, n); ok {
			t.Errorf("%d is there", n)
		}
	}
	nums := []uint32{a, b, c, d, 99}
	each := make([]float32, len(nums))
	f.NearestEach([]float32{0, 1}, nums, each)
	for i, n := range nums {
		if sim, _ := f.Nearest([]float32{0, 1}, n); each[i] != sim {
			t.Errorf("NearestEach %d = %v, Nearest %v", n, each[i], sim)
		}
	}
	got, _ := f.Query(context.Background(), []float32{1, 0}, 5, []string{"l:c"})
	if len(got.Hits) != 1 || got.Hits[0].Num != c {
		t.Errorf("c by its label after the move: %v", got.Hits)
	}
	if err := f.Put(5, f.Labels(nil), []float32{1, 0, 0}); err == nil {
		t.Error("a vector of 3 dimensions was taken by a store of 2")
	}
	if err := f.PutCode(5, LabelSet(99), Code{Scale: 1, Dims: []int8{1, 0}}); err == nil {
		t.Error("a label set Labels never made was taken")
	}
}

// Flat answers as Chromem does, up to what 8 bits move: the same items
// (but for near-ties at a group's edge), the same Complete.
func TestFlatAnswersAsChromem(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(4, 4))
	ch, err := NewChromem(0)
	if err != nil {
		t.Fatal(err)
	}
	f := NewFlat(0, mKey)
	for i := range 3000 {
		it := Item{ID: string(mKey(nil, uint32(i))), Labels: []string{fmt.Sprintf("role:%d", i%3)}, Vectors: [][]float32{randomUnit(r, 100)}}
		if err := ch.Put(ctx, it); err != nil {
			t.Fatal(err)
		}
		putFloat(t, f, uint32(i), it.Vectors[0], it.Labels...)
	}
	for _, tc := range []struct {
		n     int
		scope []string
	}{{10, nil}, {256, nil}, {64, []string{"role:1"}}, {300, []string{"role:2"}}} {
		var same, all int
		for range 20 {
			q := randomUnit(r, 100)
			a, err1 := ch.Query(ctx, q, tc.n, tc.scope)
			b, err2 := f.Query(ctx, q, tc.n, tc.scope)
			if err := errors.Join(err1, err2); err != nil {
				t.Fatal(err)
			}
			if a.Complete != b.Complete || len(a.Hits) != len(b.Hits) {
				t.Fatalf("n %d scope %v: Flat %d hits, complete %v; Chromem %d, %v", tc.n, tc.scope, len(b.Hits), b.Complete, len(a.Hits), a.Complete)
			}
			ids := map[string]bool{}
			for _, h := range a.Hits {
				ids[h.ID] = true
			}
			for _, h := range namedHits(b.Hits) {
				if ids[h.ID] {
					same++
				}
			}
			all += len(a.Hits)
		}
		if float64(same) < 0.97*float64(all) {
			t.Errorf("n %d scope %v: %d of %d items the same, want ≥ 97 %%", tc.n, tc.scope, same, all)
		}
	}
}
