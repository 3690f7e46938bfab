package table

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

func TestIndex(t *testing.T) {
	words := []string{"the", "a", "well-known", "café", "日本", strings.Repeat("x", 255), "th", "thee"}
	x, err := NewIndex(words)
	if err != nil {
		t.Fatal(err)
	}
	for r, w := range words {
		if got, ok := x.Row([]byte(w)); !ok || int(got) != r {
			t.Errorf("Row(%q) = %d, %v; want %d", w, got, ok, r)
		}
	}
	for _, w := range []string{"", "t", "The", "then", "well", "cafe", "日", strings.Repeat("x", 254), strings.Repeat("x", 256), "a\x00"} {
		if got, ok := x.Row([]byte(w)); ok {
			t.Errorf("Row(%q) = %d, true; the index lacks it", w, got)
		}
	}
	for _, bad := range [][]string{{"a", "b", "a"}, {""}, {strings.Repeat("y", 256)}} {
		if _, err := NewIndex(bad); err == nil {
			t.Errorf("NewIndex(%q) accepted it", bad)
		}
	}
	if _, err := NewIndex([]string{"a", "b", "a"}); !errors.Is(err, errDuplicate) {
		t.Errorf("NewIndex with a duplicate: err = %v, want errDuplicate", err)
	}
	empty, err := NewIndex(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := empty.Row([]byte("a")); ok {
		t.Error("an empty index found a word")
	}
}

// TestIndexAgreesWithMap checks many words, most of them sharing tags'
// length bits, against a map, hits and misses, at several sizes (so
// several loads and probe lengths).
func TestIndexAgreesWithMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	word := func() string {
		b := make([]byte, 1+rng.IntN(6))
		for i := range b {
			b[i] = "abcdefgh"[rng.IntN(8)]
		}
		return string(b)
	}
	for _, n := range []int{1, 7, 100, 5000, 60000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			m := map[string]int32{}
			var words []string
			for len(words) < n {
				if w := word(); m[w] == 0 {
					words = append(words, w)
					m[w] = int32(len(words)) // row + 1
				}
			}
			x, err := NewIndex(words)
			if err != nil {
				t.Fatal(err)
			}
			for range 3 * n {
				w := word()
				got, ok := x.Row([]byte(w))
				if want := m[w] - 1; ok != (want >= 0) || ok && got != want {
					t.Fatalf("Row(%q) = %d, %v; the map has %d", w, got, ok, want)
				}
			}
		})
	}
}

// TestIndexBuiltinTable checks the index of the embedder's own table: every
// word at its row.
func TestIndexBuiltinTable(t *testing.T) {
	data, err := os.ReadFile("../../glove.bin")
	if err != nil {
		t.Fatal(err)
	}
	tb, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	for r, w := range tb.Words {
		if got, ok := tb.Index.Row([]byte(w)); !ok || int(got) != r {
			t.Fatalf("Row(%q) = %d, %v; want %d", w, got, ok, r)
		}
	}
	t.Logf("%d words in %d slots (load %.2f)", len(tb.Words), len(tb.Index.slots), float64(len(tb.Words))/float64(len(tb.Index.slots)))
}

// BenchmarkIndex looks up a stream of words, most of them in the table,
// some not, in Index and in the map[string]int32 it replaced.
func BenchmarkIndex(b *testing.B) {
	data, err := os.ReadFile("../../glove.bin")
	if err != nil {
		b.Fatal(err)
	}
	tb, err := Decode(data)
	if err != nil {
		b.Fatal(err)
	}
	m := make(map[string]int32, len(tb.Words))
	for r, w := range tb.Words {
		m[w] = int32(r)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	stream := make([][]byte, 1<<16)
	for i := range stream {
		switch r := rng.IntN(10); {
		case r < 6: // frequent words dominate text
			stream[i] = []byte(tb.Words[rng.IntN(1000)])
		case r < 9:
			stream[i] = []byte(tb.Words[rng.IntN(len(tb.Words))])
		default:
			stream[i] = []byte(tb.Words[rng.IntN(len(tb.Words))] + "zq")
		}
	}
	var sink int32
	b.Run("Index", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			r, _ := tb.Index.Row(stream[i&(len(stream)-1)])
			sink += r
		}
	})
	b.Run("map", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			r := m[string(stream[i&(len(stream)-1)])]
			sink += r
		}
	})
	_ = sink
}
