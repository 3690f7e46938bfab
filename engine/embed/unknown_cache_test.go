package embed

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
)

// TestUnknownCacheBitIdentical embeds texts full of unknown words through
// caches of several sizes, twice over (cold, then warm or evicted), and
// checks every component against the vector a fresh cache gives: a cached
// stand-in must change nothing, not even the last bit.
func TestUnknownCacheBitIdentical(t *testing.T) {
	base := builtinT(t)
	withCache := func(max int) *Static {
		s := *base
		s.unknowns = newUnknownCache(max)
		return &s
	}
	word := func(i int) string { // unknown, letters only: the tokenizer keeps it whole
		return "zqxv" + string(rune('a'+i%26)) + string(rune('a'+i/26%26))
	}
	var texts []string
	for i := range 40 {
		var b strings.Builder
		fmt.Fprintf(&b, "the %s command runs %s with kwyjibo flags; ", word(i), word(100+i%7))
		fmt.Fprintf(&b, "see %s --help and %s", word((i+3)%40), strings.Repeat("qz", 40+i)) // > maxCachedWord
		texts = append(texts, b.String())
	}
	ctx := context.Background()
	want := make([][]float32, len(texts))
	for i, text := range texts {
		v, err := withCache(unknownCacheWords).Embed(ctx, []string{text})
		if err != nil {
			t.Fatal(err)
		}
		want[i] = v[0]
	}
	for _, max := range []int{1, 3, 16, unknownCacheWords} {
		t.Run(fmt.Sprintf("cache %d", max), func(t *testing.T) {
			s := withCache(max)
			for round := range 2 {
				got, err := s.Embed(ctx, texts) // one call: the cache sees every text
				if err != nil {
					t.Fatal(err)
				}
				for i := range texts {
					for k := range got[i] {
						if math.Float32bits(got[i][k]) != math.Float32bits(want[i][k]) {
							t.Fatalf("round %d, text %d, component %d: %v, want %v", round, i, k, got[i][k], want[i][k])
						}
					}
				}
			}
		})
	}
}

func cachedWords(c *unknownCache) []string {
	var out []string
	for i := range c.slots {
		if e := c.slots[i].Load(); e != nil {
			out = append(out, string(e.word[:e.n]))
		}
	}
	return out
}

// TestUnknownCacheSets checks the bound, the replacement of the least
// recently used entry of a set, and the promotion of a hit.
func TestUnknownCacheSets(t *testing.T) {
	if n := len(newUnknownCache(5).slots); n != 8 {
		t.Errorf("a cache of 5 has %d slots, want 8", n)
	}
	if n := len(newUnknownCache(0).slots); n != 2 {
		t.Errorf("a cache of 0 has %d slots, want 2", n)
	}
	c := newUnknownCache(2) // one set: every word competes
	entry := func(w string) *standIn {
		e := &standIn{n: uint8(len(w)), f: float32(len(w))}
		copy(e.word[:], w)
		return e
	}
	a, b, d := entry("a"), entry("bb"), entry("ddd")
	c.put(a)
	c.put(b) // b first, a second
	if got := c.get([]byte("a")); got != a {
		t.Fatalf("get(a) = %v, want the stored stand-in", got)
	}
	c.put(d) // a was used last: b goes
	if got := c.get([]byte("bb")); got != nil {
		t.Errorf("get(bb) = %v after two newer words, want nil", got)
	}
	if got := c.get([]byte("a")); got != a {
		t.Errorf("get(a) = %v, want the stored stand-in", got)
	}
	if got := c.get([]byte("ddd")); got != d {
		t.Errorf("get(ddd) = %v, want the stored stand-in", got)
	}
	c.put(entry("ddd")) // the same word again: not two entries of it
	if got := cachedWords(c); len(got) != 2 || got[0] == got[1] {
		t.Errorf("cache holds %q, want ddd and a once each", got)
	}
	big := newUnknownCache(64)
	for i := range 1000 {
		big.put(entry(fmt.Sprint("w", i)))
	}
	if n := len(cachedWords(big)); n > 64 {
		t.Errorf("a cache of 64 holds %d entries", n)
	}
}

// TestUnknownCacheConcurrent backs the claim that the cache is safe for
// concurrent use (run it with -race): whatever a reader gets is the entry
// of the word it asked for.
func TestUnknownCacheConcurrent(t *testing.T) {
	c := newUnknownCache(16)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				w := fmt.Sprint("w", (i*7+g)%50)
				if e := c.get([]byte(w)); e != nil && (e.f != float32(len(w)) || string(e.word[:e.n]) != w) {
					t.Errorf("get(%s) returned the stand-in of another word", w)
					return
				}
				e := &standIn{n: uint8(len(w)), f: float32(len(w))}
				copy(e.word[:], w)
				c.put(e)
			}
		})
	}
	wg.Wait()
}
