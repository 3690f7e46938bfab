package markdown

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// numbered returns n distinct words "p-0001 p-0002 …", so that a test can
// tell exactly which words a chunk holds.
func numbered(prefix string, n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = fmt.Sprintf("%s%04d", prefix, i)
	}
	return strings.Join(w, " ")
}

func wordsOf(s string) []string {
	return toWords(s)
}

// toWords splits s the way chunking counts: white space separates words
// and every CJK character is a word.
func toWords(s string) []string {
	var out []string
	for _, u := range appendUnits(nil, []byte(s), 0) {
		out = append(out, s[u.start:u.end])
	}
	return out
}

// checkCoverage fails t unless every word of d.Text appears in some chunk,
// in order, and every chunk is a piece of d.Text.
func checkCoverage(t *testing.T, d *Doc) {
	t.Helper()
	all := toWords(d.Text)
	seen := 0 // words of all covered so far, in order
	for i, c := range d.Chunks {
		if c.Index != i {
			t.Errorf("chunk %d has Index %d", i, c.Index)
		}
		if !strings.Contains(d.Text, c.Text) {
			t.Errorf("chunk %d is not a piece of Text", i)
		}
		cw := toWords(c.Text)
		// Find where this chunk starts in all: at or before seen, since
		// chunks may overlap but never skip.
		start := -1
		for s := seen; s >= 0; s-- {
			if s+len(cw) <= len(all) && reflect.DeepEqual(all[s:s+len(cw)], cw) {
				start = s
				break
			}
		}
		if start < 0 {
			t.Fatalf("chunk %d does not continue where chunk %d ended (word %d)", i, i-1, seen)
		}
		seen = start + len(cw)
	}
	if seen != len(all) {
		t.Errorf("chunks cover %d of %d words", seen, len(all))
	}
}

func TestChunkLongSection(t *testing.T) {
	text := numbered("w", 1000)
	d := mustParse(t, "n.md", text, Options{ChunkWords: 200, OverlapWords: 30})
	if len(d.Chunks) < 5 {
		t.Fatalf("%d chunks, want at least 5", len(d.Chunks))
	}
	checkCoverage(t, d)
	for i, c := range d.Chunks {
		n := len(wordsOf(c.Text))
		if n > 250 {
			t.Errorf("chunk %d has %d words, want at most 250", i, n)
		}
		if i == 0 {
			continue
		}
		prev := wordsOf(d.Chunks[i-1].Text)
		cur := wordsOf(c.Text)
		if !reflect.DeepEqual(prev[len(prev)-30:], cur[:30]) {
			t.Errorf("chunk %d does not start with the last 30 words of chunk %d", i, i-1)
		}
	}
}

func TestChunkOptions(t *testing.T) {
	text := numbered("w", 1000)
	tests := []struct {
		name    string
		opt     Options
		overlap int
		chunks  int
	}{
		{"defaults: 100 words, 30 overlap", Options{}, 30, 14},
		{"no overlap", Options{ChunkWords: 100, OverlapWords: -1}, 0, 10},
		{"overlap capped at half a chunk", Options{ChunkWords: 10, OverlapWords: 50}, 5, 199},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustParse(t, "n.md", text, tt.opt)
			checkCoverage(t, d)
			if len(d.Chunks) != tt.chunks {
				t.Errorf("%d chunks, want %d", len(d.Chunks), tt.chunks)
			}
			// Words are numbered, so the overlap is last(a) - first(b) + 1.
			a, b := wordsOf(d.Chunks[0].Text), wordsOf(d.Chunks[1].Text)
			var lastA, firstB int
			fmt.Sscanf(a[len(a)-1], "w%d", &lastA)
			fmt.Sscanf(b[0], "w%d", &firstB)
			if shared := lastA - firstB + 1; shared != tt.overlap {
				t.Errorf("chunks 0 and 1 share %d words, want %d", shared, tt.overlap)
			}
		})
	}
}

