package engine

import (
	"unicode/utf8"

	"github.com/blevesearch/segment"
)

// Unicode word segmentation (UAX #29) is what Bleve's tokenizer does, with
// blevesearch/segment's generated scanner; it was a quarter of the
// analysis pass's CPU on tldr, almost all of it on plain ASCII. words
// cuts a word made of ASCII alone itself, by the rules the scanner applies
// to ASCII (segment_words.rl over the Unicode 8.0 word-break properties
// of its ragel/uwb.rl), and hands every other word to the scanner, so the
// words, their bytes and their offsets are exactly the scanner's
// (TestWordsAgree, FuzzWords).
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
// else ASCII is a one-byte non-word ("\r\n" two). What follows a word can
// change it only if it is not ASCII — a letter, an Extend or Format
// character, which the scanner attaches, or an invalid byte, at which it
// stops the text — so a word is cut here only if the byte after it, and
// the byte after a MidLetter or MidNum it stops at, are ASCII.

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

// words walks the segments of a text as segment.Segmenter does (which
// stops at the first segment its scanner cannot make): each segment's
// bytes, where it starts (the lengths of the segments before it, as
// Bleve's tokenizer counts) and whether it is a word (of any type but
// None).
type words struct {
	b    []byte
	pos  int // next byte to segment
	off  int // sum of the segments' lengths so far
	done bool
	// the current segment
	seg   []byte
	start int
	word  bool
	ideo  bool // a word of Han, Hiragana or Katakana (types Ideo, Kana)
}

func newWords(b []byte) words { return words{b: b} }

// next moves to the next segment and reports whether there is one.
func (w *words) next() bool {
	if w.done || w.pos >= len(w.b) {
		return false
	}
	if n, word, ok := asciiSegment(w.b, w.pos); ok {
		w.seg, w.start, w.word, w.ideo = w.b[w.pos:w.pos+n], w.off, word, false
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

// asciiSegment cuts the segment at b[p:] if it is made of ASCII alone and
// nothing after it can change it; ok is false if the scanner must.
func asciiSegment(b []byte, p int) (n int, word, ok bool) {
	c := b[p]
	if c >= utf8.RuneSelf {
		return 0, false, false
	}
	end := p + 1
	switch {
	case wbClass[c]&wbWord != 0:
		word = true
		for end < len(b) {
			c := b[end]
			if c >= utf8.RuneSelf {
				return 0, false, false
			}
			k := wbClass[c]
			if k&wbWord != 0 {
				end++
				continue
			}
			if k&(wbMidLetter|wbMidNum) == 0 || end+1 == len(b) {
				break
			}
			d := b[end+1]
			if d >= utf8.RuneSelf {
				return 0, false, false
			}
			prev, after := wbClass[b[end-1]], wbClass[d]
			if k&wbMidLetter != 0 && prev == wbLetter && after == wbLetter ||
				k&wbMidNum != 0 && prev == wbDigit && after == wbDigit {
				end += 2
				continue
			}
			break
		}
	case c == '\r' && end < len(b) && b[end] == '\n':
		end++
	}
	if end < len(b) && b[end] >= utf8.RuneSelf {
		return 0, false, false
	}
	return end - p, word, true
}
