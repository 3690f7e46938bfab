package vectors

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
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
		items[i] = Item{ID: strconv.Itoa(i), Labels: []string{"role:user", fmt.Sprintf("session:%d", i/100)}, Vectors: [][]float32{randomUnit(r, 100)}}
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
		{"flat", func() (Store, error) { return numberedFlat{NewFlat(100, nil)}, nil }},
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

// numberedFlat is a Flat as a Store for the benchmarks, whose items are
// named by their number in decimal (NewFlat's default key).
type numberedFlat struct{ *Flat }

func (f numberedFlat) Put(ctx context.Context, items ...Item) error {
	for _, it := range items {
		n, err := strconv.ParseUint(it.ID, 10, 32)
		if err != nil || len(it.Vectors) != 1 {
			return fmt.Errorf("item %q: want a number and one vector", it.ID)
		}
		if err := f.Flat.Put(uint32(n), f.Labels(it.Labels), it.Vectors[0]); err != nil {
			return err
		}
	}
	return nil
}

func (f numberedFlat) Delete(ctx context.Context, id string) error {
	n, err := strconv.ParseUint(id, 10, 32)
	if err == nil {
		f.Flat.Delete(uint32(n))
	}
	return nil
}

func (f numberedFlat) Nearest(q []float32, id string) (Hit, bool) {
	n, _ := strconv.ParseUint(id, 10, 32)
	sim, ok := f.Flat.Nearest(q, uint32(n))
	return Hit{ID: id, Similarity: sim}, ok
}

func (f numberedFlat) Query(ctx context.Context, q []float32, n int, scope []string) (Found, error) {
	got, err := f.Flat.Query(ctx, q, n, scope)
	out := Found{Bound: got.Bound, Complete: got.Complete}
	for _, h := range got.Hits {
		out.Hits = append(out.Hits, Hit{ID: strconv.FormatUint(uint64(h.Num), 10), Similarity: h.Similarity})
	}
	return out, err
}

// BenchmarkFlatQuery1M is one unscoped Flat query of each group's 256
// nearest (what a sessions search asks first) over 1M random 100-d
// codes, the size of a 1M-message history: the scan a hybrid search of
// that history pays once.
func BenchmarkFlatQuery1M(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 10))
	// Items named as the sessions name messages (session.sequence, base
	// 36 there; hex here): the groups fall as they would.
	f := NewFlat(100, func(buf []byte, n uint32) []byte { return fmt.Appendf(buf, "%x.%x", n/200, n%200) })
	f.Reserve(1_000_000)
	set := f.Labels([]string{"role:user"})
	for i := range 1_000_000 {
		c, _ := Quantize(randomUnit(r, 100))
		if err := f.PutCode(uint32(i), set, c); err != nil {
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

// BenchmarkDotWide is the prefilter's integer dot alone over 1,024
// codes in cache: the part of a scan that runs for every code; ns/code
// is its cost a code. 100 dimensions are the built-in embedder's (13
// blocks written out), 384 and 768 go through the loop any dim takes.
func BenchmarkDotWide(b *testing.B) {
	for _, dim := range []int{100, 384, 768} {
		b.Run(fmt.Sprintf("dim=%d", dim), func(b *testing.B) {
			r := rand.New(rand.NewPCG(11, 12))
			const n = 1024
			codes := make([]int8, 0, n*dim+8) // room for the last code's wide read
			for range n {
				c, _ := Quantize(randomUnit(r, dim))
				codes = append(codes, c.Dims...)
			}
			qc := quantizeQuery(randomUnit(r, dim))
			all := codeBytes(codes[:n*dim+8])
			var sink int32
			for b.Loop() {
				for i := range n {
					sink += qc.dotWide(all[i*dim:])
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/code")
			runtime.KeepAlive(sink)
		})
	}
}
