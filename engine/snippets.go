package engine

import (
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/char/asciifolding"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	unicodetok "github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"

	"mnemo/markdown"
)

// Snippet shape: up to maxSnippets windows of about snippetRadius bytes
// either side of a match, "…" where the text is cut, matches in **bold**.
const (
	maxSnippets   = 3
	snippetRadius = 150
)

// span is a match's byte range in the plain text.
type span struct{ start, end int }

// matchSpans finds where the query's terms occur in text. It tokenises the
// original text (so offsets are exact) and then folds, lowercases and stems
// each token the way the index analyser does.
func matchSpans(text string, q queryTerms, cjkAnalyzer analysis.Analyzer) []span {
	var out []span
	if len(q.en) > 0 {
		fold, poss, lower, stem := asciifolding.New(), en.NewPossessiveFilter(), lowercase.NewLowerCaseFilter(), en.NewEnglishStemmerFilter()
		hit := map[string]bool{} // a memory repeats its words: stem each once
		for _, t := range unicodetok.NewUnicodeTokenizer().Tokenize([]byte(text)) {
			word := string(t.Term)
			m, ok := hit[word]
			if !ok {
				one := analysis.TokenStream{&analysis.Token{Term: fold.Filter(t.Term)}}
				one = stem.Filter(lower.Filter(poss.Filter(one)))
				_, m = q.en[string(one[0].Term)]
				hit[word] = m
			}
			if m {
				out = append(out, span{t.Start, t.End})
			}
		}
	}
	if len(q.cjk) > 0 && cjkAnalyzer != nil {
		for _, t := range cjkAnalyzer.Analyze([]byte(text)) {
			if _, ok := q.cjk[string(t.Term)]; ok {
				out = append(out, span{t.Start, t.End})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].start < out[j].start })
	// merge overlaps (CJK bigrams overlap each other)
	merged := out[:0]
	for _, s := range out {
		if n := len(merged); n > 0 && s.start <= merged[n-1].end {
			merged[n-1].end = max(merged[n-1].end, s.end)
			continue
		}
		merged = append(merged, s)
	}
	return merged
}

// snippets reads the memory afresh and cuts up to three windows around its
// matches; a memory found only by meaning gets the start of its best chunk.
// It also returns how many matches the text holds.
func (e *Engine) snippets(rel string, q queryTerms, chunk int, semantic bool) ([]string, int) {
	data, _, err := e.readMemory(rel)
	if err != nil {
		return []string{}, 0
	}
	doc, err := markdown.Parse(rel, data, markdown.Options{MaxBytes: e.cfg.MaxFileBytes})
	if err != nil {
		return []string{}, 0
	}
	text := doc.Text
	spans := matchSpans(text, q, e.ft.cjk)
	if len(spans) == 0 {
		// The title (or tags) may be all that matched.
		if ts := matchSpans(doc.Title, q, e.ft.cjk); len(ts) > 0 {
			return []string{cut(doc.Title, 0, len(doc.Title), ts)}, len(ts)
		}
		if tags := strings.Join(doc.Tags, " "); tags != "" {
			if ts := matchSpans(tags, q, e.ft.cjk); len(ts) > 0 {
				return []string{"tags: " + cut(tags, 0, len(tags), ts)}, len(ts)
			}
		}
		if semantic && chunk < len(doc.Chunks) {
			return []string{cut(doc.Chunks[chunk].Text, 0, 2*snippetRadius, nil)}, 0
		}
		return []string{}, 0
	}
	// Pick windows greedily by how many distinct matches they hold.
	type window struct{ lo, hi, n int }
	var ws []window
	for i, s := range spans {
		lo, hi := s.start-snippetRadius, s.end+snippetRadius
		n := 0
		for _, t := range spans[i:] {
			if t.end > hi {
				break
			}
			n++
		}
		ws = append(ws, window{lo, hi, n})
	}
	sort.SliceStable(ws, func(i, j int) bool { return ws[i].n > ws[j].n })
	var chosen []window
	for _, w := range ws {
		overlap := false
		for _, c := range chosen {
			if w.lo < c.hi && c.lo < w.hi {
				overlap = true
				break
			}
		}
		if !overlap {
			chosen = append(chosen, w)
			if len(chosen) == maxSnippets {
				break
			}
		}
	}
	sort.Slice(chosen, func(i, j int) bool { return chosen[i].lo < chosen[j].lo })
	out := make([]string, 0, len(chosen))
	for _, w := range chosen {
		out = append(out, cut(text, w.lo, w.hi, spans))
	}
	return out, len(spans)
}

// cut returns text[lo:hi] on rune and word boundaries, whitespace folded,
// with "…" where it cuts and the spans inside marked **bold**.
func cut(text string, lo, hi int, spans []span) string {
	lo, hi = max(lo, 0), min(hi, len(text))
	for lo > 0 && !utf8.RuneStart(text[lo]) {
		lo--
	}
	for hi < len(text) && !utf8.RuneStart(text[hi]) {
		hi++
	}
	// widen to the nearest space so words are not split (but never by much)
	if lo > 0 {
		if i := strings.LastIndexAny(text[max(lo-20, 0):lo], " \n\t"); i >= 0 {
			lo = max(lo-20, 0) + i + 1
		}
	}
	if hi < len(text) {
		if i := strings.IndexAny(text[hi:min(hi+20, len(text))], " \n\t"); i >= 0 {
			hi += i
		}
	}
	var b strings.Builder
	if lo > 0 {
		b.WriteString("…")
	}
	pos := lo
	for _, s := range spans {
		if s.start < lo || s.end > hi {
			continue
		}
		b.WriteString(text[pos:s.start])
		b.WriteString("**")
		b.WriteString(text[s.start:s.end])
		b.WriteString("**")
		pos = s.end
	}
	b.WriteString(text[pos:hi])
	if hi < len(text) {
		b.WriteString("…")
	}
	return strings.Join(strings.Fields(b.String()), " ")
}
