package fulltext

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2/analysis"
	index "github.com/blevesearch/bleve_index_api"

	"mnemo/engine/enginetest"
	"mnemo/markdown"
)

// analysisSamples are texts that stress the analysis pass: diacritics,
// ß, æ and ligatures, possessives with every apostrophe, CJK and SEA text,
// emoji, invalid UTF-8, runes that fold to several (½), stopwords alone.
var analysisSamples = []struct{ title, text, tags string }{
	{"", "", ""},
	{"The", "of the and a an it is", "the"},
	{"Bleve's index", "James' and Müller's cafés, naïve façade ÆSIR ﬁle Straße œuvre Ærø", "bleve's café x"},
	{"It’s", "Bleve’s ＇s o'clock rock'n'roll can't won’t", "tag"},
	{"数据库", "数据库迁移 検索インデックス 한국어 and English", "数据 db"},
	{"English title", "only 中文 here, 数据库's index", "tag"},
	{"ภาษาไทย", "สวัสดีครับ running runs ລາວ ខ្មែរ မြန်မာ", "tag"},
	{"Q1 2025", "v1.2.3 10:30 e-mail foo_bar x86-64 --- ½ x² ① ⅓cup №5 ™ ©", "tag"},
	{"emoji 🚀", "deploy 🚀🔥 done 👩‍💻 ok ✅ flags 🇫🇷 keycap 1️⃣", "🚀 launch"},
	{"bad \xff utf8", "abc\xffdef \xc3 trunc \xe2\x82 more caf\xc3\xa9 \xed\xa0\x80 surrogate", "x\xffy"},
	{"Ελληνικά", "Привет мир, Ἀθῆναι, עברית, العربية, हिन्दी, ﬀ ﬃ ﬆ", "tag"},
	{"tab\there", "line\r\nbreak\u2028sep\u0085nel \u00a0nbsp zero\u200bwidth soft\u00adhyphen", "tag"},
	{"WWW", "https://example.com/a?b=c user@example.com C++ C# .NET node.js", "tag"},
	{"a", strings.Repeat("word running ", 300), "ｔａｇ \xfe déjà"},
	{"ＦＵＬＬ ｗｉｄｔｈ", "ｈｅｌｌｏ ＷＯＲＬＤ ＡＢＣ１２３ ｶﾀｶﾅ", "tag"},
	{"ｶﾞｷﾞ", "ｶﾞｷﾞｸﾞ 数 ﾊﾟﾋﾟ数据 ｱﾞ ﾞｶ ｶﾟ", "tag"},
	{"カ_abc", "カタカナ_x ｶﾀ＿ｶﾅ ＡＢＣカナ 数１２ ひらがな漢字", "tag"},
	{"๑๒๓ ไทย", "เลข๑๒๓ ๔๕ ไทย数据 数据ไทย 한국어数据 ΣΑΣ ΟΔΟΣ İstanbul数", "tag"},
	{"only title 数据", "no cjk in the text", "tag"},
	{"", "数", ""},
	{"", "a 数 b 数据 c", ""},
	{"数๑", "数๑ ๑ 数据๒", "tag"}, // a Thai digit is a number and a SEA run: the number comes first
}

// referenceField analyses text as Bleve would for a field with this
// analyzer: term → frequency, and the field's length.
func referenceField(a analysis.Analyzer, opts index.FieldIndexingOptions, text string) (map[string]int, int) {
	toks := a.Analyze([]byte(text))
	return freqMap(analysis.TokenFrequency(toks, nil, opts)), len(toks)
}

// referenceOf is referenceField for the index field name: its analyzer's
// terms that the field indexes (englishTerm, cjkTerm), and its length
// counting them all.
func referenceOf(ft *Index, name, text string) (map[string]int, int) {
	an, indexed := ft.en, englishTerm
	if name == fCJK {
		an, indexed = ft.cjk, cjkTerm
	}
	m, n := referenceField(an, ft.opts[name], text)
	maps.DeleteFunc(m, func(t string, _ int) bool { return !indexed(t) })
	return m, n
}

// englishTerms is how many of Bleve's English terms of text are indexed.
func englishTerms(ft *Index, text string) int {
	n := 0
	for _, t := range ft.en.Analyze([]byte(text)) {
		if englishTerm(string(t.Term)) {
			n++
		}
	}
	return n
}

