package fulltext

import (
	"sync/atomic"
	"unicode/utf8"

	"github.com/blevesearch/segment"
)

// Unicode word segmentation (UAX #29) is what Bleve's tokenizer does, with
// blevesearch/segment's generated scanner, which is costly on what most
// text is, plain ASCII. words cuts a
// segment made of ASCII and plain letters (letters the scanner treats as
// it treats 'a', such as Cyrillic, Greek or Hangul ones), or of one lone
// rune (a Han character, a dash), itself, by the rules the scanner
// applies to them (segment_words.rl over the Unicode 8.0 word-break
// properties of its ragel/uwb.rl), and hands every other segment to the
// scanner, so the segments, their bytes and their offsets are exactly the
// scanner's (TestWordsAgree, TestWordsAgreeRandom, FuzzWords,
// TestRuneKindsAgree). Which runes are plain or lone the scanner itself
// says, once per rune (runeKind).
//
// The ASCII characters' word-break properties, from ragel/uwb.rl:
//
//	ALetter       A–Z a–z
//	Numeric       0–9
//	ExtendNumLet  _
//	MidLetter     :
//	MidNum        , ;
//	MidNumLet     .
//	Single_Quote  '   (in the scanner's rules, wherever MidNumLet is)
//	CR LF Newline \r \n \v \f
//	Double_Quote  "   (joins only Hebrew letters)
//
// and no ASCII character is Extend, Format, Katakana or Hebrew_Letter. So
// an ASCII word is a run of letters, digits and '_', where a MidLetter,
// MidNumLet or Single_Quote between two letters, or a MidNum, MidNumLet or
// Single_Quote between two digits, joins (WB6, WB7, WB11, WB12); anything
// else ASCII is a one-byte non-word ("\r\n" two). What follows a segment
// can change it only if it is none of those — a letter of another class,
// an Extend or Format character, which the scanner attaches, or an
// invalid byte, at which it stops the text — so a segment is cut here
// only if what follows it, and what follows a MidLetter or MidNum it
// stops at, is ASCII, a plain letter or a lone rune.

// ASCII word-break classes: a byte's bits in wbClass.
const (
	wbLetter    = 1 << iota // ALetter
	wbDigit                 // Numeric
	wbJoin                  // ExtendNumLet
	wbMidLetter             // joins two letters: MidLetter, MidNumLet, Single_Quote
	wbMidNum                // joins two digits: MidNum, MidNumLet, Single_Quote
	wbWord      = wbLetter | wbDigit | wbJoin
)

var wbClass = func() (t [utf8.RuneSelf]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = wbLetter
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = wbLetter
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = wbDigit
	}
	t['_'] = wbJoin
	t[':'] = wbMidLetter
	t[','], t[';'] = wbMidNum, wbMidNum
	t['.'], t['\''] = wbMidLetter|wbMidNum, wbMidLetter|wbMidNum
	return t
}()

// Classes of non-ASCII runes, besides wbLetter (a plain letter): a rune
// that is a segment of its own, a word of type Ideo (a Han or Hiragana
// character) or not a word (most punctuation and symbols, Thai letters);
// and what only the scanner can place.
const (
	wbIdeo    = 1 << 5
	wbLone    = 1 << 6
	wbUnknown = 1 << 7
)

// Rune kinds as runeKinds keeps them.
const (
	kindUnasked = iota
	kindPlain
	kindIdeo
	kindLone
	kindScanner
)

// runeKinds remembers the kind of each rune of the Basic Multilingual
// Plane (runeKind), four bits a rune, for every Analyser of an index: a
// rune's answer costs a few calls of the scanner, once. Safe for
// concurrent use; 32 KB.
type runeKinds struct{ t [1 << 13]atomic.Uint32 }

// class is r's word-break class: wbLetter, wbIdeo, wbLone or wbUnknown.
func (l *runeKinds) class(r rune) uint8 {
	if r < 0 || r >= 1<<16 {
		return wbUnknown
	}
	w, shift := &l.t[r>>3], uint(r&7)*4
	k := w.Load() >> shift & 15
	if k == kindUnasked {
		k = runeKind(r)
		w.Or(k << shift) // the same bits whoever asks
	}
	switch k {
	case kindPlain:
		return wbLetter
	case kindIdeo:
		return wbIdeo
	case kindLone:
		return wbLone
	}
	return wbUnknown
}

