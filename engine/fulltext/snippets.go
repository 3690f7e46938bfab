package fulltext

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

// TextSnippets cuts the snippets of any plain text for a query — a text
// that has no excerpt index (excerpts.go), such as one never indexed — and
// returns them with how many matches the text holds. It analyses the
// whole text: searches over indexed memories use the stored excerpt index
// instead (MemorySnippets).
func (ft *Index) TextSnippets(text string, q Terms) ([]string, int) {
	spans := ft.matchSpans(text, q)
	return windows(text, spans, maxSnippets, aroundMatch), len(spans)
}

// matchSpans finds where the query's terms occur in text, analysing it as
// the index does (tokens.go), with offsets in the original text.
func (ft *Index) matchSpans(text string, q Terms) []span {
	a, _ := ft.snippets.Get().(*Analyser)
	if a == nil {
		a = ft.NewAnalyser()
	}
	spans := a.matchSpans(text, q)
	if len(a.words)+len(a.forms) <= maxSnippetMemo {
		ft.snippets.Put(a)
	}
	return spans
}

// maxSnippetMemo bounds the words a pooled snippet Analyser remembers.
// A page's snippets share many words, and an Analyser keeps each one's
// term: one made for every snippet stemmed every word again (at 1M
// messages 6 % of a hybrid search's CPU went to a page's snippets).
const maxSnippetMemo = 1 << 16

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

// MemorySnippets cuts up to three windows around a memory's matches from
// its stored excerpt index x; a memory whose text does not match shows its
// title or tags if they do, and one found only by meaning (semantic) the
// start of its best chunk. It also returns how many matches the text holds.
func (ft *Index) MemorySnippets(x Excerpt, title string, tags []string, q Terms, chunk int, semantic bool) ([]string, int) {
	if len(x.spans) == 0 {
		// The title (or tags) may be all that matched.
		if ts := ft.matchSpans(title, q); len(ts) > 0 {
			return []string{cut(title, 0, len(title), ts)}, len(ts)
		}
		if tags := strings.Join(tags, " "); tags != "" {
			if ts := ft.matchSpans(tags, q); len(ts) > 0 {
				return []string{"tags: " + cut(tags, 0, len(tags), ts)}, len(ts)
			}
		}
		if c := x.chunkText(chunk); semantic && c != "" {
			return []string{lead(c)}, 0
		}
		return []string{}, 0
	}
	return windows(x.text, x.spans, maxSnippets, aroundMatch), len(x.spans)
}

// MessageSnippet is one bounded excerpt of a stored message: the window
// with the most matches, centred on them, cut on word boundaries, matches
// in bold, as memory snippets are; a message found by meaning alone gets
// its start. It also returns how many matches the message holds.
func (ft *Index) MessageSnippet(text string, q Terms) (string, int) {
	spans := ft.matchSpans(text, q)
	if len(spans) == 0 {
		return lead(text), 0
	}
	return windows(text, spans, 1, centred)[0], len(spans)
}

// lead is the start of a text, a snippet's length: what an item found by
// meaning alone shows.
func lead(text string) string { return cut(text, 0, 2*snippetRadius, nil) }

// shape says how windows places a window at the match it starts from.
type shape int

const (
	// aroundMatch: snippetRadius either side of the match; it holds the
	// matches that end inside that. Windows start at the first
	// maxWindowSpans matches only, which bounds the work on a text that
	// matches very often (memories).
	aroundMatch shape = iota
	// centred: 2·snippetRadius from the start of the match; it holds the
	// matches that end inside that, and is cut snippetRadius either side
	// of the middle of the first and the last of them (messages).
	centred
)

// windows picks up to n windows of text greedily by how many distinct
// matches they hold (ties: the earlier), never two that overlap, and cuts
// them in text order, every match marked. It is the one window cutter of
// both corpora; sh is the window's shape.
func windows(text string, spans []span, n int, sh shape) []string {
	if len(spans) == 0 {
		return []string{}
	}
	marked, starts := spans, spans
	if sh == aroundMatch {
		starts = spans[:min(len(spans), maxWindowSpans)]
	}
	type window struct{ lo, hi, n int }
	ws := make([]window, 0, len(starts))
	for i, s := range starts {
		w := window{lo: s.start - snippetRadius, hi: s.end + snippetRadius}
		limit := w.hi
		if sh == centred {
			limit = s.start + 2*snippetRadius
		}
		last := s
		for _, t := range starts[i:] {
			if t.end > limit {
				break
			}
			w.n++
			last = t
		}
		if sh == centred {
			mid := (s.start + last.end) / 2
			w.lo, w.hi = mid-snippetRadius, mid+snippetRadius
		}
		ws = append(ws, w)
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
			if len(chosen) == n {
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
	return OneLine(b.String())
}

// OneLine folds every run of white space in s to one space and trims both
// ends: strings.Join(strings.Fields(s), " ") in one pass, without the
// slice of fields, as every snippet goes through it.
func OneLine(s string) string {
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
