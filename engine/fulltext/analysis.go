package fulltext

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/lang/cjk"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	unicodetok "github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/registry"
)

// Scripts written without spaces between words — Chinese, Japanese, Korean
// (CJK), and Thai, Lao, Khmer and Myanmar (Southeast Asian, SEA) — cannot be
// cut into words by Unicode's word-break rules alone, which is all Bleve's
// tokenizer does: it gives each Han character alone, and drops SEA text
// altogether. Text in them is indexed a second time, in the cjk field, as
// overlapping character bigrams, and so are queries: a query in Thai
// matches a memory that holds its bigrams, without a dictionary. There is
// no maintained pure-Go Thai, Lao, Khmer and Myanmar segmenter to use
// instead (cgo and ICU are not allowed), and bigrams are what the CJK text
// already gets.
const (
	analyzerBigram  = "mnemo_bigram"
	tokenizerBigram = "mnemo_scripts"
)

func init() {
	// Bleve finds an index's analyzers by name in a global registry when it
	// opens the index, so the tokenizer must be registered there.
	if err := registry.RegisterTokenizer(tokenizerBigram, newScriptTokenizer); err != nil {
		panic(err)
	}
}

// addBigramAnalyzer defines the cjk field's analyzer: Bleve's cjk analyzer
// (Unicode words, width folding, lowercase, bigrams of ideographic runs)
// over a tokenizer that also gives SEA runs, as ideographic tokens, so
// that the same bigram filter pairs their characters.
func addBigramAnalyzer(im *mapping.IndexMappingImpl) error {
	err := im.AddCustomAnalyzer(analyzerBigram, map[string]any{
		"type":          custom.Name,
		"tokenizer":     tokenizerBigram,
		"token_filters": []any{cjk.WidthName, lowercase.Name, cjk.BigramName},
	})
	if err != nil {
		return fmt.Errorf("define bigram analyzer: %w", err)
	}
	return nil
}

// scriptTokenizer is Bleve's Unicode tokenizer plus one ideographic token
// for each run of SEA letters, which it would drop.
type scriptTokenizer struct{ words analysis.Tokenizer }

func newScriptTokenizer(_ map[string]any, cache *registry.Cache) (analysis.Tokenizer, error) {
	words, err := cache.TokenizerNamed(unicodetok.Name)
	if err != nil {
		return nil, err
	}
	return &scriptTokenizer{words: words}, nil
}

// Tokenize implements analysis.Tokenizer.
func (t *scriptTokenizer) Tokenize(in []byte) analysis.TokenStream {
	out := t.words.Tokenize(in)
	for _, s := range seaRuns(in, nil) {
		out = append(out, &analysis.Token{Term: in[s[0]:s[1]], Start: s[0], End: s[1], Type: analysis.Ideographic})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	for i, tk := range out {
		tk.Position = i + 1
	}
	return out
}

// seaRuns appends to runs the byte ranges of b's runs of SEA letters.
func seaRuns(b []byte, runs [][2]int) [][2]int {
	start := -1
	for i := 0; i <= len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if i < len(b) && seaRune(r) {
			if start < 0 {
				start = i
			}
		} else if start >= 0 {
			runs = append(runs, [2]int{start, i})
			start = -1
		}
		if i == len(b) {
			break
		}
		i += n
	}
	return runs
}

// seaRune reports whether r belongs to Thai, Lao, Khmer or Myanmar text
// (letters, vowel signs and tone marks, digits).
func seaRune(r rune) bool {
	return r >= 0x0E00 && r <= 0x109F && (unicode.Is(unicode.Thai, r) || unicode.Is(unicode.Lao, r) ||
		unicode.Is(unicode.Myanmar, r)) || r >= 0x1780 && r <= 0x19FF && unicode.Is(unicode.Khmer, r)
}

// bigramRune reports whether r is a letter of a script indexed as bigrams.
func bigramRune(r rune) bool {
	return r >= 0x0E00 && (seaRune(r) || r >= 0x2E80 && (unicode.Is(unicode.Han, r) ||
		unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)))
}

