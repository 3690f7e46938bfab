package embed

import (
	"slices"
	"strings"
	"testing"

	"mnemo/engine/embed/internal/table"
)

// tokens lists what tokenize feeds a sink with vocab: known words, and
// unknown ones the tokenizer could not cut further.
func tokens(t *testing.T, text string, vocab *table.Index) []string {
	var out []string
	tokenize(text, vocab, func(tok []byte, row int32) {
		if r, ok := vocab.Row(tok); r != row || ok != (row >= 0) {
			t.Errorf("tokenize(%q) gave %q the row %d, the vocabulary has %d", text, tok, row, r)
		}
		out = append(out, string(tok))
	})
	return out
}

func TestTokenize(t *testing.T) {
	vocab, err := table.NewIndex(strings.Fields("parse http request well-known iphone does not we are john book " +
		"cafe user id mp3 snake case kebab server go state-of-the-art"))
	if err != nil {
		t.Fatal(err)
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
			if got := tokens(t, tt.text, vocab); !slices.Equal(got, tt.want) {
				t.Errorf("tokenize(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}
