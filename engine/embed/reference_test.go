package embed

// This file keeps the built-in embedder as it was before its fast path
// (main @ e6632dc): the tokenizer, a map from word to row and the 4-wide
// axpy, renamed with a ref prefix. The tests compare every vector the
// current code computes with this one bit for bit; it is test code only.

import (
	"context"
	"math"
	"unicode"
	"unicode/utf8"
)

// refEmbedder is the reference Embed: the decoded table's map, the
// reference tokenizer and axpy, and the unchanged stand-ins and finish of s.
type refEmbedder struct {
	s     *Static
	index map[string]int32
}

func (r *refEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	s := r.s
	out := make([][]float32, len(texts))
	slab := make([]float32, len(texts)*s.dim)
	var acc []float32
	found := 0
	take := func(tok []byte, final bool) bool {
		row, ok := r.index[string(tok)]
		if !ok {
			if !final {
				return false
			}
			if u := refUnknown(s, tok); u.ok {
				for k, x := range u.v {
					acc[k] += u.f * x
				}
				found++
			}
			return false
		}
		off := int(row) * s.dim
		refAxpy(acc, s.quant[off:off+s.dim], s.coef[row])
		found++
		return true
	}
	for i, text := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		acc = slab[i*s.dim : (i+1)*s.dim : (i+1)*s.dim]
		found = 0
		refTokenize(text, take)
		if found > 0 {
			refFinish(s, acc)
		}
		out[i] = acc
	}
	return out, nil
}

func (r *refEmbedder) Knows(text string) bool {
	known := false
	refTokenize(text, func(tok []byte, _ bool) bool {
		_, ok := r.index[string(tok)]
		known = known || ok
		return ok
	})
	return known
}

func refUnknown(s *Static, tok []byte) *refUnknownWord {
	u := &refUnknownWord{}
	if len(tok) < 3 || s.oovNorm == 0 {
		return u
	}
	letter := false
	for _, c := range tok {
		letter = letter || 'a' <= c && c <= 'z' || c >= utf8.RuneSelf
	}
	if !letter {
		return u
	}
	v := &u.v
	padded := func(i int) byte {
		switch i {
		case 0:
			return '<'
		case len(tok) + 1:
			return '>'
		}
		return tok[i-1]
	}
	for i := 0; i+3 <= len(tok)+2; i++ {
		h := uint64(14695981039346656037)
		for j := i; j < i+3; j++ {
			h ^= uint64(padded(j))
			h *= 1099511628211
		}
		var bits uint64
		for k := range v {
			if k%64 == 0 {
				bits = refSplitmix64(&h)
			}
			v[k] += float32(int(bits&1)*2 - 1)
			bits >>= 1
		}
	}
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return u
	}
	u.f, u.ok = s.oovNorm/float32(math.Sqrt(n)), true
	return u
}

