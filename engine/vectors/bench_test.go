package vectors

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// BenchmarkQuery is one Query of the 64 nearest chunks over stores of 1k,
// 10k and 48k chunks (tldr holds 47,445) of 100-d vectors, by shard count.
func BenchmarkQuery(b *testing.B) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1_000, 10_000, 48_000} {
		items := make([]Item, n)
		for i := range items {
			items[i] = Item{ID: fmt.Sprintf("pages/x/p%06d.md", i), Labels: []string{"folder:pages", "folder:pages/x"}, Vectors: [][]float32{randomUnit(r, 100)}}
		}
		for _, shards := range []int{1, 2, 4, 8, 16} {
			s, err := NewChromem(shards)
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Put(ctx, items...); err != nil {
				b.Fatal(err)
			}
			qs := make([][]float32, 64)
			for i := range qs {
				qs[i] = randomUnit(r, 100)
			}
			b.Run(fmt.Sprintf("chunks=%d/shards=%d", n, shards), func(b *testing.B) {
				i := 0
				for b.Loop() {
					if _, err := s.Query(ctx, qs[i%len(qs)], 64, nil); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}

// BenchmarkStoreQuery is one unscoped Query of the 256 nearest (what a
// sessions search asks first) over 100k items of 100-d vectors, by
// store, with each store's heap: Chromem (4 collections, float32 and
// documents) against Flat (8-bit codes in one slice).
func BenchmarkStoreQuery(b *testing.B) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(7, 8))
	items := make([]Item, 100_000)
	for i := range items {
		items[i] = Item{ID: fmt.Sprintf("%x.%x", i/100, i%100), Labels: []string{"role:user", fmt.Sprintf("session:%d", i/100)}, Vectors: [][]float32{randomUnit(r, 100)}}
	}
	qs := make([][]float32, 64)
	for i := range qs {
		qs[i] = randomUnit(r, 100)
	}
	stores := []struct {
		name string
		make func() (Store, error)
	}{
		{"chromem", func() (Store, error) { return NewChromem(0) }},
		{"flat", func() (Store, error) { return NewFlat(100), nil }},
	}
	for _, st := range stores {
		b.Run(st.name, func(b *testing.B) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			s, err := st.make()
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Put(ctx, items...); err != nil {
				b.Fatal(err)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			i := 0
			for b.Loop() {
				if _, err := s.Query(ctx, qs[i%len(qs)], 256, nil); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/1e6, "heapMB")
			runtime.KeepAlive(s)
		})
	}
}

// BenchmarkFlatQuery1M is one unscoped Flat query of each group's 256
// nearest (what a sessions search asks first) over 1M random 100-d
// codes, the size of a 1M-message history: the scan a hybrid search of
// that history pays once.
func BenchmarkFlatQuery1M(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 10))
	f := NewFlat(100)
	f.Reserve(1_000_000)
	set := f.Labels([]string{"role:user"})
	for i := range 1_000_000 {
		c, _ := Quantize(randomUnit(r, 100))
		if err := f.PutCode(fmt.Sprintf("%x.%x", i/200, i%200), set, c); err != nil {
			b.Fatal(err)
		}
	}
	qs := make([][]float32, 16)
	for i := range qs {
		qs[i] = randomUnit(r, 100)
	}
	ctx := context.Background()
	i := 0
	for b.Loop() {
		if _, err := f.Query(ctx, qs[i%len(qs)], 256, nil); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
