package engine

import (
	"fmt"
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
	start := -1
	for i := 0; i <= len(in); {
		r, n := utf8.DecodeRune(in[i:])
		if i < len(in) && seaRune(r) {
			if start < 0 {
				start = i
			}
		} else if start >= 0 {
			out = append(out, &analysis.Token{Term: in[start:i], Start: start, End: i, Type: analysis.Ideographic})
			start = -1
		}
		if i == len(in) {
			break
		}
		i += n
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	for i, tk := range out {
		tk.Position = i + 1
	}
	return out
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