func freqMap(tf index.TokenFrequencies) map[string]int {
	m := make(map[string]int, len(tf))
	for k, v := range tf {
		if string(v.Term) != k {
			m["key≠term:"+k] = 1
		}
		m[k] = v.Frequency()
	}
	return m
}

// passDiff compares the pass's fields for one memory with Bleve's own
// analysis of them, and the excerpt spans with the plain text they cover;
// it returns what differs, "" if nothing does.
func passDiff(ft *Index, a *Analyser, title, text, tags string) string {
	body := title + "\n" + text
	mt := a.Memory(title, text, tags)
	want := map[string]string{fTitle: title, fBody: body, fTags: tags}
	if needsBigrams(body) {
		want[fCJK] = body
	}
	var diffs []string
	got := map[string]bool{}
	for _, f := range mt.Fields {
		got[f.name] = true
		src, ok := want[f.name]
		if !ok {
			diffs = append(diffs, "unexpected field "+f.name)
			continue
		}
		wf, wl := referenceOf(ft, f.name, src)
		gf := freqMap(f.AnalyzedTokenFrequencies())
		if !maps.Equal(gf, wf) || f.AnalyzedLength() != wl {
			diffs = append(diffs, fmt.Sprintf("%s: length %d, Bleve %d; terms differ: %s", f.name, f.AnalyzedLength(), wl, mapDiff(gf, wf)))
		}
		if f.Options() != ft.opts[f.name] {
			diffs = append(diffs, fmt.Sprintf("%s: options %v, mapping %v", f.name, f.Options(), ft.opts[f.name]))
		}
	}
	for name := range want {
		if !got[name] {
			diffs = append(diffs, "missing field "+name)
		}
	}
	// Every English span covers text that Bleve's analyzer turns into its
	// term, and the text has as many as Bleve's analysis of it alone.
	spans := 0
	keys := map[string]bool{}
	for _, x := range mt.Excerpt {
		k := x.key
		if keys[k] {
			diffs = append(diffs, fmt.Sprintf("excerpt key %q twice", k))
		}
		keys[k] = true
		if k[0] != nsEN {
			continue
		}
		for _, s := range x.spans {
			spans++
			if s.start < 0 || s.end > len(text) || s.start >= s.end {
				diffs = append(diffs, fmt.Sprintf("span %v of %q outside the text", s, k[1:]))
				continue
			}
			if !slices.ContainsFunc(ft.en.Analyze([]byte(text[s.start:s.end])), func(t *analysis.Token) bool { return string(t.Term) == k[1:] }) {
				diffs = append(diffs, fmt.Sprintf("span %q is not term %q", text[s.start:s.end], k[1:]))
			}
		}
	}
	if n := englishTerms(ft, text); spans != n {
		diffs = append(diffs, fmt.Sprintf("excerpt holds %d English spans, Bleve finds %d terms in the text", spans, n))
	}
	// The CJK keys are exactly the bigram analyzer's terms of the text
	// that hold a letter indexed as bigrams, with its offsets, for a text
	// with such letters of its own.
	gotCJK, wantCJK := map[string][]span{}, map[string][]span{}
	for _, x := range mt.Excerpt {
		if x.key[0] == nsCJK {
			gotCJK[x.key[1:]] = x.spans
		}
	}
	if needsBigrams(text) {
		off := len(title) + 1
		for _, t := range ft.cjk.Analyze([]byte(body)) {
			if t.Start >= off && cjkTerm(string(t.Term)) {
				wantCJK[string(t.Term)] = append(wantCJK[string(t.Term)], span{t.Start - off, t.End - off})
			}
		}
	}
	if !maps.EqualFunc(gotCJK, wantCJK, slices.Equal) {
		diffs = append(diffs, fmt.Sprintf("CJK excerpt terms %v, the bigram analyzer's %v", gotCJK, wantCJK))
	}
	// A session message is one body field, and cjk exactly when the text
	// has letters of a script indexed as bigrams.
	mf := a.Message(text)
	if want := 1 + btoi(needsBigrams(text)); len(mf) != want {
		diffs = append(diffs, fmt.Sprintf("message: %d fields, want %d", len(mf), want))
	}
	for _, f := range mf {
		wf, wl := referenceOf(ft, f.name, text)
		if gf := freqMap(f.AnalyzedTokenFrequencies()); !maps.Equal(gf, wf) || f.AnalyzedLength() != wl {
			diffs = append(diffs, fmt.Sprintf("message %s: length %d, Bleve %d; terms differ: %s", f.name, f.AnalyzedLength(), wl, mapDiff(gf, wf)))
		}
	}
	return strings.Join(diffs, "; ")
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// mapDiff names a few terms whose counts differ.
func mapDiff(got, want map[string]int) string {
	var d []string
	for k, v := range got {
		if want[k] != v {
			d = append(d, fmt.Sprintf("%q %d≠%d", k, v, want[k]))
		}
	}
	for k, v := range want {
		if _, ok := got[k]; !ok {
			d = append(d, fmt.Sprintf("%q missing (Bleve %d)", k, v))
		}
	}
	sort.Strings(d)
	return strings.Join(d[:min(len(d), 5)], ", ")
}

// vaultDocs parses every memory under dir: path → its parse. Files the
// sync would not index (no parse) are left out.
func vaultDocs(t testing.TB, dir string) map[string]*markdown.Doc {
	t.Helper()
	out := map[string]*markdown.Doc{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".md" {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if doc, err := markdown.Parse(p, data, markdown.Options{}); err == nil {
			out[p] = doc
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// vaultTexts is vaultDocs' title, plain text and tags of each memory.
func vaultTexts(t testing.TB, dir string) map[string][3]string {
	t.Helper()
	out := map[string][3]string{}
	for p, doc := range vaultDocs(t, dir) {
		out[p] = [3]string{doc.Title, doc.Text, strings.Join(doc.Tags, " ")}
	}
	return out
}

// TestAnalysisPassAgrees checks that the one analysis pass gives every
// text field exactly the terms, frequencies and length that Bleve's
// analyzers give it (queries are analysed by them), for the sample vault
// and the hard cases of analysisSamples, with a fresh Analyser and with
// one whose memo holds every earlier text's words.
func TestAnalysisPassAgrees(t *testing.T) {
	ft := testAnalyzers(t)
	texts := vaultTexts(t, filepath.Join("..", "..", "testdata", "vault"))
	if len(texts) < 30 {
		t.Fatalf("only %d memories read from the sample vault", len(texts))
	}
	for i, s := range analysisSamples {
		texts[fmt.Sprintf("sample %d", i)] = [3]string{s.title, s.text, s.tags}
	}
	shared := ft.NewAnalyser()
	names := slices.Sorted(maps.Keys(texts))
	for _, name := range names {
		tt := texts[name]
		for _, a := range []*Analyser{ft.NewAnalyser(), shared} {
			if d := passDiff(ft, a, tt[0], tt[1], tt[2]); d != "" {
				t.Errorf("%s (title %q): %s", name, tt[0], d)
				break
			}
		}
	}
	// The test is not vacuous: the samples do fold, stem, drop and bigram.
	mt := ft.NewAnalyser().Memory("Bleve's index", "Müller's cafés running the 数据库", "ops")
	terms := map[string]bool{}
	for _, f := range mt.Fields {
		for k := range f.AnalyzedTokenFrequencies() {
			terms[f.name+":"+k] = true
		}
	}
	for _, k := range []string{"title:bleve", "body:muller", "body:cafe", "body:run", "cjk:数据", "cjk:据库", "tags:op"} {
		if !terms[k] {
			t.Errorf("term %s missing from %v", k, slices.Sorted(maps.Keys(terms)))
		}
	}
	if terms["body:the"] {
		t.Error("stopword the indexed")
	}
}

// TestAnalysisPassAgreesCorpus runs TestAnalysisPassAgrees's comparison
// over every memory of the folder MNEMO_BENCH_DIR names (e.g.
// /tmp/mnemo-bench/corpora/tldr, every language), and reports how many
// disagree and why. Skipped without it.
func TestAnalysisPassAgreesCorpus(t *testing.T) {
	dir := os.Getenv("MNEMO_BENCH_DIR")
	if dir == "" {
		t.Skip("set MNEMO_BENCH_DIR to a folder of markdown (e.g. /tmp/mnemo-bench/corpora/tldr) to compare the analysis pass with Bleve over it")
	}
	ft := testAnalyzers(t)
	texts := vaultTexts(t, dir)
	a := ft.NewAnalyser()
	var bad []string
	for p, tt := range texts {
		if d := passDiff(ft, a, tt[0], tt[1], tt[2]); d != "" {
			bad = append(bad, p+": "+d)
		}
	}
	sort.Strings(bad)
	t.Logf("%d memories compared, %d disagree", len(texts), len(bad))
	for _, b := range bad[:min(len(bad), 20)] {
		t.Error(b)
	}
}

// BenchmarkAnalysisPass runs the analysis pass alone over every memory of
// the folder MNEMO_BENCH_DIR names (e.g. /tmp/mnemo-bench/corpora/tldr),
// parsed once outside the timing, in path order; one Analyser serves
// syncBatch/2 memories, as each of a two-core sync's workers keeps one
// for its half of a batch. One iteration is the whole corpus.
func BenchmarkAnalysisPass(b *testing.B) {
	dir := os.Getenv("MNEMO_BENCH_DIR")
	if dir == "" {
		b.Skip("set MNEMO_BENCH_DIR to a folder of markdown (e.g. /tmp/mnemo-bench/corpora/tldr) to run this benchmark")
	}
	ft := testAnalyzers(b)
	byPath := vaultTexts(b, dir)
	if len(byPath) == 0 {
		b.Fatalf("no memory parsed under %s", dir)
	}
	texts := make([][3]string, 0, len(byPath))
	for _, p := range slices.Sorted(maps.Keys(byPath)) {
		texts = append(texts, byPath[p])
	}
	b.ReportAllocs()
	cpu0 := processCPU()
	for b.Loop() {
		var a *Analyser
		for i, tt := range texts {
			if i%(syncBatch/2) == 0 {
				a = ft.NewAnalyser()
			}
			a.Memory(tt[0], tt[1], tt[2])
		}
	}
	b.ReportMetric(float64(len(texts)*b.N)/b.Elapsed().Seconds(), "docs/s")
	// CPU, GC included, is what a shared machine lets one measure.
	b.ReportMetric(float64((processCPU()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
}

// syncBatch is the engine's batch of files per sync transaction
// (engine.batchFiles), which the benchmark imitates.
const syncBatch = 1024

// processCPU is the user and system time the process has used.
func processCPU() time.Duration {
	d, _ := enginetest.ProcessCPU()
	return d
}

// FuzzAnalysisPass: for any title, text and tags, the one analysis pass
// gives the fields (terms, frequencies, lengths; each term in its own
// analyzer's field) and excerpt spans that Bleve's own analysis does, with
// a fresh Analyser and with one that has analysed every input before.
func FuzzAnalysisPass(f *testing.F) {
	for _, s := range analysisSamples {
		f.Add(s.title, s.text, s.tags)
	}
	ft := testAnalyzers(f)
	shared := ft.NewAnalyser()
	f.Fuzz(func(t *testing.T, title, text, tags string) {
		if strings.Contains(title, "\n") {
			return // a memory's title is one line
		}
		for _, a := range []*Analyser{ft.NewAnalyser(), shared} {
			if d := passDiff(ft, a, title, text, tags); d != "" {
				t.Fatalf("title %q text %q tags %q: %s", title, text, tags, d)
			}
		}
	})
}

// TestAnalyserMemo: Memo counts the distinct words an Analyser has
// analysed, which a text already seen does not add to (what a sync worker
// bounds it by), and a memo that old texts filled gives a new text the
// terms a fresh Analyser gives it.
func TestAnalyserMemo(t *testing.T) {
	ft := testAnalyzers(t)
	a := ft.NewAnalyser()
	if n := a.Memo(); n != 0 {
		t.Fatalf("a new Analyser remembers %d words", n)
	}
	a.Message("running runs the cafés 数据库")
	n := a.Memo()
	if n < 4 {
		t.Fatalf("Memo = %d after five words and a CJK run", n)
	}
	a.Message("the cafés running")
	if got := a.Memo(); got != n {
		t.Errorf("Memo = %d after words it knew, want %d", got, n)
	}
	for _, s := range analysisSamples {
		a.Message(s.title + " " + s.text)
	}
	for _, s := range analysisSamples {
		got, want := a.Message(s.text), ft.NewAnalyser().Message(s.text)
		if len(got) != len(want) {
			t.Fatalf("%q: %d fields with a full memo, %d fresh", s.text, len(got), len(want))
		}
		for i := range got {
			if got[i].name != want[i].name || got[i].length != want[i].length || mapDiff(freqMap(got[i].freqs), freqMap(want[i].freqs)) != "" {
				t.Errorf("%q: field %s differs with a full memo", s.text, got[i].name)
			}
		}
	}
}
