package fulltext

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"mnemo/markdown"
)

func testAnalyzers(t testing.TB) *Index {
	t.Helper()
	ft, err := Open(filepath.Join(t.TempDir(), "ft"), true, DurableBatches, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ft.Close() })
	return ft
}

// buildExcerpts is the excerpt index a sync stores for a memory.
func buildExcerpts(a *Analyser, title, text string, chunks [][2]int) []byte {
	return EncodeExcerpts(text, chunks, a.Memory(title, text, "").Excerpt)
}

// TestExcerptIndexAgrees checks that the stored index finds exactly the
// spans that tokenising the text afresh finds, for every memory of the
// sample vault and queries in English, with diacritics, and in CJK.
func TestExcerptIndexAgrees(t *testing.T) {
	ft := testAnalyzers(t)
	queries := []string{"indexing decisions", "cafe", "Müller über", "数据库迁移", "検索 インデックス", "bleve's analyzer 数据", "running runs ran", "q1 2025"}
	vault := filepath.Join("..", "..", "testdata", "vault")
	var docs int
	shared := ft.NewAnalyser() // as a sync worker keeps one for a batch
	for p, doc := range vaultDocs(t, vault) {
		docs++
		var bounds [][2]int
		for _, c := range doc.Chunks {
			bounds = append(bounds, [2]int{c.Start, c.Start + len(c.Text)})
		}
		enc := buildExcerpts(ft.NewAnalyser(), doc.Title, doc.Text, bounds)
		if again := buildExcerpts(shared, doc.Title, doc.Text, bounds); !bytes.Equal(again, enc) {
			t.Errorf("%s: excerpt index built with a shared word memory differs from a fresh one", p)
		}
		for _, qt := range queries {
			q := ft.AnalyzeQuery(qt)
			x, err := ReadExcerpt(enc, q)
			if err != nil {
				t.Fatalf("%s %q: %v", p, qt, err)
			}
			if want := ft.matchSpans(doc.Text, q); !slices.Equal(x.spans, want) {
				t.Errorf("%s %q: stored spans %v, tokenised %v", p, qt, x.spans, want)
			}
		}
		x, _ := ReadExcerpt(enc, Terms{})
		if x.text != doc.Text || len(x.chunks) != len(doc.Chunks) {
			t.Fatalf("%s: text or chunks lost", p)
		}
		for i, c := range doc.Chunks {
			if x.chunkText(i) != c.Text {
				t.Errorf("%s chunk %d: %q, want %q", p, i, x.chunkText(i), c.Text)
			}
		}
	}
	if docs < 30 {
		t.Fatalf("only %d memories read from %s", docs, vault)
	}
}

// TestExcerptIndexDamaged: a truncated or garbled index is an error, never
// a panic nor spans outside the text.
func TestExcerptIndexDamaged(t *testing.T) {
	ft := testAnalyzers(t)
	text := "Decisions about indexing: we index twice. 数据库迁移 is done."
	enc := buildExcerpts(ft.NewAnalyser(), "", text, [][2]int{{0, len(text)}})
	q := ft.AnalyzeQuery("indexing 数据库")
	if _, err := ReadExcerpt(enc, q); err != nil {
		t.Fatal(err)
	}
	for n := range len(enc) {
		x, err := ReadExcerpt(enc[:n], q)
		if err == nil {
			for _, s := range x.spans {
				if s.end > len(x.text) {
					t.Fatalf("cut at %d: span %v outside a %d-byte text", n, s, len(x.text))
				}
			}
		} else if !errors.Is(err, ErrBadExcerpts) {
			t.Fatalf("cut at %d: %v, want ErrBadExcerpts", n, err)
		}
	}
	bad := slices.Clone(enc)
	for i := len(bad) - 8; i < len(bad); i++ {
		bad[i] = 0xff
	}
	if _, err := ReadExcerpt(bad, q); err == nil {
		t.Log("garbled tail happened to decode; spans were bounds-checked")
	}
	if _, err := ReadExcerpt([]byte{0xff}, q); !errors.Is(err, ErrBadExcerpts) {
		t.Fatalf("one garbage byte: %v, want ErrBadExcerpts", err)
	}
}

