package embed

import (
	"unicode"
	"unicode/utf8"

	"mnemo/engine/embed/internal/table"
)

// A sink receives the tokens of a text, lower-cased, in order, each with
// its row in the vocabulary or -1 if the vocabulary lacks it. tok is only
// valid during the call.
type sink func(tok []byte, row int32)

// tokenize feeds the words of text to s, looked up in vocab. GloVe's
// vocabulary is lower-case ASCII words and hyphenated compounds, so the
// rules aim at reaching it:
//
//   - A run of letters and digits, possibly joined by internal hyphens or
//     apostrophes, is looked up whole first (lower-cased, Latin diacritics
//     folded: "Café" -> "cafe").
//   - Otherwise it is split at the joiners. English clitics become the word
//     they stand for, since GloVe's tokenizer cut them off and this vocabulary
//     dropped them: "doesn't" -> does not, "we're" -> we are; "'s" is dropped.
//   - Each remaining piece is looked up whole ("iPhone" -> iphone), then
//     split at case changes and letter/digit boundaries
//     ("parseHTTPRequest" -> parse http request, "utf8" -> utf 8).
//
// snake_case and dotted.names need no rule: "_" and "." separate words
// like any other character that is neither a letter nor a digit.
func tokenize(text string, vocab *table.Index, s sink) {
	var scratch [64]byte
	buf := scratch[:0]
	for i := 0; i < len(text); {
		if b := text[i]; b < utf8.RuneSelf && asciiClass[b] != alnum {
			i++ // the common case in line: classAt is a call
			continue
		}
		c, n := classAt(text, i)
		if c != alnum {
			i += n
			continue
		}
		start := i
		joined, afterJoiner := false, false // joined: a joiner between two letters/digits
	scan:
		for i < len(text) {
			if b := text[i]; b < utf8.RuneSelf {
				c, n = asciiClass[b], 1
			} else {
				c, n = classAt(text, i)
			}
			switch c {
			case alnum:
				joined = joined || afterJoiner
				afterJoiner = false
			case joiner:
				afterJoiner = true
			default:
				break scan
			}
			i += n
		}
		end := i
		for end > start { // a run starts with a letter or digit but may end in joiners
			if b := text[end-1]; b < utf8.RuneSelf {
				if asciiClass[b] != joiner {
					break
				}
				end--
				continue
			}
			r, n := utf8.DecodeLastRuneInString(text[start:end])
			if !isJoiner(r) {
				break
			}
			end -= n
		}
		buf = tokenizeRun(text[start:end], joined, buf, vocab, s)
	}
}

// tokenizeRun handles one run that starts and ends with a letter or digit;
// joined says whether it has joiners inside. It returns buf for reuse.
func tokenizeRun(run string, joined bool, buf []byte, vocab *table.Index, s sink) []byte {
	if !joined {
		return splitPiece(run, buf, vocab, s)
	}
	buf = appendFolded(buf[:0], run)
	if row, ok := vocab.Row(buf); ok {
		s(buf, row)
		return buf
	}
	// Walk the pieces between joiners, remembering whether each was
	// preceded by an apostrophe (clitic) or a hyphen.
	afterApos := false
	for run != "" {
		j, sepLen, apos := nextJoiner(run)
		piece := run[:j]
		rest := run[min(len(run), j+sepLen):]
		switch {
		case piece == "":
			// consecutive joiners
		case apos && isNT(piece, rest):
			// "doesn't" = "doesn" + "'t": emit "does not".
			stem := piece[:len(piece)-1]
			switch lowerASCII(stem) {
			case "ca":
				stem = "can"
			case "wo":
				stem = "will"
			case "sha":
				stem = "shall"
			}
			buf = splitPiece(stem, buf, vocab, s)
			buf = append(buf[:0], "not"...)
			emit(buf, vocab, s)
			_, sepLen2, apos2 := nextJoiner(rest)
			rest = rest[min(len(rest), 1+sepLen2):] // skip the "t" and its joiner
			apos = apos2
		case afterApos:
			if w, ok := clitics[lowerASCII(piece)]; ok {
				if w != "" {
					buf = append(buf[:0], w...)
					emit(buf, vocab, s)
				}
				break
			}
			buf = splitPiece(piece, buf, vocab, s)
		default:
			buf = splitPiece(piece, buf, vocab, s)
		}
		afterApos = apos
		run = rest
	}
	return buf
}

// clitics maps what follows an apostrophe to the word it abbreviates; an
// empty word means the clitic carries nothing worth embedding.
var clitics = map[string]string{"s": "", "re": "are", "ve": "have", "ll": "will", "d": "would", "m": "am"}

// isNT reports whether piece and the following rest spell "...n't".
func isNT(piece, rest string) bool {
	if len(piece) < 2 || (piece[len(piece)-1] != 'n' && piece[len(piece)-1] != 'N') {
		return false
	}
	j, _, _ := nextJoiner(rest)
	return j == 1 && (rest[0] == 't' || rest[0] == 'T')
}

// nextJoiner returns the byte offset of the first joiner in s (len(s) if
// none), its encoded length and whether it is an apostrophe.
func nextJoiner(s string) (at, size int, apos bool) {
	for i := 0; i < len(s); {
		r, n := decodeRune(s[i:])
		if isJoiner(r) {
			return i, n, r != '-'
		}
		i += n
	}
	return len(s), 0, false
}

