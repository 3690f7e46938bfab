package fulltext

import (
	"bytes"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/char/asciifolding"
	unicodetok "github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/document"
	index "github.com/blevesearch/bleve_index_api"
)

// One analysis pass: a memory's text is analysed once, in the sync
// worker, and the same tokens feed both the full-text index (as
// pre-analysed Bleve fields, so Bleve does not analyse them again) and the
// excerpt index (their spans mapped back to the original text), because
// analysing the text twice (Bleve, then the excerpt index) was a large
// share of a full sync's CPU.
//
// The terms are exactly those of the index's English analyzer (mnemo_en:
// asciifolding over the whole text, Unicode word segmentation, then the
// possessive, lowercase, stopword and Snowball filters), because queries
// are analysed by it: TestAnalysisPassAgrees compares them. The pass runs
// the analyzer's own filters, once per distinct word (the memo), and its
// own character filter once per distinct non-ASCII rune.

// Analyser runs the one analysis pass. It remembers every word and rune it
// has analysed, so a sync worker keeps one for a whole batch, whose
// memories share most of their words. Not safe for concurrent use.
type Analyser struct {
	ft    *Index
	runes map[rune]folded   // non-ASCII rune → its folded form
	words map[string]*aword // folded word → its term
	terms map[string]*aword // term → the one aword of all its words
	stop  *aword            // what every stopword is (never grouped)
	// words and terms, forms and cjkTerms are made for a batch
	sized, cjkSized bool
	// the bigram analyzer's memos (cjkTokens): token → its filtered form,
	// term → its aword
	forms    map[string]*cjkForm
	cjkTerms map[string]*aword
	// buffers reused from one text to the next
	folded  []byte
	start   []int // per folded byte: where its rune starts in the original
	toks    []token
	groups  []group
	slab    []aword // newWord's
	text    uint64  // counts the texts group has counted (aword.text)
	tok     analysis.Token
	ts      analysis.TokenStream
	excerpt []excerptTerm // MemoryText.Excerpt
	spans   []span        // its spans
	counts  []int         // per excerpt term, its spans
	// the bigram analyzer's: its input, SEA runs, output, and the bigram
	// filter's state (ring characters held, the last two)
	body       []byte
	sea        [][2]int
	ctoks      []token
	ring       int
	prev, curr piece
	scratch    []byte
}

// aword is a term the English filters make of words: every word with the
// same term shares one, so that memory groups spans by term.
type aword struct {
	term []byte // shared by every TokenFreq of the word: never written
	str  string // term as a string, the key of every field's map
	key  string // excerpt-index key: nsEN, then the term ("" until needed)
	stop bool   // dropped (a stopword)
	// indexed in the other analyzer's field (englishTerm, cjkTerm):
	// counted in this field's length, as Bleve counts it, but not indexed
	// here.
	other bool
	// the term's slot in the text being grouped, if text is that text's
	text uint64
	slot int
}

// memoWords is the room a sync worker's Analyser makes for words.
const memoWords = 1 << 12

// folded is what asciifolding makes of a non-ASCII rune, and whether the
// rune is of a script indexed as bigrams.
type folded struct {
	s      string
	bigram bool
}

// token is one indexed word of a text: its term and its byte range in the
// original (unfolded) text.
type token struct {
	w          *aword
	start, end int
}

// NewAnalyser returns an Analyser for ft's English analyzer.
func (ft *Index) NewAnalyser() *Analyser {
	return &Analyser{ft: ft, runes: map[rune]folded{}, words: map[string]*aword{}, terms: map[string]*aword{}, stop: &aword{stop: true},
		forms: map[string]*cjkForm{}, cjkTerms: map[string]*aword{}}
}

// Memo is how many distinct words, tokens and bigrams a remembers (its
// English and bigram memos): what it holds grows with it, and a caller
// that keeps one Analyser for many texts renews it once this passes a
// bound.
func (a *Analyser) Memo() int { return len(a.words) + len(a.forms) + len(a.cjkTerms) }

