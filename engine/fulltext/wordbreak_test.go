package fulltext

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/blevesearch/segment"
)

// segmenterWords is what segment.Segmenter makes of b, as words reports
// it: "start:bytes" per segment, words marked with a '+'.
func segmenterWords(b []byte) []string {
	var out []string
	seg := segment.NewWordSegmenterDirect(b)
	pos := 0
	for seg.Segment() {
		out = append(out, segString(pos, seg.Bytes(), seg.Type() != segment.None))
		pos += len(seg.Bytes())
	}
	return out
}

func wordsOf(b []byte) []string {
	var out []string
	for w := newWords(b, &runeKinds{}); w.next(); {
		out = append(out, segString(w.start, w.seg, w.word))
	}
	return out
}

func segString(start int, b []byte, word bool) string {
	mark := ""
	if word {
		mark = "+"
	}
	return fmt.Sprintf("%d:%s%q", start, mark, b)
}

// wordSamples are texts where the ASCII rules are easy to get wrong:
// every joining character between letters, digits and '_' and at the
// ends, and ASCII next to the non-ASCII characters that change it.
var wordSamples = []string{
	"", "a", "_", "__", "1", "a1", "1a", "a_1", "_a_", "x86-64", "v1.2.3", "10:30", "e-mail", "foo_bar",
	"a.b", "a:b", "a'b", "a,b", "a;b", "1.2", "1:2", "1'2", "1,000;5", "a.1", "1.a", "a1.2", "1a.b", "a1:b",
	"a..b", "a.", ".a", "a.'b", "a_.b", "1_.2", "a.b.c.d", "3.14.15", "end.", "end:", "it's", "'quoted'",
	"\r\n", "\r", "\n\r", "a\r\nb", "\v\f", "tab\there", "x\x00y\x7f", `say "hi"`, "C++ C# .NET node.js",
	"https://example.com/a?b=c user@example.com",
	"café", "cafe\u0301", "a\u00adb", "a\u200bb", "a’b", "a.\u0301b", "a\u0301.b", "1.\u03012", "a.é", "é.a",
	"a \u0301", "a\xffb", "a \xff", "a\xff", "\xff a", "a.\xff", "a\xc3", "a\xe2\x82", "a\u0085b", "a\u2028b",
	"א\"ב", "א'", "a\"b", "ab数据cd", "カタカナabc", "abc_カナ", "カ_a", "한국어abc", "ภาษาไทย a", "🚀a", "🇫🇷a",
	"1️⃣", "ｆｕｌｌ width", "½x", "数.a", "a.数",
	"Привет, мир: ёж's", "λόγος.ἀρχή", "العربية والعالم", "한국어 문장.", "добро\u0301", "мир\xff", "ж:ж ж.1 1.ж ж'ж",
	"שלום' עולם", "हिन्दी शब्द", "ª.º", "Straße_ß", "\u0430\u200d\u0431",
}

// TestWordsAgree checks that words cuts every sample exactly as the
// segmenter does.
func TestWordsAgree(t *testing.T) {
	for _, s := range wordSamples {
		if got, want := wordsOf([]byte(s)), segmenterWords([]byte(s)); !slices.Equal(got, want) {
			t.Errorf("%q:\n got  %v\n want %v", s, got, want)
		}
	}
}

// TestWordsAgreeRandom compares words with the segmenter on many random
// strings over an alphabet of ASCII of every word-break class and the
// non-ASCII characters that interact with it.
func TestWordsAgreeRandom(t *testing.T) {
	alphabet := strings.Split("a|Z|q|0|9|_|:|.|'|,|;|\"| |-|\r|\n|\v|\x00|é|\u0301|\u00ad|’|א|数|カ|한|ก|🚀|\xff|\xc3|\u0085|\u2028|ｆ|я|Ж|λ|ع|ß|ª|々|क|ि|٣|·|µ|\u200d", "|")
	r := rand.New(rand.NewPCG(1, 2))
	n := 20000
	if testing.Short() {
		n = 2000
	}
	for range n {
		var b strings.Builder
		for range r.IntN(16) {
			if r.IntN(3) == 0 {
				b.WriteString(alphabet[r.IntN(len(alphabet))])
			} else {
				b.WriteString(alphabet[r.IntN(12)]) // mostly ASCII
			}
		}
		s := b.String()
		if got, want := wordsOf([]byte(s)), segmenterWords([]byte(s)); !slices.Equal(got, want) {
			t.Fatalf("%q:\n got  %v\n want %v", s, got, want)
		}
	}
}