// emit looks tok up and hands it to s.
func emit(tok []byte, vocab *table.Index, s sink) {
	row, ok := vocab.Row(tok)
	if !ok {
		row = -1
	}
	s(tok, row)
}

// splitPiece emits a joiner-free piece: whole if the vocabulary has it,
// otherwise cut at camelCase and letter/digit boundaries.
func splitPiece(piece string, buf []byte, vocab *table.Index, s sink) []byte {
	buf = appendFolded(buf[:0], piece)
	if row, ok := vocab.Row(buf); ok {
		s(buf, row)
		return buf
	}
	start := 0
	prev, prevN := decodeRune(piece)
	pp := props(prev)
	for i := prevN; i < len(piece); {
		r, n := rune(piece[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRuneInString(piece[i:])
		}
		p := props(r)
		cut := false
		switch {
		case (p^pp)&rDigit != 0:
			cut = true // "utf8": before 8
		case p&rUpper != 0 && pp&rUpper == 0:
			cut = true // "parseHTTP": before H
		case pp&rUpper != 0 && p&rUpper != 0 && i+n < len(piece):
			next, _ := decodeRune(piece[i+n:])
			cut = props(next)&rLower != 0 // "HTTPRequest": before R
		}
		if cut {
			buf = appendFolded(buf[:0], piece[start:i])
			emit(buf, vocab, s)
			start = i
		}
		pp = p
		i += n
	}
	if start == 0 { // nothing to cut: the look-up above was the only reading
		s(buf, -1)
		return buf
	}
	buf = appendFolded(buf[:0], piece[start:])
	emit(buf, vocab, s)
	return buf
}

// appendFolded appends the lower-cased s to buf, folding Latin diacritics to
// ASCII (the vocabulary has none) and the typographic apostrophe to "'".
func appendFolded(buf []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			buf = append(buf, c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if foldKeeps(r, n) { // most letters of most scripts
			buf = append(buf, s[i:i+n]...)
			i += n
			continue
		}
		i += n
		switch {
		case r >= 0xC0 && r < 0xC0+rune(len(latinFold)) && latinFold[r-0xC0] != "":
			buf = append(buf, latinFold[r-0xC0]...)
		case r == '\u2019':
			buf = append(buf, '\'')
		default:
			buf = utf8.AppendRune(buf, unicode.ToLower(r))
		}
	}
	return buf
}

func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

const (
	separator = iota
	alnum
	joiner
)

// asciiClass spares the common case (ASCII text) a rune decode and two
// unicode table look-ups per byte.
var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := range t {
		switch r := rune(c); {
		case isAlnum(r):
			t[c] = alnum
		case isJoiner(r):
			t[c] = joiner
		}
	}
	return t
}()

// classAt returns the class of the rune at text[i] and its encoded length.
func classAt(text string, i int) (class uint8, size int) {
	if c := text[i]; c < utf8.RuneSelf {
		return asciiClass[c], 1
	}
	r, n := utf8.DecodeRuneInString(text[i:])
	return classOf(r), n
}

func decodeRune(s string) (rune, int) {
	if c := s[0]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s)
}

func isAlnum(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

func isJoiner(r rune) bool { return r == '-' || r == '\'' || r == '\u2019' }

// latinFold gives the ASCII spelling of U+00C0..U+017F (Latin-1 Supplement
// and Latin Extended-A), both cases; "" marks the two symbols in the range.
var latinFold = [...]string{
	"a", "a", "a", "a", "a", "a", "ae", "c", "e", "e", "e", "e", "i", "i", "i", "i", // U+00C0
	"d", "n", "o", "o", "o", "o", "o", "", "o", "u", "u", "u", "u", "y", "th", "ss", // U+00D0
	"a", "a", "a", "a", "a", "a", "ae", "c", "e", "e", "e", "e", "i", "i", "i", "i", // U+00E0
	"d", "n", "o", "o", "o", "o", "o", "", "o", "u", "u", "u", "u", "y", "th", "y", // U+00F0
	"a", "a", "a", "a", "a", "a", "c", "c", "c", "c", "c", "c", "c", "c", "d", "d", // U+0100
	"d", "d", "e", "e", "e", "e", "e", "e", "e", "e", "e", "e", "g", "g", "g", "g", // U+0110
	"g", "g", "g", "g", "h", "h", "h", "h", "i", "i", "i", "i", "i", "i", "i", "i", // U+0120
	"i", "i", "ij", "ij", "j", "j", "k", "k", "k", "l", "l", "l", "l", "l", "l", "l", // U+0130
	"l", "l", "l", "n", "n", "n", "n", "n", "n", "n", "ng", "ng", "o", "o", "o", "o", // U+0140
	"o", "o", "oe", "oe", "r", "r", "r", "r", "r", "r", "s", "s", "s", "s", "s", "s", // U+0150
	"s", "s", "t", "t", "t", "t", "t", "t", "u", "u", "u", "u", "u", "u", "u", "u", // U+0160
	"u", "u", "u", "u", "w", "w", "y", "y", "y", "z", "z", "z", "z", "z", "z", "s", // U+0170
}