// englishChain checks that the index's English analyzer is one the pass
// reproduces — asciifolding, which folds rune by rune, then Unicode word
// segmentation — and returns its character filter and token filters. An
// index whose mapping says otherwise was not made by this mnemo.
func englishChain(a analysis.Analyzer) (analysis.CharFilter, []analysis.TokenFilter, error) {
	da, ok := a.(*analysis.DefaultAnalyzer)
	if !ok {
		return nil, nil, fmt.Errorf("analyzer %s is a %T, not a custom analyzer", analyzerEN, a)
	}
	if len(da.CharFilters) != 1 {
		return nil, nil, fmt.Errorf("analyzer %s has %d character filters, want asciifolding alone", analyzerEN, len(da.CharFilters))
	}
	if _, ok := da.CharFilters[0].(*asciifolding.AsciiFoldingFilter); !ok {
		return nil, nil, fmt.Errorf("analyzer %s folds with a %T, want asciifolding", analyzerEN, da.CharFilters[0])
	}
	if _, ok := da.Tokenizer.(*unicodetok.UnicodeTokenizer); !ok {
		return nil, nil, fmt.Errorf("analyzer %s tokenises with a %T, want unicode", analyzerEN, da.Tokenizer)
	}
	return da.CharFilters[0], da.TokenFilters, nil
}

// tokens analyses text and returns its indexed words in order, stopwords
// included (marked); the slice is reused by the next call.
//
// Bleve folds the whole text, then segments it. Folding is rune by rune,
// so the pass folds ASCII as is and each other rune through the memo,
// remembering for every folded byte where its rune starts in the original:
// a token's span runs from its first rune's start to its last rune's end.
// (A rune that folds to several, like ½ to 1⁄2, gives each of its words
// the whole rune.) Invalid UTF-8 folds to U+FFFD, as Bleve's conversion to
// runes makes it, which is never part of a word.
func (a *Analyser) tokens(text string) []token {
	toks, _ := a.tokensBigram(text)
	return toks
}

// tokensBigram is tokens, and whether text has letters of a script indexed
// as bigrams (needsBigrams, found by the fold on the way).
func (a *Analyser) tokensBigram(text string) ([]token, bool) {
	a.folded, a.start = slices.Grow(a.folded[:0], len(text)), slices.Grow(a.start[:0], len(text))
	bigram := a.fold(text, 0)
	return a.segment(func(i int) string { return text[i:] }), bigram
}

// titled is tokens of title + "\n" + text, without building that string
// (a copy of every memory's text, a twentieth of a sync's allocations),
// and whether title and text have letters of a script indexed as bigrams
// (needsBigrams, found on the way).
func (a *Analyser) titled(title, text string) (toks []token, titleCJK, textCJK bool) {
	off := len(title) + 1
	a.folded, a.start = slices.Grow(a.folded[:0], off+len(text)), slices.Grow(a.start[:0], off+len(text))
	titleCJK = a.fold(title, 0)
	a.fold("\n", len(title))
	textCJK = a.fold(text, off)
	return a.segment(func(i int) string {
		switch {
		case i < len(title):
			return title[i:]
		case i < off:
			return "\n"
		}
		return text[i-off:]
	}), titleCJK, textCJK
}