// runeKind asks the scanner what r is; its Unicode version's tables stay
// the only ones.
//
// A plain letter is treated as 'a' is: it is an ALetter (it joins letters
// across a MidLetter) and not a Hebrew_Letter (which alone keeps a
// following apostrophe) — the word-break classes whose rules differ; a
// Hangul syllable, also ALetter, makes words of the same type, Letter.
//
// A lone rune is a segment of its own, of one type, whatever ASCII, plain
// letter or lone rune comes before or after it: it is neither a letter,
// digit or connector that words join, nor a MidLetter or MidNum that
// joins them, nor an Extend or Format character that the scanner
// attaches to what precedes it.
func runeKind(r rune) uint32 {
	if r < utf8.RuneSelf || !utf8.ValidRune(r) || r == utf8.RuneError {
		return kindScanner
	}
	s := string(r)
	first := func(probe string) (int, int) {
		n, tok, typ, err := segment.SegmentWords([]byte(probe), true)
		if err != nil || len(tok) != n {
			return -1, -1
		}
		return n, typ
	}
	if n, typ := first("a:" + s + ":a"); n == len(s)+4 && typ == segment.Letter {
		if n, _ := first(s + "'"); n == len(s) {
			return kindPlain
		}
		return kindScanner
	}
	typ := -1
	for _, after := range []string{"", "a", "1", "_", "'", ".", ":", ",", " ", "\n", s, "カ", "数", "ひ", "ж", "\u05d0"} {
		n, t := first(s + after)
		if n != len(s) || typ >= 0 && t != typ {
			return kindScanner
		}
		typ = t
	}
	for _, before := range []string{"a", "1", "_", "'", ".", " ", "\r", "カ", "数", "ひ", "ж", "\u05d0", "\u200d"} {
		if n, _ := first(before + s); n != len(before) {
			return kindScanner
		}
		if n, _ := first(before + s + before); n != len(before) { // a MidLetter, MidNum, MidNumLet
			return kindScanner
		}
	}
	switch typ {
	case segment.Ideo:
		return kindIdeo
	case segment.None:
		return kindLone
	}
	return kindScanner
}

// words walks the segments of a text as segment.Segmenter does (which
// stops at the first segment its scanner cannot make): each segment's
// bytes, where it starts (the lengths of the segments before it, as
// Bleve's tokenizer counts) and whether it is a word (of any type but
// None).
type words struct {
	b     []byte
	kinds *runeKinds
	pos   int // next byte to segment
	off   int // sum of the segments' lengths so far
	done  bool
	// the current segment
	seg   []byte
	start int
	word  bool
	ideo  bool // a word of Han, Hiragana or Katakana (types Ideo, Kana)
}

func newWords(b []byte, k *runeKinds) words { return words{b: b, kinds: k} }

// next moves to the next segment and reports whether there is one.
func (w *words) next() bool {
	if w.done || w.pos >= len(w.b) {
		return false
	}
	if n, word, ideo, ok := w.simple(w.pos); ok {
		w.seg, w.start, w.word, w.ideo = w.b[w.pos:w.pos+n], w.off, word, ideo
		w.pos += n
		w.off += n
		return true
	}
	adv, tok, typ, err := segment.SegmentWords(w.b[w.pos:], true)
	if err != nil || adv < 0 || adv > len(w.b)-w.pos || tok == nil {
		w.done = true
		return false
	}
	w.seg, w.start, w.word, w.ideo = tok, w.off, typ != segment.None, typ == segment.Ideo || typ == segment.Kana
	w.pos += adv
	w.off += len(tok)
	return true
}

// class is the word-break class of the rune at b[i] and its length:
// wbClass's for ASCII, runeKinds' for the rest.
func (w *words) class(i int) (uint8, int) {
	if c := w.b[i]; c < utf8.RuneSelf {
		return wbClass[c], 1
	}
	r, n := utf8.DecodeRune(w.b[i:])
	if n == 1 {
		return wbUnknown, 1 // invalid
	}
	return w.kinds.class(r), n
}

// simple cuts the segment at b[p:] if it is made of ASCII, plain letters
// or a lone rune and nothing after it can change it; ok is false if the
// scanner must.
func (w *words) simple(p int) (n int, word, ideo, ok bool) {
	b := w.b
	k, size := w.class(p)
	if k == wbUnknown {
		return 0, false, false, false
	}
	end := p + size
	switch {
	case k&wbWord != 0:
		prev := k
		for end < len(b) {
			var k uint8
			size := 1
			if c := b[end]; c < utf8.RuneSelf {
				k = wbClass[c]
			} else if k, size = w.class(end); k == wbUnknown {
				return 0, false, false, false
			}
			if k&wbWord != 0 {
				prev = k
				end += size
				continue
			}
			if k&(wbMidLetter|wbMidNum) == 0 || end+size == len(b) {
				break
			}
			after, size2 := w.class(end + size)
			if after == wbUnknown {
				return 0, false, false, false
			}
			if k&wbMidLetter != 0 && prev == wbLetter && after == wbLetter ||
				k&wbMidNum != 0 && prev == wbDigit && after == wbDigit {
				prev = after
				end += size + size2
				continue
			}
			break
		}
	case b[p] == '\r' && end < len(b) && b[end] == '\n':
		end++
	}
	if end < len(b) {
		if k, _ := w.class(end); k == wbUnknown {
			return 0, false, false, false
		}
	}
	return end - p, k&(wbWord|wbIdeo) != 0, k == wbIdeo, true
}
