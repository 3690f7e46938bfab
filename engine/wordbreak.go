package engine

import (
	"sync/atomic"
	"unicode/utf8"

	"github.com/blevesearch/segment"
)

// Unicode word segmentation (UAX #29) is what Bleve's tokenizer does, with
// blevesearch/segment's generated scanner; it was a quarter of the
// analysis pass's CPU on tldr, most of it on plain ASCII. words cuts a
// segment made of ASCII and plain letters (letters the scanner treats as
// it treats 'a', such as Cyrillic, Greek or Hangul ones: plainLetter)
// itself, by the rules the scanner applies to them (segment_words.rl over
// the Unicode 8.0 word-break properties of its ragel/uwb.rl), and hands
// every other segment to the scanner, so the segments, their bytes and
// their offsets are exactly the scanner's (TestWordsAgree, FuzzWords,
// TestPlainLettersAgree).
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
// change it only if it is neither ASCII nor a plain letter — a letter of
// another class, an Extend or Format character, which the scanner
// attaches, or an invalid byte, at which it stops the text — so a
// segment is cut here only if what follows it, and what follows a
// MidLetter or MidNum it stops at, is ASCII or a plain letter.

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

// wbUnknown is the class of what only the scanner can place.
const wbUnknown = 1 << 7

// letters remembers which runes of the Basic Multilingual Plane are plain
// letters (plainLetter), two bits a rune (0 not yet asked, 1 plain, 2
// not), for every analyser of an index: a rune's answer costs two calls
// of the scanner, once. Safe for concurrent use; 16 KB.
type letters struct{ t [1 << 12]atomic.Uint32 }

// plain reports whether r is a plain letter, asking the scanner once.
func (l *letters) plain(r rune) bool {
	if r < 0 || r >= 1<<16 {
		return false
	}
	w, shift := &l.t[r>>4], uint(r&15)*2
	switch w.Load() >> shift & 3 {
	case 1:
		return true
	case 2:
		return false
	}
	ok := plainLetter(r)
	v := uint32(2)
	if ok {
		v = 1
	}
	w.Or(v << shift) // the same bits whoever asks
	return ok
}

// plainLetter reports whether the scanner treats r as it treats 'a': r is
// an ALetter (it joins letters across a MidLetter) and not a
// Hebrew_Letter (which alone keeps a following apostrophe). Those are
// the word-break classes whose rules differ; a Hangul syllable, also
// ALetter, makes words of the same type, Letter. Asking the scanner
// keeps its Unicode version's tables the only ones.
func plainLetter(r rune) bool {
	if r < utf8.RuneSelf || !utf8.ValidRune(r) || r == utf8.RuneError {
		return false
	}
	s := string(r)
	probe := []byte("a:" + s + ":a")
	if n, tok, typ, err := segment.SegmentWords(probe, true); err != nil || n != len(probe) || len(tok) != len(probe) || typ != segment.Letter {
		return false
	}
	probe = []byte(s + "'")
	n, tok, _, err := segment.SegmentWords(probe, true)
	return err == nil && n == len(s) && len(tok) == len(s)
}

// words walks the segments of a text as segment.Segmenter does (which
// stops at the first segment its scanner cannot make): each segment's
// bytes, where it starts (the lengths of the segments before it, as
// Bleve's tokenizer counts) and whether it is a word (of any type but
// None).
type words struct {
	b       []byte
	letters *letters
	pos     int // next byte to segment
	off     int // sum of the segments' lengths so far
	done    bool
	// the current segment
	seg   []byte
	start int
	word  bool
	ideo  bool // a word of Han, Hiragana or Katakana (types Ideo, Kana)
}

func newWords(b []byte, l *letters) words { return words{b: b, letters: l} }

// next moves to the next segment and reports whether there is one.
func (w *words) next() bool {
	if w.done || w.pos >= len(w.b) {
		return false
	}
	if n, word, ok := w.simple(w.pos); ok {
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

// class is the word-break class of the rune at b[i] and its length:
// wbClass's for ASCII, wbLetter for a plain letter, wbUnknown for the
// rest.
func (w *words) class(i int) (uint8, int) {
	if c := w.b[i]; c < utf8.RuneSelf {
		return wbClass[c], 1
	}
	r, n := utf8.DecodeRune(w.b[i:])
	if n > 1 && w.letters.plain(r) {
		return wbLetter, n
	}
	return wbUnknown, n
}

// simple cuts the segment at b[p:] if it is made of ASCII and plain
// letters and nothing after it can change it; ok is false if the scanner
// must.
func (w *words) simple(p int) (n int, word, ok bool) {
	b := w.b
	k, size := w.class(p)
	if k == wbUnknown {
		return 0, false, false
	}
	end := p + size
	switch {
	case k&wbWord != 0:
		word = true
		prev := k
		for end < len(b) {
			var k uint8
			size := 1
			if c := b[end]; c < utf8.RuneSelf {
				k = wbClass[c]
			} else if k, size = w.class(end); k == wbUnknown {
				return 0, false, false
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
				return 0, false, false
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
			return 0, false, false
		}
	}
	return end - p, word, true
}