// BenchmarkSnippets compares cutting one memory's snippets from its stored
// excerpt index with tokenising it afresh (what a search did before).
func BenchmarkSnippets(b *testing.B) {
	ft := testAnalyzers(b)
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "vault", "research", "search.md"))
	if err != nil {
		b.Fatal(err)
	}
	doc, err := markdown.Parse("search.md", data, markdown.Options{})
	if err != nil {
		b.Fatal(err)
	}
	var bounds [][2]int
	for _, c := range doc.Chunks {
		bounds = append(bounds, [2]int{c.Start, c.Start + len(c.Text)})
	}
	enc := buildExcerpts(ft.NewAnalyser(), doc.Title, doc.Text, bounds)
	q := ft.AnalyzeQuery("bleve analyzer stemming")
	b.Run("stored", func(b *testing.B) {
		for b.Loop() {
			x, err := ReadExcerpt(enc, q)
			if err != nil {
				b.Fatal(err)
			}
			windows(x.text, x.spans, maxSnippets, aroundMatch)
		}
	})
	b.Run("tokenised", func(b *testing.B) {
		for b.Loop() {
			ft.TextSnippets(doc.Text, q)
		}
	})
	b.Run("build", func(b *testing.B) {
		b.SetBytes(int64(len(doc.Text)))
		for b.Loop() {
			buildExcerpts(ft.NewAnalyser(), doc.Title, doc.Text, bounds)
		}
		b.ReportMetric(float64(len(enc))/float64(len(doc.Text)), "stored-bytes/text-byte")
	})
}

// TestOneLine: OneLine folds white space as strings.Fields and Join do,
// Unicode spaces and invalid UTF-8 included.
func TestOneLine(t *testing.T) {
	for _, s := range []string{
		"", " ", "a", " a ", "a  b\n\tc", "\n\n**bold**  text\r\n", "ideographic\u3000space",
		"no-break\u00a0space and\u2028line", "bad \xff\xfe bytes \xff", "… 数据库  迁移 …", "\v\fa\v\fb\v\f",
	} {
		if got, want := OneLine(s), strings.Join(strings.Fields(s), " "); got != want {
			t.Errorf("oneLine(%q) = %q, want %q", s, got, want)
		}
	}
}

// BenchmarkEncodeExcerpts encodes the excerpt index of every memory of the
// folder MNEMO_BENCH_DIR names (e.g. /tmp/mnemo-bench/corpora/tldr), its
// terms as the analysis pass leaves them (in text order), as a sync does.
// One iteration is the whole corpus.
func BenchmarkEncodeExcerpts(b *testing.B) {
	dir := os.Getenv("MNEMO_BENCH_DIR")
	if dir == "" {
		b.Skip("set MNEMO_BENCH_DIR to a folder of markdown (e.g. /tmp/mnemo-bench/corpora/tldr) to run this benchmark")
	}
	ft := testAnalyzers(b)
	a := ft.NewAnalyser()
	type memo struct {
		text  string
		terms []excerptTerm
	}
	var memos []memo
	for _, tt := range vaultTexts(b, dir) {
		xs := slices.Clone(a.Memory(tt[0], tt[1], tt[2]).Excerpt)
		for i := range xs {
			xs[i].spans = slices.Clone(xs[i].spans)
		}
		memos = append(memos, memo{tt[1], xs})
	}
	var x ExcerptEncoder
	var scratch []excerptTerm
	b.ReportAllocs()
	for b.Loop() {
		for _, m := range memos {
			scratch = append(scratch[:0], m.terms...) // in text order, as the pass gives them
			x.Encode(m.text, nil, scratch)
		}
	}
	b.ReportMetric(float64(len(memos)*b.N)/b.Elapsed().Seconds(), "docs/s")
}

// TestKeyOrder: keyOrder puts terms in key order, as sorting by key does:
// keys that share their first six bytes, keys shorter than six bytes and
// keys with zero bytes (the padding of a short key's prefix), and more
// terms than the packed index holds.
func TestKeyOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	alphabet := "\x00\x01ab\xff"
	for _, n := range []int{0, 1, 2, 50, 3000, 1<<16 + 5} {
		terms := make([]excerptTerm, n)
		seen := map[string]bool{}
		for i := range terms {
			for { // keys are distinct in an excerpt index
				k := make([]byte, 1+rng.IntN(9))
				for j := range k {
					k[j] = alphabet[rng.IntN(len(alphabet))]
				}
				if !seen[string(k)] {
					seen[string(k)] = true
					terms[i].key = string(k)
					break
				}
				if len(seen) > 1<<19 {
					t.Fatal("alphabet too small for distinct keys")
				}
			}
		}
		var got []string
		for _, i := range keyOrder(nil, terms) {
			got = append(got, terms[i].key)
		}
		want := make([]string, n)
		for i, x := range terms {
			want[i] = x.key
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("%d terms: keyOrder's order differs from the keys' sorted order", n)
		}
	}
}
