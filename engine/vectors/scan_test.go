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
			if got := qc.dotWide(wideCode(&qc, d, 0xa5)); int64(got) != want {
				t.Fatalf("dim %d trial %d: dotWide = %d, want %d", dim, trial, got, want)
			}
		}
	}
}

// wideCode is d as dotWide reads it: its bytes, then fill up to wide()
// (in a Flat, the next code's first bytes).
func wideCode(qc *queryCode, d []int8, fill byte) []byte {
	b := slices.Clone(codeBytes(d))
	for len(b) < qc.wide() {
		b = append(b, fill)
	}
	return b
}

// dotWide equals a plain integer dot product at the edges of its loop:
// every dimension from 1 to 17 and around the multiples of 8 and 16
// (one block, two a turn, the odd block, the padded tail), codes at
// their extremes, queries with one coordinate far above the rest, and
// whatever bytes follow the code.
func TestDotWideEdges(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	dims := []int{23, 24, 25, 31, 32, 33, 63, 64, 65, 96, 97, 99, 100, 103, 104, 105, 257}
	for d := 1; d <= 17; d++ {
		dims = append(dims, d)
	}
	codes := []struct {
		name string
		at   func(i int) int8
	}{
		{"all 127", func(int) int8 { return 127 }},
		{"all -128", func(int) int8 { return -128 }},
		{"127 -128", func(i int) int8 { return int8(127 - 255*(i%2)) }},
		{"-128 127", func(i int) int8 { return int8(-128 + 255*(i%2)) }},
		{"zero", func(int) int8 { return 0 }},
		{"one -128 at the end", nil}, // set below: 1s, the last -128
		{"random", func(int) int8 { return int8(r.IntN(256) - 128) }},
	}
	queries := []struct {
		name string
		make func(dim int) []float32
	}{
		{"random", func(dim int) []float32 { return randomUnit(r, dim) }},
		{"±levels", func(dim int) []float32 {
			q := make([]float32, dim)
			for i := range q {
				q[i] = float32(1 - 2*(i%3%2))
			}
			return q
		}},
		{"one huge first", func(dim int) []float32 { return huge(r, dim, 0) }},
		{"one huge last", func(dim int) []float32 { return huge(r, dim, dim-1) }},
		{"one huge -last", func(dim int) []float32 { q := huge(r, dim, dim-1); q[dim-1] *= -1; return q }},
		{"one huge at 4", func(dim int) []float32 { return huge(r, dim, min(4, dim-1)) }},
	}
	for _, dim := range dims {
		for _, cc := range codes {
			for _, qq := range queries {
				d := make([]int8, dim)
				for i := range d {
					if cc.at == nil {
						d[i] = 1
						if i == dim-1 {
							d[i] = -128
						}
						continue
					}
					d[i] = cc.at(i)
				}
				qc := quantizeQuery(qq.make(dim))
				if qc.step == 0 {
					t.Fatalf("dim %d %s: no prefilter", dim, qq.name)
				}
				var want int64
				for i := range d {
					want += int64(qc.dims[i]) * int64(d[i])
				}
				for _, fill := range []byte{0, 0x7f, 0x80, 0xff} {
					if got := qc.dotWide(wideCode(&qc, d, fill)); int64(got) != want {
						t.Errorf("dim %d, code %s, query %s, fill %#x: dotWide = %d, want %d",
							dim, cc.name, qq.name, fill, got, want)
					}
				}
			}
		}
	}
}

// huge is a random vector of dim dimensions whose coordinate at is a
// million times the others': quantised, the others round to 0 or ±1.
func huge(r *rand.Rand, dim, at int) []float32 {
	q := randomUnit(r, dim)
	q[at] = 1e6 * max(abs32(q[at]), 1e-3)
	return q
}

// A Flat of few dimensions, whose last codes dotWide reads through a
// padded copy and the others in place (past the code's end, into the
// next), answers as the exhaustive scan does.
func TestFlatQuerySmallDims(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(15, 16))
	key := func(buf []byte, n uint32) []byte { return fmt.Appendf(buf, "m%05d", n) }
	for _, dim := range []int{1, 3, 7, 8, 9, 15, 17} {
		f := NewFlat(dim, key)
		role := map[uint32]string{}
		for i := range 3000 {
			role[uint32(i)] = "role:0"
			if err := f.Put(uint32(i), f.Labels([]string{"role:0"}), randomUnit(r, dim)); err != nil {
				t.Fatal(err)
			}
		}
		for range 5 {
			q := randomUnit(r, dim)
			for _, n := range []int{1, 20} {
				got, err := f.Query(ctx, q, n, nil)
				if err != nil {
					t.Fatal(err)
				}
				if want := exhaustive(f, key, q, n, role, nil); !reflect.DeepEqual(got, want) {
					t.Fatalf("dim %d n %d: %d hits (bound %v), exhaustive %d (bound %v)",
						dim, n, len(got.Hits), got.Bound, len(want.Hits), want.Bound)
				}
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
				code := wideCode(&qc, c.Dims, 0)
				if qc.below(code, c.Scale, exact) {
					t.Fatalf("below its own similarity %v", exact)
				}
				// A unit code's dims are ~450 long: scale·450 is its similarity unit.
				if tight := exact + 1e-3*max(1, abs32(c.Scale)*450); !qc.below(code, c.Scale, tight) {
					t.Fatalf("not below %v, a thousandth above its similarity %v", tight, exact)
				}
			}
		})
	}
	if qc := quantizeQuery([]float32{0, 0}); qc.below(make([]byte, 8), 1, 10) {
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
