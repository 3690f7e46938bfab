package embed

import (
	"slices"
	"strings"
	"testing"
)

// tokens lists what tokenize feeds a sink that knows vocab: known words,
// and unknown ones the tokenizer could not cut further.
func tokens(text string, vocab map[string]bool) []string {
	var out []string
	tokenize(text, func(tok []byte, final bool) bool {
		known := vocab[string(tok)]
		if known || final {
			out = append(out, string(tok))
		}
		return known
	})
	return out
}

func TestTokenize(t *testing.T) {
	vocab := map[string]bool{}
	for _, w := range strings.Fields("parse http request well-known iphone does not we are john book " +
		"cafe user id mp3 snake case kebab server go state-of-the-art") {
		vocab[w] = true
	}
	tests := []struct {
		name, text string
		want       []string
	}{
		{"empty", "", nil},
		{"only punctuation", "... !!! -- ''", nil},
		{"punctuation and case", "Hello, World!", []string{"hello", "world"}},
		{"camelCase with acronym", "parseHTTPRequest", []string{"parse", "http", "request"}},
		{"acronym at the end", "getUserID", []string{"get", "user", "id"}},
		{"acronym then digit", "HTTPServer2Go", []string{"http", "server", "2", "go"}},
		{"known mixed case kept whole", "iPhone", []string{"iphone"}},
		{"snake_case", "snake_case_name", []string{"snake", "case", "name"}},
		{"kebab-case not in vocabulary", "kebab-case", []string{"kebab", "case"}},
		{"hyphenated word in vocabulary", "a well-known fact", []string{"a", "well-known", "fact"}},
		{"long compound in vocabulary", "state-of-the-art", []string{"state-of-the-art"}},
		{"leading and trailing joiners", "--leading-and-trailing--", []string{"leading", "and", "trailing"}},
		{"digits", "v2.3.1 on 2014-05-06", []string{"v", "2", "3", "1", "on", "2014", "05", "06"}},
		{"letters and digits", "utf8 and mp3", []string{"utf", "8", "and", "mp3"}},
		{"n't clitic", "it doesn't", []string{"it", "does", "not"}},
		{"irregular n't", "won't can't", []string{"will", "not", "can", "not"}},
		{"'re clitic", "We're", []string{"we", "are"}},
		{"possessive dropped", "John's book", []string{"john", "book"}},
		{"typographic apostrophes", "rock’n’roll", []string{"rock", "n", "roll"}},
		{"trailing apostrophe", "students' union", []string{"students", "union"}},
		{"diacritics folded", "Café Müller naïve Straße", []string{"cafe", "muller", "naive", "strasse"}},
		{"other scripts lower-cased", "Привет МИР 日本語", []string{"привет", "мир", "日本語"}},
		{"markdown", "## Notes\n- [link](https://x.io/a_b) `codeSpan`", []string{"notes", "link", "https", "x", "io", "a", "b", "code", "span"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tokens(tt.text, vocab); !slices.Equal(got, tt.want) {
				t.Errorf("tokenize(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}