// needsBigrams reports whether s holds text of a script indexed as bigrams.
func needsBigrams(s string) bool {
	for _, r := range s {
		if bigramRune(r) {
			return true
		}
	}
	return false
}

// allBigram reports whether every rune of s belongs to a script indexed as bigrams.
func allBigram(s string) bool {
	for _, r := range s {
		if !bigramRune(r) {
			return false
		}
	}
	return s != ""
}

// Each term lives in one analyzer's field, in the index and in a query
// alike: a term the English analyzer makes only of letters of scripts
// indexed as bigrams (a single Han character, a Hangul word) is the cjk
// field's, and a term of the bigram analyzer without such a letter (a
// Latin word, a number) the English fields'. The other analyzer's terms
// still count in a field's length (aword.other), as Bleve counts them.

// englishTerm reports whether the English fields index term, one of the
// English analyzer's.
func englishTerm(term string) bool { return !allBigram(term) }

// cjkTerm reports whether the cjk field indexes term, one of the bigram
// analyzer's.
func cjkTerm(term string) bool { return needsBigrams(term) }

// bigramChain checks that the index's bigram analyzer is the one
// addBigramAnalyzer defines — scriptTokenizer, then width folding,
// lowercase and bigrams without unigrams — which the analysis pass
// reproduces (cjkTokens), and returns its two per-token filters.
func bigramChain(a analysis.Analyzer) ([]analysis.TokenFilter, error) {
	da, ok := a.(*analysis.DefaultAnalyzer)
	if !ok {
		return nil, fmt.Errorf("analyzer %s is a %T, not a custom analyzer", analyzerBigram, a)
	}
	if _, ok := da.Tokenizer.(*scriptTokenizer); !ok || len(da.CharFilters) != 0 || len(da.TokenFilters) != 3 {
		return nil, fmt.Errorf("analyzer %s is not %s with three token filters", analyzerBigram, tokenizerBigram)
	}
	_, width := da.TokenFilters[0].(*cjk.CJKWidthFilter)
	_, lower := da.TokenFilters[1].(*lowercase.LowerCaseFilter)
	bigram, _ := da.TokenFilters[2].(*cjk.CJKBigramFilter)
	if !width || !lower || bigram == nil || !reflect.DeepEqual(bigram, cjk.NewCJKBigramFilter(false)) {
		return nil, fmt.Errorf("analyzer %s filters with %T, %T, %T; want width, lowercase and bigrams alone", analyzerBigram,
			da.TokenFilters[0], da.TokenFilters[1], da.TokenFilters[2])
	}
	return da.TokenFilters[:2], nil
}

// cjkForm is what the bigram analyzer's width and lowercase filters make
// of one token's bytes.
type cjkForm struct {
	term []byte
	w    *aword  // term, for a token the bigram filter passes on as it is
	lens []uint8 // term's runes' lengths, for an ideographic token
}

// piece is one character of an ideographic token, where the bigram filter
// places it.
type piece struct {
	term       []byte
	start, end int
}

// cjkTokens analyses a.body as the bigram analyzer does, without its
// allocations: the same terms, in the same order, with the same offsets
// (which the bigram filter counts in the filtered characters' bytes).
// Each distinct token is filtered once per Analyser (a.forms), and each
// term is one aword, so that group and field count them as they count
// English terms. The slice is reused by the next call.
func (a *Analyser) cjkTokens() []token {
	body := a.body
	a.ctoks = a.ctoks[:0]
	// scriptTokenizer: the Unicode tokenizer's words, with the SEA runs
	// merged in by start (a run after a word starting where it does).
	a.sea = seaRuns(body, a.sea[:0])
	a.ring = 0
	sea := a.sea
	for w := newWords(body, &a.ft.kinds); w.next(); {
		if !w.word {
			continue
		}
		for len(sea) > 0 && sea[0][0] < w.start {
			a.cjkToken(body[sea[0][0]:sea[0][1]], sea[0][0], sea[0][1], true)
			sea = sea[1:]
		}
		a.cjkToken(w.seg, w.start, w.start+len(w.seg), w.ideo)
	}
	for _, s := range sea {
		a.cjkToken(body[s[0]:s[1]], s[0], s[1], true)
	}
	if a.ring == 1 {
		a.cjkEmit(a.curr.term, a.curr.start, a.curr.end)
	}
	return a.ctoks
}