func refSplitmix64(state *uint64) uint64 {
	*state += 0x9e3779b97f4a7c15
	z := *state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func refFinish(s *Static, v []float32) {
	var d float64
	for i, u := range s.common {
		d += float64(u) * float64(v[i])
	}
	var n float64
	for i, u := range s.common {
		v[i] -= float32(d) * u
		n += float64(v[i]) * float64(v[i])
	}
	n = math.Sqrt(n)
	if !(n > 1e-12) || math.IsInf(n, 0) {
		clear(v)
		return
	}
	inv := float32(1 / n)
	for i := range v {
		v[i] *= inv
	}
}

func refAxpy(acc []float32, q []byte, c float32) {
	acc = acc[:len(q)]
	i := 0
	for ; i+4 <= len(q); i += 4 {
		a, b := acc[i:i+4:i+4], q[i:i+4:i+4]
		a[0] += c * float32(int8(b[0]))
		a[1] += c * float32(int8(b[1]))
		a[2] += c * float32(int8(b[2]))
		a[3] += c * float32(int8(b[3]))
	}
	for ; i < len(q); i++ {
		acc[i] += c * float32(int8(q[i]))
	}
}

type refUnknownWord struct {
	v  [builtinDim]float32
	f  float32
	ok bool
}

type refSink func(tok []byte, final bool) bool

func refTokenize(text string, s refSink) {
	var scratch [64]byte
	buf := scratch[:0]
	for i := 0; i < len(text); {
		c, n := refClassAt(text, i)
		if c != refAlnum {
			i += n
			continue
		}
		start := i
		joined, afterJoiner := false, false // joined: a joiner between two letters/digits
	scan:
		for i < len(text) {
			c, n = refClassAt(text, i)
			switch c {
			case refAlnum:
				joined = joined || afterJoiner
				afterJoiner = false
			case refJoiner:
				afterJoiner = true
			default:
				break scan
			}
			i += n
		}
		end := i
		for end > start { // a run starts with a letter or digit but may end in joiners
			r, n := utf8.DecodeLastRuneInString(text[start:end])
			if !refIsJoiner(r) {
				break
			}
			end -= n
		}
		buf = refTokenizeRun(text[start:end], joined, buf, s)
	}
}

// refTokenizeRun handles one run that starts and ends with a letter or digit;
// joined says whether it has joiners inside. It returns buf for reuse.
func refTokenizeRun(run string, joined bool, buf []byte, s refSink) []byte {
	if !joined {
		return refSplitPiece(run, buf, s)
	}
	buf = refAppendFolded(buf[:0], run)
	if s(buf, false) {
		return buf
	}
	// Walk the pieces between joiners, remembering whether each was
	// preceded by an apostrophe (clitic) or a hyphen.
	afterApos := false
	for run != "" {
		j, sepLen, apos := refNextJoiner(run)
		piece := run[:j]
		rest := run[min(len(run), j+sepLen):]
		switch {
		case piece == "":
			// consecutive joiners
		case apos && refIsNT(piece, rest):
			// "doesn't" = "doesn" + "'t": emit "does not".
			stem := piece[:len(piece)-1]
			switch refLowerASCII(stem) {
			case "ca":
				stem = "can"
			case "wo":
				stem = "will"
			case "sha":
				stem = "shall"
			}
			buf = refSplitPiece(stem, buf, s)
			buf = append(buf[:0], "not"...)
			s(buf, true)
			_, sepLen2, apos2 := refNextJoiner(rest)
			rest = rest[min(len(rest), 1+sepLen2):] // skip the "t" and its joiner
			apos = apos2
		case afterApos:
			if w, ok := refClitics[refLowerASCII(piece)]; ok {
				if w != "" {
					buf = append(buf[:0], w...)
					s(buf, true)
				}
				break
			}
			buf = refSplitPiece(piece, buf, s)
		default:
			buf = refSplitPiece(piece, buf, s)
		}
		afterApos = apos
		run = rest
	}
	return buf
}

// refClitics maps what follows an apostrophe to the word it abbreviates; an
// empty word means the clitic carries nothing worth embedding.
var refClitics = map[string]string{"s": "", "re": "are", "ve": "have", "ll": "will", "d": "would", "m": "am"}

// refIsNT reports whether piece and the following rest spell "...n't".
func refIsNT(piece, rest string) bool {
	if len(piece) < 2 || (piece[len(piece)-1] != 'n' && piece[len(piece)-1] != 'N') {
		return false
	}
	j, _, _ := refNextJoiner(rest)
	return j == 1 && (rest[0] == 't' || rest[0] == 'T')
}

// refNextJoiner returns the byte offset of the first joiner in s (len(s) if
// none), its encoded length and whether it is an apostrophe.
func refNextJoiner(s string) (at, size int, apos bool) {
	for i := 0; i < len(s); {
		r, n := refDecodeRune(s[i:])
		if refIsJoiner(r) {
			return i, n, r != '-'
		}
		i += n
	}
	return len(s), 0, false
}

// refSplitPiece emits a joiner-free piece: whole if the sink knows it,
// otherwise cut at camelCase and letter/digit boundaries.
func refSplitPiece(piece string, buf []byte, s refSink) []byte {
	buf = refAppendFolded(buf[:0], piece)
	if s(buf, false) {
		return buf
	}
	start := 0
	prev, prevN := refDecodeRune(piece)
	for i := prevN; i < len(piece); {
		r, n := refDecodeRune(piece[i:])
		cut := false
		switch {
		case unicode.IsDigit(prev) != unicode.IsDigit(r):
			cut = true
		case unicode.IsUpper(r) && !unicode.IsUpper(prev):
			cut = true // "parseHTTP": before H
		case unicode.IsUpper(prev) && unicode.IsUpper(r) && i+n < len(piece):
			next, _ := refDecodeRune(piece[i+n:])
			cut = unicode.IsLower(next) // "HTTPRequest": before R
		}
		if cut {
			buf = refAppendFolded(buf[:0], piece[start:i])
			s(buf, true)
			start = i
		}
		prev = r
		i += n
	}
	if start == 0 { // nothing to cut: the probe above was the only reading
		s(buf, true)
		return buf
	}
	buf = refAppendFolded(buf[:0], piece[start:])
	s(buf, true)
	return buf
}

// refAppendFolded appends the lower-cased s to buf, folding Latin diacritics to
// ASCII (the vocabulary has none) and the typographic apostrophe to "'".
func refAppendFolded(buf []byte, s string) []byte {
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
		i += n
		switch {
		case r >= 0xC0 && r < 0xC0+rune(len(refLatinFold)) && refLatinFold[r-0xC0] != "":
			buf = append(buf, refLatinFold[r-0xC0]...)
		case r == '\u2019':
			buf = append(buf, '\'')
		default:
			buf = utf8.AppendRune(buf, unicode.ToLower(r))
		}
	}
	return buf
}

func refLowerASCII(s string) string {
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
	refSeparator = iota
	refAlnum
	refJoiner
)

// refAsciiClass spares the common case (ASCII text) a rune decode and two
// unicode table look-ups per byte.
var refAsciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := range t {
		switch r := rune(c); {
		case refIsAlnum(r):
			t[c] = refAlnum
		case refIsJoiner(r):
			t[c] = refJoiner
		}
	}
	return t
}()

// refClassAt returns the class of the rune at text[i] and its encoded length.
func refClassAt(text string, i int) (class uint8, size int) {
	if c := text[i]; c < utf8.RuneSelf {
		return refAsciiClass[c], 1
	}
	r, n := utf8.DecodeRuneInString(text[i:])
	switch {
	case refIsAlnum(r):
		return refAlnum, n
	case refIsJoiner(r):
		return refJoiner, n
	}
	return refSeparator, n
}

func refDecodeRune(s string) (rune, int) {
	if c := s[0]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s)
}

func refIsAlnum(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

func refIsJoiner(r rune) bool { return r == '-' || r == '\'' || r == '\u2019' }

// refLatinFold gives the ASCII spelling of U+00C0..U+017F (Latin-1 Supplement
// and Latin Extended-A), both cases; "" marks the two symbols in the range.
var refLatinFold = [...]string{
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
