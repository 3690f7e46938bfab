package engine

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Snippet shape: up to maxSnippets windows of about snippetRadius bytes
// either side of a match, "…" where the text is cut, matches in **bold**.
const (
	maxSnippets   = 3
	snippetRadius = 150
)

// span is a match's byte range in the plain text.
type span struct{ start, end int }

// textSnippets cuts the snippets of any plain text for a query — a text
// that has no excerpt index (excerpts.go), such as one never indexed — and
// returns them with how many matches the text holds. It analyses the
// whole text: searches over indexed memories use the stored excerpt index
// instead.
func (ft *fulltext) textSnippets(text string, q queryTerms) ([]string, int) {
	spans := ft.matchSpans(text, q)
	return excerpts(text, spans), len(spans)
}

// matchSpans finds where the query's terms occur in text, analysing it as
// the index does (tokens.go), with offsets in the original text.
func (ft *fulltext) matchSpans(text string, q queryTerms) []span {
	return ft.newAnalyser().matchSpans(text, q)
}

// mergeSpans sorts spans and merges overlaps (CJK bigrams overlap each other).
func mergeSpans(out []span) []span {
	sort.Slice(out, func(i, j int) bool { return out[i].start < out[j].start })
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

// snippets cuts up to three windows around a memory's matches from its
// stored excerpt index; a memory whose text does not match shows its title
// or tags if they do, and one found only by meaning the start of its best
// chunk. It also returns how many matches the text holds.
func (e *Engine) snippets(r *record, q queryTerms, chunk int, semantic bool) ([]string, int) {
	x, err := e.st.excerpt(r.Path, q)
	if err != nil {
		return []string{}, 0 // an index without excerpts is rebuilt at open (schema 3)
	}
	if len(x.spans) == 0 {
		// The title (or tags) may be all that matched.
		if ts := e.ft.matchSpans(r.Title, q); len(ts) > 0 {
			return []string{cut(r.Title, 0, len(r.Title), ts)}, len(ts)
		}
		if tags := strings.Join(r.Tags, " "); tags != "" {
			if ts := e.ft.matchSpans(tags, q); len(ts) > 0 {
				return []string{"tags: " + cut(tags, 0, len(tags), ts)}, len(ts)
			}
		}
		if c := x.chunkText(chunk); semantic && c != "" {
			return []string{cut(c, 0, 2*snippetRadius, nil)}, 0
		}
		return []string{}, 0
	}
	return excerpts(x.text, x.spans), len(x.spans)
}

// excerpts picks up to maxSnippets windows of text greedily by how many
// distinct matches they hold and cuts them, matches marked.
func excerpts(text string, spans []span) []string {
	if len(spans) == 0 {
		return []string{}
	}
	marked := spans
	spans = spans[:min(len(spans), maxWindowSpans)]
	type window struct{ lo, hi, n int }
	ws := make([]window, 0, len(spans))
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
		out = append(out, cut(text, w.lo, w.hi, marked))
	}
	return out
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
	return oneLine(b.String())
}

// oneLine folds every run of white space in s to one space and trims both
// ends: strings.Join(strings.Fields(s), " ") in one pass, without the
// slice of fields (it was 7 % of a search's CPU under load).
func oneLine(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	pending := false // a space is owed before the next non-space
	for i := 0; i < len(s); {
		c := s[i]
		var space bool
		n := 1
		if c < utf8.RuneSelf {
			space = c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
		} else {
			var r rune
			r, n = utf8.DecodeRuneInString(s[i:])
			space = unicode.IsSpace(r)
		}
		if space {
			pending = b.Len() > 0
		} else {
			if pending {
				b.WriteByte(' ')
				pending = false
			}
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