// cjkToken passes one token of the tokenizer through the filters.
func (a *Analyser) cjkToken(b []byte, start, end int, ideographic bool) {
	f := a.forms[string(b)]
	if f == nil {
		term, ok := plainForm(b)
		if !ok {
			ts := analysis.TokenStream{&analysis.Token{Term: bytes.Clone(b), Start: 0, End: len(b), Position: 1}}
			for _, flt := range a.ft.cjkFilters {
				ts = flt.Filter(ts)
			}
			term = ts[0].Term
		}
		f = &cjkForm{term: term}
		a.forms[string(b)] = f
	}
	if !ideographic {
		// The bigram filter flushes what it holds, then passes the token on.
		if a.ring == 1 {
			a.cjkEmit(a.curr.term, a.curr.start, a.curr.end)
		}
		a.ring = 0
		if f.w == nil {
			f.w = a.cjkTerm(f.term)
		}
		a.ctoks = append(a.ctoks, token{w: f.w, start: start, end: end})
		return
	}
	if f.lens == nil {
		f.lens = make([]uint8, 0, len(f.term))
		for _, r := range bytes.Runes(f.term) {
			f.lens = append(f.lens, uint8(utf8.RuneLen(r)))
		}
	}
	// The bigram filter, with outputUnigram false: a character alone
	// (not adjacent to the one before it or after it) is a unigram, and
	// each two adjacent characters a bigram.
	sofar := 0
	for _, l := range f.lens {
		p := piece{term: f.term[sofar : sofar+int(l)], start: start + sofar, end: start + sofar + int(l)}
		sofar += int(l)
		if a.ring > 0 && p.start-a.curr.end != 0 {
			if a.ring == 1 {
				a.cjkEmit(a.curr.term, a.curr.start, a.curr.end)
			}
			a.ring = 0
		}
		a.prev, a.curr = a.curr, p
		if a.ring < 2 {
			a.ring++
		}
		if a.ring == 2 {
			a.scratch = append(append(a.scratch[:0], a.prev.term...), p.term...)
			a.cjkEmit(a.scratch, a.prev.start, p.end)
		}
	}
}

// plainForm is what the width and lowercase filters make of b if that is
// plain to see: b is valid UTF-8 (the width filter rebuilds the term from
// its runes, invalid bytes becoming U+FFFD), has no fullwidth ASCII or
// halfwidth Katakana (FF01–FF5E, FF65–FF9F: the width filter's) and no
// rune that lowercases to another but ASCII capitals (lowercase's, whose
// one exception, a final Σ, is such a rune). Han, Kana, Hangul, Thai and
// lowercase ASCII tokens are; TestAnalysisPassAgrees compares the result
// with the analyzer's.
func plainForm(b []byte) ([]byte, bool) {
	lower := true
	for i := 0; i < len(b); {
		if c := b[i]; c < utf8.RuneSelf {
			lower = lower && (c < 'A' || c > 'Z')
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if n == 1 || r >= 0xFF01 && r <= 0xFF9F || unicode.ToLower(r) != r {
			return nil, false
		}
		i += n
	}
	term := bytes.Clone(b)
	if !lower {
		for i, c := range term {
			if c >= 'A' && c <= 'Z' {
				term[i] = c + 'a' - 'A'
			}
		}
	}
	return term, true
}

// cjkEmit appends the token term [start, end) to a.ctoks.
func (a *Analyser) cjkEmit(term []byte, start, end int) {
	a.ctoks = append(a.ctoks, token{w: a.cjkTerm(term), start: start, end: end})
}

// cjkTerm is the aword of a bigram analyzer's term (copied if new).
func (a *Analyser) cjkTerm(term []byte) *aword {
	w := a.cjkTerms[string(term)]
	if w == nil {
		str := string(term)
		w = a.newWord([]byte(str), str)
		w.other = !cjkTerm(str)
		a.cjkTerms[w.str] = w
	}
	return w
}
