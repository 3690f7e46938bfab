package embed

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mnemo/engine/embed/internal/table"
	"mnemo/engine/enginetest"
	"mnemo/markdown"
)

// agreeTexts covers every path of the tokenizer and the word look-up:
// joiners, clitics, camelCase, digits, diacritics, unknown words (short,
// long, cached and not), other scripts, odd bytes.
var agreeTexts = []string{
	"",
	"The cat sat on the mat.",
	"the",
	"a well-known fact; state-of-the-art kebab-case --leading-and-trailing-- x--y",
	"it doesn't, won't, can't, shan't; We're, they've, you'll, I'd, I'm, John's book, students' union",
	"rock’n’roll DOESN’T Won’t O'Neill's isn't'", // typographic apostrophes, clitics in capitals
	"parseHTTPRequest getUserID HTTPServer2Go iPhone XMLHttpRequest ABC aB Ab URLs",
	"utf8 mp3 v2.3.1 on 2014-05-06 0x1F 1e10 3rd 42nd 100km ipv6 x86_64 h264",
	"Café Müller naïve Straße ÀÉÎÕÜ æsir Œuvre ĳssel Łódź Ŋ ſ ×÷ ÿ Ÿ",
	"oligoclonal banding, inviscid axisymmetrical flow of blorptastic zxqvw qwzzkx",
	strings.Repeat("qz", 40) + " " + strings.Repeat("Ab", 50) + " " + strings.Repeat("ab-", 40) + "c",
	"日本語のテキスト 中文 한국어 ไทย Привет МИР Ελληνικά עברית العربية देवनागरी",
	"ｆｕｌｌｗｉｄｔｈ ＡＢＣ Ⅻ ① ²³ ٣٤ ۵ १२",
	"## Notes\n- [link](https://x.io/a_b) `codeSpan` **bold** snake_case_name dotted.names.here",
	"tar — Archiving utility\n`tar cf {{target.tar}} {{file1 file2}}` - Create an archive from files",
	"\xff\xfe broken \xc3 utf-8 \xe2\x80 bytes a\xc0b",
	"I I I a a a A B C x y z - ' ’ -- '' ’’ a-b a'b a’b",
	"DON'T SHOULDN'T ca'n't n't 't s 're Y'all'd've",
	"über-cool naïve-ish co-operate e-mail re-enter self-évident",
	"ŞİŞLİ İstanbul ΣΊΣΥΦΟΣ ǅemal ǈ ǋ", // title case letters, dotted capital I
	"kubectl get pods --all-namespaces -o wide | grep CrashLoopBackOff",
	strings.Repeat("the database migration failed again ", 30),
}