// FuzzWords compares words with the segmenter on any input.
func FuzzWords(f *testing.F) {
	for _, s := range wordSamples {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := wordsOf([]byte(s)), segmenterWords([]byte(s)); !slices.Equal(got, want) {
			t.Fatalf("%q:\n got  %v\n want %v", s, got, want)
		}
	})
}

// TestRuneKindsAgree checks, for runes of the Basic Multilingual Plane
// that words cuts itself (plain letters, lone runes), that it cuts each in
// the company of every class whose rules differ exactly as the segmenter
// does — so that the kind runeKind gives it is right — and that some
// runes of the scripts it is meant for are of the kinds they should be.
// It looks at one rune in 7 and checks one of each kind in 25 of those
// unless MNEMO_WORDBREAK_ALL is set, then every rune (61,226 plain or
// lone, 1–3 minutes).
func TestRuneKindsAgree(t *testing.T) {
	step, every := rune(7), 25
	if os.Getenv("MNEMO_WORDBREAK_ALL") != "" {
		step, every = 1, 1
	}
	templates := []string{
		"L", "LL", "LLL", "aL", "La", "1L", "L1", "L_", "_L", "a:L", "L:a", "L.L", "L'L", "L'", "'L", "L\"L", "1.L", "L.1",
		"L,L", "L;1", "L\u0301", "L\u00ad", "L\u200d", "L\xff", "\xffL", " L", "L ", "L\r\n", "\rL", "\nL", "LカL", "カL",
		"L数", "数L", "ひL", "L'\u05d0", "\u05d0'L", "\u05d0L", "한L", "L한", "L٣", "٣L", "L\u2019L", "L·L", "ｆL", "Lｆ",
		"L_カ", "L.", "(L)", "ж.L", "L.ж", "a_L", "L_a", "1,L", "\U0001F680L", "L\U0001F680", "\u0e01L", "L\u0e01",
	}
	kinds := &runeKinds{}
	check := func(r rune, k uint8) {
		for _, tp := range templates {
			s := []byte(strings.ReplaceAll(tp, "L", string(r)))
			if got, want := wordsOf(s), segmenterWords(s); !slices.Equal(got, want) {
				t.Fatalf("%U (class %#x) in %q:\n got  %v\n want %v", r, k, s, got, want)
			}
		}
	}
	counts := map[uint8]int{}
	for r := rune(0x80); r < 1<<16; r += step {
		if k := kinds.class(r); k != wbUnknown {
			if counts[k]++; counts[k]%every == 0 {
				check(r, k)
			}
		}
	}
	for _, r := range "ж한数ひ—ก\u2028" {
		check(r, kinds.class(r))
	}
	t.Logf("plain letters %d, lone ideographs %d, lone others %d", counts[wbLetter], counts[wbIdeo], counts[wbLone])
	for _, c := range []struct {
		runes string
		class uint8
	}{
		{"éßжЖλΩعª한क々", wbLetter},
		{"数字漢ひら", wbIdeo},
		{"—«»€©กข\u2028", wbLone},
		{"אカ\u0301\u093f\u00ad٣’·\ufffd\u0e31", wbUnknown},
	} {
		for _, r := range c.runes {
			if k := kinds.class(r); k != c.class {
				t.Errorf("%q (%U) is of class %#x, want %#x", r, r, k, c.class)
			}
		}
	}
}

// TestRuneKindsConcurrent has goroutines ask one runeKinds about the same
// runes at once (the sync workers of an index share one): every answer is
// the one a runeKinds of its own gives.
func TestRuneKindsConcurrent(t *testing.T) {
	shared, alone := &runeKinds{}, &runeKinds{}
	const lo, hi = 0x0400, 0x0700 // Cyrillic … Arabic: plain, lone and scanner's runes, 8 to a word
	var wg sync.WaitGroup
	got := make([][]uint8, 4)
	for g := range got {
		wg.Go(func() {
			for r := rune(lo); r < hi; r++ {
				got[g] = append(got[g], shared.class(r))
			}
		})
	}
	wg.Wait()
	for r := rune(lo); r < hi; r++ {
		want := alone.class(r)
		for g := range got {
			if k := got[g][r-lo]; k != want {
				t.Fatalf("goroutine %d: %U is of class %#x, want %#x", g, r, k, want)
			}
		}
		if k := shared.class(r); k != want {
			t.Fatalf("after: %U is of class %#x, want %#x", r, k, want)
		}
	}
}
