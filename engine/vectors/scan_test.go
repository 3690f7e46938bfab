package vectors

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// dotWide is the integer dot exactly, up to its extremes: codes of
// -128 and 127, a query at its largest steps, a tail past the last
// eight dimensions.
func TestDotWide(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, dim := range []int{1, 7, 8, 9, 100, 257, 1536} {
		for trial := range 50 {
			q := randomUnit(r, dim)
			if trial%5 == 0 {
				for i := range q {
					q[i] = float32(1 - 2*(i%2)) // every coordinate at ±levels
				}
			}
			qc := quantizeQuery(q)
			if qc.step == 0 {
				t.Fatalf("dim %d: no prefilter", dim)
			}
			d := make([]int8, dim)
			for i := range d {
				switch trial % 3 {
				case 0:
					d[i] = int8(r.IntN(256) - 128)
				case 1:
					d[i] = -128
				default:
					d[i] = 127
					if i%2 == 1 {
						d[i] = -128
					}
				}
			}
			var want int64
			for i := range d {
				want += int64(qc.dims[i]) * int64(d[i])
			}
			if got := qc.dotWide(d); int64(got) != want {
				t.Fatalf("dim %d trial %d: dotWide = %d, want %d", dim, trial, got, want)
			}
		}
	}
}

// The prefilter's bound holds and is tight: a code is never below a worst
// it reaches, and always below one a thousandth above its similarity.
func TestPrefilterBound(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	tests := []struct {
		name string
		code func(v []float32) Code
	}{
		{"quantised", func(v []float32) Code { c, _ := Quantize(v); return c }},
		{"foreign scale", func(v []float32) Code { c, _ := Quantize(v); c.Scale *= 3; return c }},
		{"huge scale", func(v []float32) Code { c, _ := Quantize(v); c.Scale *= 1e6; return c }},
		{"extreme bytes", func(v []float32) Code {
			c := Code{Scale: 0.01, Dims: make([]int8, len(v))}
			for i := range c.Dims {
				c.Dims[i] = int8(127 - 255*(i%2))
			}
			return c
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for range 2000 {
				q := randomUnit(r, 100)
				c := tc.code(randomUnit(r, 100))
				qc := quantizeQuery(q)
				exact := dotCode(q, c.Dims, c.Scale)
				if qc.below(c.Dims, c.Scale, exact) {
					t.Fatalf("below its own similarity %v", exact)
				}
				// A unit code's dims are ~450 long: scale·450 is its similarity unit.
				if tight := exact + 1e-3*max(1, abs32(c.Scale)*450); !qc.below(c.Dims, c.Scale, tight) {
					t.Fatalf("not below %v, a thousandth above its similarity %v", tight, exact)
				}
			}
		})
	}
	if qc := quantizeQuery([]float32{0, 0}); qc.below([]int8{1, 1}, 1, 10) {
		t.Error("a query of no direction filtered a code")
	}
}

// A query answers what the exhaustive scan it replaced answered, to the
// bit: the same hits in the same order, ties included, the same Bound and
// Complete, before and after items are replaced and deleted (slots move).
func TestFlatQueryExhaustive(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(5, 6))
	centers := make([][]float32, 8)
	for i := range centers {
		centers[i] = randomUnit(r, 100)
	}
	near := func(c []float32) []float32 { // a vector close to c: many near-ties
		v := slices.Clone(c)
		for i := range v {
			v[i] += float32(r.NormFloat64() * 0.02)
		}
		return v
	}
	key := func(buf []byte, n uint32) []byte { return fmt.Appendf(buf, "m%05d", n) }
	f := NewFlat(0, key)
	ids := []uint32{}
	role := map[uint32]string{} // item → its one label
	for i := range 6000 {
		id := uint32(i)
		v := near(centers[i%len(centers)])
		if i%7 == 0 {
			v = centers[i%len(centers)] // exact ties
		}
		role[id] = fmt.Sprintf("role:%d", i%2)
		if err := f.Put(id, f.Labels([]string{role[id]}), v); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	check := func(stage string) {
		for qi, q := range append(slices.Clone(centers[:3]), randomUnit(r, 100), near(centers[4])) {
			for _, n := range []int{1, 10, 256, 2000} {
				for _, scope := range [][]string{nil, {"role:1"}} {
					got, err := f.Query(ctx, q, n, scope)
					if err != nil {
						t.Fatal(err)
					}
					if want := exhaustive(f, key, q, n, role, scope); !reflect.DeepEqual(got, want) {
						t.Fatalf("%s: query %d n %d scope %v: %d hits (bound %v), exhaustive %d (bound %v)",
							stage, qi, n, scope, len(got.Hits), got.Bound, len(want.Hits), want.Bound)
					}
				}
			}
		}
	}
	check("put")
	for i, id := range ids {
		switch i % 3 {
		case 0:
			f.Delete(id)
			delete(role, id)
		case 1:
			role[id] = "role:1"
			if err := f.Put(id, f.Labels([]string{role[id]}), near(centers[(i+1)%len(centers)])); err != nil {
				t.Fatal(err)
			}
		}
	}
	check("replaced and deleted")
}

// exhaustive is Query as it was before the prefilter, through Flat's
// public face only: every item in scope scored (Nearest), each group's
// n best, ties by id (key's).
func exhaustive(f *Flat, key KeyFunc, q []float32, n int, role map[uint32]string, scope []string) NumFound {
	byGroup := make([][]NumHit, DefaultShards)
	for id, r := range role {
		if len(scope) == 0 || scope[0] == r {
			sim, _ := f.Nearest(q, id)
			g := shardOf(string(key(nil, id)), DefaultShards)
			byGroup[g] = append(byGroup[g], NumHit{Num: id, Similarity: sim})
		}
	}
	found := NumFound{Bound: -1, Complete: true}
	best := func(a, b NumHit) int {
		if a.Similarity != b.Similarity {
			if a.Similarity > b.Similarity {
				return -1
			}
			return 1
		}
		return bytes.Compare(key(nil, a.Num), key(nil, b.Num))
	}
	for _, hs := range byGroup {
		slices.SortFunc(hs, best)
		if len(hs) >= n {
			hs = hs[:n]
			found.Complete = false
			found.Bound = max(found.Bound, hs[n-1].Similarity)
		}
		found.Hits = append(found.Hits, hs...)
	}
	slices.SortFunc(found.Hits, best)
	return found
}

func abs32(x float32) float32 { return max(x, -x) }