// vectorDigest is SHA-256 over the bits of every component of vs.
func vectorDigest(vs [][]float32) string {
	h := sha256.New()
	var b [4]byte
	for _, v := range vs {
		for _, x := range v {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
			h.Write(b[:])
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// goldenDigest is vectorDigest of agreeTexts' vectors as the embedder of
// main @ e6632dc computed them. A change here changes every stored vector:
// it needs a new BuiltinName, not a new digest.
const goldenDigest = "ef3199dd2c92270c4d46e09ab2c53b8f0ae49bb12a92f9c643478cfd9f004852"

func TestEmbedGolden(t *testing.T) {
	s := builtinT(t)
	vs, err := s.Embed(context.Background(), agreeTexts)
	if err != nil {
		t.Fatal(err)
	}
	if got := vectorDigest(vs); got != goldenDigest {
		t.Errorf("digest of the vectors of agreeTexts = %s, want %s", got, goldenDigest)
	}
}

func newRef(tb testing.TB) *refEmbedder {
	tb.Helper()
	tab, err := table.Decode(gloveTable)
	if err != nil {
		tb.Fatal(err)
	}
	index := make(map[string]int32, len(tab.Words))
	for r, w := range tab.Words {
		index[w] = int32(r)
	}
	return &refEmbedder{s: builtinT(tb), index: index}
}

// agree embeds texts with s and ref and fails on the first component whose
// bits differ, or the first text on which Knows differs.
func agree(t *testing.T, s *Static, ref *refEmbedder, texts []string) {
	t.Helper()
	ctx := context.Background()
	got, err := s.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ref.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range texts {
		for k := range want[i] {
			if math.Float32bits(got[i][k]) != math.Float32bits(want[i][k]) {
				t.Fatalf("text %d %q: component %d is %v, the reference gives %v", i, texts[i], k, got[i][k], want[i][k])
			}
		}
		if g, w := s.Knows(texts[i]), ref.Knows(texts[i]); g != w {
			t.Fatalf("text %d %q: Knows = %v, the reference says %v", i, texts[i], g, w)
		}
	}
}

func TestEmbedMatchesReference(t *testing.T) {
	s, ref := builtinT(t), newRef(t)
	agree(t, s, ref, agreeTexts)
	for _, text := range agreeTexts { // one at a time too: per-text state must not leak
		agree(t, s, ref, []string{text})
	}
}

// TestEmbedMatchesReferenceRandom builds texts from fragments that stress
// the look-up (every kind of vocabulary word, in changed case, joined,
// glued to digits and to each other) and compares them with the reference.
func TestEmbedMatchesReferenceRandom(t *testing.T) {
	s, ref := builtinT(t), newRef(t)
	tab, err := table.Decode(gloveTable)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	seps := []string{" ", " ", " ", "-", "'", "’", "_", ".", "\n", " — ", "--", ", ", "é", "日", "Ä", "1", "I"}
	word := func() string {
		var w string
		switch rng.IntN(6) {
		case 0: // a rare row
			w = tab.Words[len(tab.Words)-1-rng.IntN(20000)]
		case 1: // a frequent row
			w = tab.Words[rng.IntN(2000)]
		case 2: // any row
			w = tab.Words[rng.IntN(len(tab.Words))]
		case 3: // not a row, most likely
			b := make([]byte, 1+rng.IntN(12))
			for i := range b {
				b[i] = byte('a' + rng.IntN(26))
			}
			w = string(b)
		case 4:
			w = agreeTexts[rng.IntN(len(agreeTexts))]
			if len(w) > 40 {
				w = w[:rng.IntN(40)] // may cut a rune: odd bytes are input too
			}
		default:
			w = []string{"HTTP", "ID", "Go", "N'T", "'s", "’re", "ü", "ß", "İ", "ǅ", "42", "x86", "Ωmega"}[rng.IntN(13)]
		}
		switch rng.IntN(5) {
		case 0:
			w = strings.ToUpper(w)
		case 1:
			if w != "" {
				w = strings.ToUpper(w[:1]) + w[1:]
			}
		}
		return w
	}
	texts := make([]string, 3000)
	for i := range texts {
		var b strings.Builder
		for range 1 + rng.IntN(12) {
			b.WriteString(word())
			b.WriteString(seps[rng.IntN(len(seps))])
		}
		texts[i] = b.String()
	}
	agree(t, s, ref, texts)
}

// FuzzEmbedMatchesReference compares the embedder with the reference on
// arbitrary text (go test -fuzz FuzzEmbedMatchesReference ./engine/embed).
func FuzzEmbedMatchesReference(f *testing.F) {
	for _, text := range agreeTexts {
		f.Add(text)
	}
	s, ref := builtinT(f), newRef(f)
	f.Fuzz(func(t *testing.T, text string) {
		agree(t, s, ref, []string{text})
	})
}

// corpusTexts is what a sync embeds of the markdown under MNEMO_BENCH_DIR:
// per memory, the texts of its chunks as engine.chunkText writes them (or
// the title alone for a memory without a chunk). It skips the caller when
// the variable is unset.
func corpusTexts(tb testing.TB) [][]string {
	tb.Helper()
	dir := os.Getenv("MNEMO_BENCH_DIR")
	if dir == "" {
		tb.Skip("set MNEMO_BENCH_DIR to a folder of markdown (e.g. /tmp/mnemo-bench/corpora/tldr) to run this")
	}
	var docs [][]string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		if ext := strings.ToLower(filepath.Ext(p)); ext != ".md" && ext != ".markdown" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		doc, err := markdown.Parse(filepath.ToSlash(rel), data, markdown.Options{})
		if err != nil {
			return nil // the sync skips it too
		}
		var texts []string
		for _, c := range doc.Chunks {
			var b strings.Builder // engine.chunkText
			b.WriteString(doc.Title)
			for _, h := range c.Headings {
				if h != doc.Title {
					b.WriteString(" — ")
					b.WriteString(h)
				}
			}
			b.WriteString("\n")
			b.WriteString(c.Text)
			texts = append(texts, b.String())
		}
		if len(texts) == 0 {
			texts = append(texts, doc.Title)
		}
		docs = append(docs, texts)
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	if len(docs) == 0 {
		tb.Fatalf("no markdown under MNEMO_BENCH_DIR=%s", dir)
	}
	return docs
}

// TestEmbedCorpusMatchesReference compares every chunk of the corpus
// MNEMO_BENCH_DIR names with the reference, bit for bit (tldr: 38,430
// memories, about 6 s).
func TestEmbedCorpusMatchesReference(t *testing.T) {
	docs := corpusTexts(t)
	s, ref := builtinT(t), newRef(t)
	n := 0
	for _, texts := range docs {
		agree(t, s, ref, texts)
		n += len(texts)
	}
	t.Logf("%d memories, %d texts: every vector identical", len(docs), n)
}

// BenchmarkEmbedCorpus embeds the corpus MNEMO_BENCH_DIR names as a sync
// does: one Embed call per memory, a cold stand-in cache per pass.
func BenchmarkEmbedCorpus(b *testing.B) {
	docs := corpusTexts(b)
	base := builtinT(b)
	ctx := context.Background()
	words := 0
	for _, texts := range docs {
		for _, t := range texts {
			words += len(strings.Fields(t))
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime(b)
	for b.Loop() {
		s := *base
		s.unknowns = newUnknownCache(unknownCacheWords)
		for _, texts := range docs {
			if _, err := s.Embed(ctx, texts); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(words)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mwords/s")
	b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
}

// cpuTime is the CPU time the process has used, user and system: on a
// shared machine it says more about a single-threaded benchmark than the
// wall time does.
func cpuTime(tb testing.TB) time.Duration {
	d, ok := enginetest.ProcessCPU()
	if !ok {
		tb.Skip("this system does not report the process's CPU time")
	}
	return d
}