// fold appends text, folded, to a.folded, and for each folded byte where
// its rune starts in the original, counted from base. It reports whether
// text has letters of a script indexed as bigrams.
func (a *Analyser) fold(text string, base int) (bigram bool) {
	for i := 0; i < len(text); {
		if text[i] < utf8.RuneSelf {
			j := i + 1
			for j < len(text) && text[j] < utf8.RuneSelf {
				j++
			}
			a.folded = append(a.folded, text[i:j]...)
			for ; i < j; i++ {
				a.start = append(a.start, base+i)
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		f, ok := a.runes[r]
		if !ok {
			f = folded{s: string(a.ft.fold.Filter([]byte(string(r)))), bigram: bigramRune(r)}
			a.runes[r] = f
		}
		bigram = bigram || f.bigram
		a.folded = append(a.folded, f.s...)
		for range len(f.s) {
			a.start = append(a.start, base+i)
		}
		i += n
	}
	return bigram
}

// segment cuts a.folded into words; from(i) is the original text from
// byte i on, where a word's last rune is read to find its end.
func (a *Analyser) segment(from func(i int) string) []token {
	a.toks = a.toks[:0]
	for w := newWords(a.folded, &a.ft.kinds); w.next(); {
		if w.word {
			b, pos := w.seg, w.start
			last := a.start[pos+len(b)-1]
			_, n := utf8.DecodeRuneInString(from(last))
			a.toks = append(a.toks, token{w: a.word(b), start: a.start[pos], end: last + n})
		}
	}
	return a.toks
}

// word returns what the English filters make of one folded word.
func (a *Analyser) word(b []byte) *aword {
	if w, ok := a.words[string(b)]; ok {
		return w
	}
	a.tok = analysis.Token{Term: bytes.Clone(b), Start: 0, End: len(b), Position: 1}
	ts := append(a.ts[:0], &a.tok)
	for _, f := range a.ft.filters {
		ts = f.Filter(ts)
	}
	a.ts = ts[:0]
	var w *aword
	switch {
	case len(ts) == 0:
		w = a.stop
	case a.terms[string(ts[0].Term)] != nil:
		w = a.terms[string(ts[0].Term)] // another form of a known term
	default:
		w = a.newWord(ts[0].Term, string(ts[0].Term))
		w.other = !englishTerm(w.str)
		a.terms[w.str] = w
	}
	if !w.stop && w.str == string(b) {
		a.words[w.str] = w // the word is its term: one string for both keys
	} else {
		a.words[string(b)] = w
	}
	return w
}

// newWord returns a new aword, from a slab: an Analyser makes thousands,
// which all live as long as it does.
func (a *Analyser) newWord(term []byte, str string) *aword {
	if len(a.slab) == 0 {
		a.slab = make([]aword, 256)
	}
	w := &a.slab[0]
	a.slab = a.slab[1:]
	w.term, w.str = term, str
	return w
}

// group is one term of the text being analysed and how often it occurs
// before and after a split point (memory: in the title, in the text).
type group struct {
	w             *aword
	before, after int
}

// grouped is a text's terms, counted by group, and how many of its tokens
// are counted in a field's length but not indexed (aword.other).
type grouped struct {
	terms  []group
	unkept group
}

// group counts the terms of toks, stopwords left out, before and after
// toks[split], in the order they first occur; tokens not indexed
// (aword.other) are only counted. A term's slot is kept in its aword, so
// counting costs no map lookup per token. The terms slice is reused by the
// next call.
func (a *Analyser) group(toks []token, split int) grouped {
	a.text++
	gs := a.groups[:0]
	var unkept group
	for i, t := range toks {
		w := t.w
		if w.stop {
			continue
		}
		if w.other {
			if i < split {
				unkept.before++
			} else {
				unkept.after++
			}
			continue
		}
		if w.text != a.text {
			w.text, w.slot = a.text, len(gs)
			gs = append(gs, group{w: w})
		}
		if i < split {
			gs[w.slot].before++
		} else {
			gs[w.slot].after++
		}
	}
	a.groups = gs
	return grouped{terms: gs, unkept: unkept}
}

// field makes the index field name of text (n bytes) from its term counts.
func (a *Analyser) field(name string, grp grouped, n int, count func(group) int) *Field {
	f := &Field{name: name, opts: a.ft.opts[name], bytes: n, length: count(grp.unkept)}
	gs := grp.terms
	terms := 0
	for _, g := range gs {
		if count(g) > 0 {
			terms++
		}
	}
	f.freqs = make(index.TokenFrequencies, terms)
	slab := make([]index.TokenFreq, terms)
	for _, g := range gs {
		if c := count(g); c > 0 {
			tf := &slab[0]
			slab = slab[1:]
			tf.Term = g.w.term
			tf.SetFrequency(c)
			f.freqs[g.w.str] = tf
			f.length += c
			f.size += tokenFreqSize + len(g.w.term)
		}
	}
	return f
}

// Which of a group's counts a field takes.
func countBefore(g group) int { return g.before }
func countAll(g group) int    { return g.before + g.after }

// tokenFreqSize is about what one term of a field costs in memory: its
// map entry and TokenFreq (Bleve counts a batch's size).
const tokenFreqSize = 64

// MemoryText is one memory's text, analysed: its Bleve fields and the
// terms of its excerpt index.
type MemoryText struct {
	Fields  []*Field      // for NewDoc
	Excerpt []excerptTerm // for ExcerptEncoder.Encode: spans in the plain text; reused by the next memory
}

// Memory analyses a memory's title, plain text and tags once. The body
// field is title + "\n" + text; the title field is its tokens before the
// newline, which always ends a word; the excerpt index holds the tokens
// after it, its spans counted from the start of text. Text with CJK or SEA
// letters also gets the cjk field, analysed once as the bigram analyzer
// does and shared with the excerpt index in the same way. The excerpt
// terms live in the Analyser's buffers: a sync encodes them at once.
func (a *Analyser) Memory(title, text, tags string) MemoryText {
	a.sizeMemo()
	off := len(title) + 1
	toks, titleCJK, textCJK := a.titled(title, text)
	cjk := titleCJK || textCJK
	if cjk {
		a.sizeCJKMemo()
	}
	nTitle := 0
	for nTitle < len(toks) && toks[nTitle].end <= len(title) {
		nTitle++
	}
	grp := a.group(toks, nTitle)
	var m MemoryText
	m.Fields = append(make([]*Field, 0, 4), a.field(fTitle, grp, len(title), countBefore), a.field(fBody, grp, off+len(text), countAll))
	// The excerpt index: each term of the text with its spans, in order,
	// in one slice of a shared array; English terms first (each group's
	// after count), then CJK terms if the text has CJK letters of its own
	// (see excerpts.go), counted here.
	xs, counts := a.englishExcerpt(grp.terms)
	nEN := len(xs)
	var ctoks []token
	if cjk {
		a.body = append(append(append(a.body[:0], title...), '\n'), text...)
		ctoks = a.cjkTokens()
		m.Fields = append(m.Fields, a.cjkField(ctoks, len(a.body)))
		if textCJK {
			xs, counts = a.cjkExcerpt(ctoks, off, xs, counts)
		}
	}
	a.placeSpans(xs, counts, toks[nTitle:], ctoks, off, len(xs) > nEN)
	a.excerpt, m.Excerpt = xs, xs
	tt := a.tokens(tags)
	m.Fields = append(m.Fields, a.field(fTags, a.group(tt, len(tt)), len(tags), countBefore))
	return m
}

// sizeMemo sizes the word memo once: a sync worker's memo grows to
// thousands of words, and growing the maps from empty is a visible share
// of the pass.
func (a *Analyser) sizeMemo() {
	if !a.sized {
		a.words, a.terms = make(map[string]*aword, memoWords), make(map[string]*aword, memoWords)
		a.sized = true
	}
}

// sizeCJKMemo sizes the CJK memo once, for the first text with CJK letters.
func (a *Analyser) sizeCJKMemo() {
	if !a.cjkSized {
		a.forms, a.cjkTerms = make(map[string]*cjkForm, memoWords), make(map[string]*aword, memoWords)
		a.cjkSized = true
	}
}

// englishExcerpt starts the excerpt terms with the text's English terms
// (the groups with tokens after the title), each given its slot, with how
// many spans each will hold.
func (a *Analyser) englishExcerpt(gs []group) (xs []excerptTerm, counts []int) {
	xs, counts = a.excerpt[:0], a.counts[:0]
	for _, g := range gs {
		if g.after > 0 {
			if g.w.key == "" {
				g.w.key = string([]byte{nsEN}) + string(g.w.term)
			}
			g.w.slot = len(xs) // now the term's slot in the excerpt
			xs = append(xs, excerptTerm{key: g.w.key})
			counts = append(counts, g.after)
		}
	}
	return xs, counts
}

// cjkExcerpt adds the CJK terms of the text (the bigram tokens from off
// on) to the excerpt terms, counting their spans.
func (a *Analyser) cjkExcerpt(ctoks []token, off int, xs []excerptTerm, counts []int) ([]excerptTerm, []int) {
	a.text++
	for _, t := range ctoks {
		if t.start < off || t.w.other {
			continue
		}
		if w := t.w; w.text != a.text {
			if w.key == "" {
				w.key = string([]byte{nsCJK}) + w.str
			}
			w.text, w.slot = a.text, len(xs)
			xs = append(xs, excerptTerm{key: w.key})
			counts = append(counts, 0)
		}
		counts[t.w.slot]++
	}
	return xs, counts
}

// placeSpans gives each excerpt term its spans, counted from off, in one
// shared array sized by counts: the text's English tokens, then its CJK
// tokens if withCJK.
func (a *Analyser) placeSpans(xs []excerptTerm, counts []int, toks, ctoks []token, off int, withCJK bool) {
	n := 0
	for _, c := range counts {
		n += c
	}
	spans := slices.Grow(a.spans[:0], n)[:n]
	a.spans, a.counts = spans, counts
	for i, c := range counts {
		xs[i].spans = spans[:0:c]
		spans = spans[c:]
	}
	for _, t := range toks {
		if !t.w.stop && !t.w.other {
			x := &xs[t.w.slot]
			x.spans = append(x.spans, span{t.start - off, t.end - off})
		}
	}
	if withCJK {
		for _, t := range ctoks {
			if t.start >= off && !t.w.other {
				x := &xs[t.w.slot]
				x.spans = append(x.spans, span{t.start - off, t.end - off})
			}
		}
	}
}

// Message analyses a session message: its body field, and its cjk field
// if it has CJK or SEA letters.
func (a *Analyser) Message(text string) []*Field {
	toks, bigram := a.tokensBigram(text)
	fs := []*Field{a.field(fBody, a.group(toks, len(toks)), len(text), countBefore)}
	if bigram {
		a.body = append(a.body[:0], text...)
		fs = append(fs, a.cjkField(a.cjkTokens(), len(text)))
	}
	return fs
}

// cjkField makes the cjk field of a text (n bytes) from its bigram
// analyzer tokens. Its size estimate is a term's per token, as when
// Bleve's own analysis made it.
func (a *Analyser) cjkField(toks []token, n int) *Field {
	f := a.field(fCJK, a.group(toks, len(toks)), n, countBefore)
	f.size = tokenFreqSize * len(toks)
	return f
}

// matchSpans finds where the query's terms occur in text, analysing it as
// the index does.
func (a *Analyser) matchSpans(text string, q Terms) []span {
	var out []span
	if len(q.en) > 0 {
		for _, t := range a.tokens(text) {
			if _, ok := q.en[string(t.w.term)]; ok && !t.w.stop {
				out = append(out, span{t.start, t.end})
			}
		}
	}
	if len(q.cjk) > 0 {
		for _, t := range a.ft.cjk.Analyze([]byte(text)) {
			if _, ok := q.cjk[string(t.Term)]; ok {
				out = append(out, span{t.Start, t.End})
			}
		}
	}
	return mergeSpans(out)
}

// Field is a text field of a Bleve document whose terms the pass
// computed: Bleve's Analyze is a no-op for it, and its indexing reads the
// frequencies and length as they are. It carries no stored value, term
// vectors or doc values, as the mapping asks for none (see newFulltext).
type Field struct {
	name   string
	opts   index.FieldIndexingOptions
	bytes  int
	length int
	freqs  index.TokenFrequencies
	size   int // of freqs, estimated
}

var _ document.Field = (*Field)(nil)
var _ index.Field = (*Field)(nil)

func (f *Field) Name() string                                     { return f.name }
func (f *Field) ArrayPositions() []uint64                         { return nil }
func (f *Field) Options() index.FieldIndexingOptions              { return f.opts }
func (f *Field) Analyze()                                         {}
func (f *Field) Value() []byte                                    { return nil }
func (f *Field) NumPlainTextBytes() uint64                        { return uint64(f.bytes) }
func (f *Field) EncodedFieldType() byte                           { return 't' }
func (f *Field) AnalyzedLength() int                              { return f.length }
func (f *Field) AnalyzedTokenFrequencies() index.TokenFrequencies { return f.freqs }

// Size estimates the field's memory, which Bleve counts against a batch.
func (f *Field) Size() int {
	return 64 + len(f.name) + f.size
}
