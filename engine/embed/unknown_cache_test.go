package embed

import (
	"context"
	"fmt"
	"math"
	"strings"
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
			if n := len(s.unknowns.cur) + len(s.unknowns.old); n > 2*max {
				t.Errorf("cache holds %d stand-ins, bound is %d", n, 2*max)
			}
		})
	}
}

// TestUnknownCacheGenerations checks the bound and the promotion of a word
// found in the old generation.
func TestUnknownCacheGenerations(t *testing.T) {
	c := newUnknownCache(2)
	u := func(w string) *unknownWord { return &unknownWord{f: float32(len(w))} }
	a, b, d := u("a"), u("bb"), u("ddd")
	c.put("a", a)
	c.put("bb", b)
	c.put("ddd", d) // a and bb become old
	if got := c.get([]byte("a")); got != a {
		t.Fatalf("get(a) = %v, want the stored stand-in", got)
	}
	if _, ok := c.cur["a"]; !ok {
		t.Error("a found in the old generation was not moved to the current one")
	}
	c.put("e", u("e")) // cur {ddd, a} is full: it becomes old, bb is dropped
	if got := c.get([]byte("bb")); got != nil {
		t.Errorf("get(bb) = %v after two generations, want nil", got)
	}
	if got := c.get([]byte("ddd")); got != d {
		t.Errorf("get(ddd) = %v, want the stored stand-in", got)
	}
	long := strings.Repeat("x", maxCachedWord+1)
	c.put(long, u(long))
	if c.get([]byte(long)) != nil {
		t.Error("a word longer than maxCachedWord was cached")
	}
}
