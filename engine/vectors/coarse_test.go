package vectors

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// The coarse dot is Σc·d or at most 2 a block more, at every dim from 1
// to 17, around the written-out 13 blocks and past them, for extreme
// codes, queries with one coordinate far above the rest, and whatever
// bytes follow the code.
func TestCoarseDot(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	dims := []int{23, 24, 25, 63, 64, 65, 96, 97, 99, 100, 103, 104, 105, 257}
	for d := 1; d <= 17; d++ {
		dims = append(dims, d)
	}
	codes := map[string]func(i int) int8{
		"all 127":  func(int) int8 { return 127 },
		"all -128": func(int) int8 { return -128 },
		"127 -128": func(i int) int8 { return int8(127 - 255*(i%2)) },
		"random":   func(int) int8 { return int8(r.IntN(256) - 128) },
	}
	queries := map[string]func(dim int) []float32{
		"random":    func(dim int) []float32 { return randomUnit(r, dim) },
		"±levels":   func(dim int) []float32 { q := make([]float32, dim); fillAlternating(q); return q },
		"huge last": func(dim int) []float32 { return huge(r, dim, dim-1) },
		"huge -at 2": func(dim int) []float32 {
			q := huge(r, dim, min(2, dim-1))
			q[min(2, dim-1)] *= -1
			return q
		},
	}
	for _, dim := range dims {
		for cn, code := range codes {
			for qn, query := range queries {
				d := make([]int8, dim)
				for i := range d {
					d[i] = code(i)
				}
				q := query(dim)
				qc := quantizeQuery(q)
				cq := &qc.coarse
				var want int64
				for i := range d {
					c := int64(math.Round(float64(q[i]) / cq.step))
					if c > coarseLevels || c < -coarseLevels {
						t.Fatalf("dim %d %s: coarse step %d beyond %d", dim, qn, c, coarseLevels)
					}
					want += c * int64(d[i])
				}
				for _, fill := range []byte{0, 0x7f, 0x80, 0xff} {
					got := cq.dot(wideCode(&qc, d, fill))
					if got < want || got > want+2*int64(len(cq.words)) {
						t.Errorf("dim %d, code %s, query %s, fill %#x: coarse dot %d, want %d to %d",
							dim, cn, qn, fill, got, want, want+2*int64(len(cq.words)))
					}
				}
			}
		}
	}
}

func fillAlternating(q []float32) {
	for i := range q {
		q[i] = float32(1 - 2*(i%3%2))
	}
}

// The coarse bound holds for Quantize's codes: never below the code's
// own similarity (as dotCode computes it), whatever the query.
func TestCoarseBound(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	for _, dim := range []int{3, 100, 384} {
		for trial := range 3000 {
			q := randomUnit(r, dim)
			if trial%3 == 0 {
				q = huge(r, dim, r.IntN(dim))
			}
			v := randomUnit(r, dim)
			if trial%5 == 0 {
				copy(v, q) // the code of the query itself: the highest similarity
			}
			c, _ := Quantize(v)
			if !normed(c.Dims, c.Scale) {
				t.Fatalf("dim %d: a Quantize code is not normed", dim)
			}
			qc := quantizeQuery(q)
			exact := dotCode(q, c.Dims, c.Scale)
			if qc.coarse.below(wideCode(&qc, c.Dims, 0xff), c.Scale, exact) {
				t.Fatalf("dim %d trial %d: coarse bound below the code's similarity %v", dim, trial, exact)
			}
		}
	}
}

// A Flat judges by the coarse bound only while every code it holds is
// normed: one that is not (a foreign scale) turns it off until it goes,
// replaced or deleted, and the answers stay the exhaustive scan's. The
// foreign code is made for the coarse bound to miss: the query's
// coordinates but its largest just under half a coarse step (rounded to
// 0), the code 127 there, so the coarse dot is 0 where the exact one is
// ~190 steps, at a scale that makes its similarity 1.5, above any other.
func TestFlatUntrusted(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(21, 22))
	key := func(buf []byte, n uint32) []byte { return fmt.Appendf(buf, "m%05d", n) }
	f := NewFlat(100, key)
	role := map[uint32]string{}
	set := f.Labels([]string{"role:0"})
	target := make([]float32, 100) // the query that the foreign code answers
	target[0] = 1
	for i := 1; i < 100; i++ {
		target[i] = 0.49 / coarseLevels
	}
	for i := range 2000 {
		v := randomUnit(r, 100)
		if i%10 == 0 { // close to target: each group's best is high
			for j := range v {
				v[j] = target[j] + float32(r.NormFloat64()*0.05)
			}
		}
		role[uint32(i)] = "role:0"
		if err := f.Put(uint32(i), set, v); err != nil {
			t.Fatal(err)
		}
	}
	foreign := Code{Dims: make([]int8, 100)}
	for i := 1; i < 100; i++ {
		foreign.Dims[i] = 127
	}
	foreign.Scale = 1.5 / dotCode(target, foreign.Dims, 1)
	check := func(stage string, untrusted int) {
		t.Helper()
		if f.untrusted != untrusted {
			t.Fatalf("%s: %d untrusted, want %d", stage, f.untrusted, untrusted)
		}
		for _, q := range [][]float32{target, randomUnit(r, 100), randomUnit(r, 100)} {
			for _, n := range []int{1, 10} {
				got, err := f.Query(ctx, q, n, nil)
				if err != nil {
					t.Fatal(err)
				}
				if want := exhaustive(f, key, q, n, role, nil); !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: n %d: answer differs from the exhaustive scan", stage, n)
				}
			}
		}
	}
	check("quantised", 0)
	for _, n := range []uint32{5000, 5001} {
		if err := f.PutCode(n, set, foreign); err != nil {
			t.Fatal(err)
		}
		role[n] = "role:0"
	}
	check("two foreign codes", 2)
	if err := f.Put(5000, set, randomUnit(r, 100)); err != nil {
		t.Fatal(err)
	}
	check("one replaced", 1)
	f.Delete(5001)
	delete(role, 5001)
	check("the other deleted", 0)
}