func TestChunkHeadings(t *testing.T) {
	in := "# Alpha\n\n" + numbered("a", 300) +
		"\n\n## Beta\n\n" + numbered("b", 300) +
		"\n\n### Gamma\n\n" + numbered("g", 100) +
		"\n\n# Delta\n\n" + numbered("d", 100)
	d := mustParse(t, "n.md", in, Options{ChunkWords: 200, OverlapWords: 20})
	checkCoverage(t, d)

	// The first chunk that starts with each heading carries its path.
	want := map[string][]string{
		"Alpha": {"Alpha"},
		"Beta":  {"Alpha", "Beta"},
		"Gamma": {"Alpha", "Beta", "Gamma"},
		"Delta": {"Delta"},
	}
	found := map[string]bool{}
	for _, c := range d.Chunks {
		first := strings.Fields(c.Text)[0]
		if path, ok := want[first]; ok {
			found[first] = true
			if !reflect.DeepEqual(c.Headings, path) {
				t.Errorf("chunk starting at %q has path %q, want %q", first, c.Headings, path)
			}
		}
	}
	for h := range want {
		if !found[h] {
			t.Errorf("no chunk starts at heading %q", h)
		}
	}
	// A window inside Beta's long section keeps Beta's path.
	for _, c := range d.Chunks {
		if strings.HasPrefix(c.Text, "b0") && !reflect.DeepEqual(c.Headings, []string{"Alpha", "Beta"}) {
			t.Errorf("window inside Beta has path %q", c.Headings)
		}
	}
}

func TestChunkSmallSectionsMerge(t *testing.T) {
	in := "# A\n\none two three\n\n# B\n\nfour five\n\n## C\n\nsix"
	d := mustParse(t, "n.md", in, Options{})
	if len(d.Chunks) != 1 {
		t.Fatalf("%d chunks, want 1: %+v", len(d.Chunks), d.Chunks)
	}
	c := d.Chunks[0]
	if c.Text != d.Text || !reflect.DeepEqual(c.Headings, []string{"A"}) {
		t.Errorf("chunk = %+v", c)
	}
}

func TestChunkPreamble(t *testing.T) {
	in := numbered("p", 80) + "\n\n# Later\n\n" + numbered("l", 80)
	d := mustParse(t, "n.md", in, Options{ChunkWords: 100})
	checkCoverage(t, d)
	if len(d.Chunks) != 2 {
		t.Fatalf("%d chunks, want 2", len(d.Chunks))
	}
	if d.Chunks[0].Headings != nil {
		t.Errorf("text before any heading has path %q, want none", d.Chunks[0].Headings)
	}
	if !reflect.DeepEqual(d.Chunks[1].Headings, []string{"Later"}) {
		t.Errorf("second chunk path %q", d.Chunks[1].Headings)
	}
}

func TestChunkCJK(t *testing.T) {
	// 2,000 Han characters without a single space.
	var b strings.Builder
	for i := range 2000 {
		b.WriteRune(rune(0x4E00 + i))
	}
	d := mustParse(t, "zh.md", "# 标题\n\n"+b.String(), Options{ChunkWords: 200, OverlapWords: 30})
	if len(d.Chunks) < 8 {
		t.Fatalf("%d chunks, want at least 8", len(d.Chunks))
	}
	checkCoverage(t, d)
	for i, c := range d.Chunks {
		if n := utf8.RuneCountInString(c.Text); n > 252 {
			t.Errorf("chunk %d has %d characters", i, n)
		}
	}
}

func TestWordUnits(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"hello  world\n", []string{"hello", "world"}},
		{"hello世界 foo", []string{"hello", "世", "界", "foo"}},
		{"ひらがなカタカナ", []string{"ひ", "ら", "が", "な", "カ", "タ", "カ", "ナ"}},
		{"한국어 text", []string{"한", "국", "어", "text"}},
		{"café\u00a0naïve", []string{"café", "naïve"}},
		{"", nil},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := toWords(tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("words = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestNoChunksForEmptyText(t *testing.T) {
	for _, in := range []string{"", "---\ntitle: Only metadata\n---\n", "<div>only html</div>\n", "---\n\n***\n"} {
		t.Run(in, func(t *testing.T) {
			if d := mustParse(t, "n.md", in, Options{}); len(d.Chunks) != 0 {
				t.Errorf("%d chunks for %q", len(d.Chunks), d.Text)
			}
		})
	}
}

// TestRuneTables checks the lookup tables behind isCJK and breaksWord
// against the unicode functions they stand for, for every rune.
func TestRuneTables(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune+1; r++ {
		cjk := unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
		if got := isCJK(r); got != cjk {
			t.Fatalf("isCJK(%U) = %v, want %v", r, got, cjk)
		}
		if got, want := breaksWord(r), cjk || unicode.IsSpace(r); got != want {
			t.Fatalf("breaksWord(%U) = %v, want %v", r, got, want)
		}
	}
}
