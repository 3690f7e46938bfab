package transcript

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Most of a transcript's bytes are tool output, tool inputs, thinking and
// progress records that the index never keeps, yet encoding/json validates
// every byte of a line (checkValid) and then scans it again to decode. The
// readers of the largest formats (Claude Code, Codex) read their lines with
// jscan instead: one pass that checks the whole line exactly as strictly as
// encoding/json does, skips what is not kept without allocating, and
// decodes only the few fields the reader needs. It handles the shapes the
// agents write; on anything else — a key with escapes, or one that matches a
// field only case-insensitively, a field written twice, a field of another
// type than expected, nesting deeper than jscanMaxDepth, anything invalid —
// it gives up, and the line is decoded by encoding/json as before, which
// decides (jsonscan_test.go holds the two to the same answers).

// jscan is a strict JSON scanner over one line.
type jscan struct {
	b     []byte
	i     int
	depth int
	// in, if set, makes the strings that repeat from line to line once.
	in *strIntern
}

// strIntern holds the strings a read's lines repeat — record types, roles,
// the session id and folder, the previous record's id that a record names
// as its parent, the message id the lines of one reply share — so that each
// is made once, not once per line.
type strIntern struct {
	m       map[string]string
	lastID  string
	lastMsg string
}

// strInternMax bounds the strings a strIntern holds by value.
const strInternMax = 1024

// shared reads a string value (as getString) that many lines repeat.
func (s *jscan) shared(dst *string) bool {
	raw, plain, ok := s.plain(dst)
	if !ok || !plain {
		return ok
	}
	in := s.in
	if v, ok := in.m[string(raw)]; ok {
		*dst = v
		return true
	}
	*dst = string(raw)
	if in.m == nil {
		in.m = map[string]string{}
	}
	if len(in.m) < strInternMax {
		in.m[*dst] = *dst
	}
	return true
}

// id reads a string value (as getString) that is most often the same as
// the last one read of its kind (msg: a message id, else a record id).
func (s *jscan) id(dst *string, msg bool) bool {
	raw, plain, ok := s.plain(dst)
	if !ok || !plain {
		return ok
	}
	last := &s.in.lastID
	if msg {
		last = &s.in.lastMsg
	}
	if string(raw) != *last {
		*last = string(raw)
	}
	*dst = *last
	return true
}

// plain is getString when the scanner does not intern, or when the string
// is not plain (valid UTF-8 without escapes); else it leaves *dst to the
// caller and returns the string's bytes, which are what it stands for.
func (s *jscan) plain(dst *string) (raw []byte, plain, ok bool) {
	if s.in == nil {
		return nil, false, s.getString(dst)
	}
	if s.null() {
		return nil, false, true
	}
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false, false
	}
	raw, esc, ok := s.str()
	if !ok {
		return nil, false, false
	}
	if esc || !utf8.Valid(raw) {
		*dst = unquoteJSON(raw, esc)
		return nil, false, true
	}
	return raw, true, true
}

// jscanMaxDepth bounds nesting; deeper values are left to encoding/json
// (whose own bound is 10,000).
const jscanMaxDepth = 512

// ws skips JSON whitespace.
func (s *jscan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// end reports whether only whitespace is left.
func (s *jscan) end() bool {
	s.ws()
	return s.i == len(s.b)
}

const (
	swarLo = 0x0101010101010101
	swarHi = 0x8080808080808080
)

// str scans the string starting at s.i (a '"'), validating it as
// encoding/json does: no control characters, escapes among \" \\ \/ \b \f
// \n \r \t \uXXXX. It returns the bytes between the quotes and whether any
// is a backslash.
func (s *jscan) str() (raw []byte, esc, ok bool) {
	b := s.b
	i := s.i + 1
	start := i
	for {
		// Eight bytes at a time: find the first quote, backslash or
		// control character.
		for i+8 <= len(b) {
			w := binary.LittleEndian.Uint64(b[i:])
			q := w ^ ('"' * swarLo)
			e := w ^ ('\\' * swarLo)
			m := ((q - swarLo) &^ q) | ((e - swarLo) &^ e) | ((w - ' '*swarLo) &^ w)
			if m &= swarHi; m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		for i < len(b) && b[i] >= ' ' && b[i] != '"' && b[i] != '\\' {
			i++
		}
		if i >= len(b) {
			return nil, false, false
		}
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			return b[start:i], esc, true
		case c == '\\':
			esc = true
			if i+1 >= len(b) {
				return nil, false, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return nil, false, false
				}
				i += 6
			default:
				return nil, false, false
			}
		default: // a control character
			return nil, false, false
		}
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// skip validates and skips the value at s.i (whitespace before it skipped).
func (s *jscan) skip() bool {
	s.ws()
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		_, _, ok := s.str()
		return ok
	case c == '{':
		if s.depth++; s.depth > jscanMaxDepth {
			return false
		}
		s.i++
		for first := true; ; first = false {
			_, _, done, ok := s.member(first)
			if !ok {
				return false
			}
			if done {
				s.depth--
				return true
			}
			if !s.skip() {
				return false
			}
		}
	case c == '[':
		if s.depth++; s.depth > jscanMaxDepth {
			return false
		}
		s.i++
		for first := true; ; first = false {
			done, ok := s.elem(first)
			if !ok {
				return false
			}
			if done {
				s.depth--
				return true
			}
			if !s.skip() {
				return false
			}
		}
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	case c == '-' || '0' <= c && c <= '9':
		return s.number()
	}
	return false
}

// lit skips the literal w.
func (s *jscan) lit(w string) bool {
	if !bytes.HasPrefix(s.b[s.i:], []byte(w)) {
		return false
	}
	s.i += len(w)
	return true
}

// number skips a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *jscan) number() bool {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return false
		}
		i = j
	}
	s.i = i
	return true
}

func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// object begins reading an object: it consumes the '{' (whitespace before
// it skipped), or reports that the value is not an object.
func (s *jscan) object() bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '{' {
		s.i++
		return true
	}
	return false
}

// member reads up to the next member's value of the object being read
// (first: right after its '{'): it returns the member's key as written and
// whether it holds a backslash, with s.i at the value; done when the
// object's '}' was consumed instead.
func (s *jscan) member(first bool) (key []byte, esc, done, ok bool) {
	s.ws()
	if s.i >= len(s.b) {
		return nil, false, false, false
	}
	if s.b[s.i] == '}' {
		s.i++
		return nil, false, true, true
	}
	if !first {
		if s.b[s.i] != ',' {
			return nil, false, false, false
		}
		s.i++
		s.ws()
		if s.i >= len(s.b) {
			return nil, false, false, false
		}
	}
	if s.b[s.i] != '"' {
		return nil, false, false, false
	}
	if key, esc, ok = s.str(); !ok {
		return nil, false, false, false
	}
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != ':' {
		return nil, false, false, false
	}
	s.i++
	s.ws()
	return key, esc, false, true
}

// array begins reading an array, as object does an object.
func (s *jscan) array() bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '[' {
		s.i++
		return true
	}
	return false
}

// elem moves to the next element of the array being read (first: right
// after its '['); done when the ']' was consumed instead.
func (s *jscan) elem(first bool) (done, ok bool) {
	s.ws()
	if s.i >= len(s.b) {
		return false, false
	}
	if s.b[s.i] == ']' {
		s.i++
		return true, true
	}
	if !first {
		if s.b[s.i] != ',' {
			return false, false
		}
		s.i++
		s.ws()
	}
	return false, true
}

// null consumes a null if one is at s.i.
func (s *jscan) null() bool {
	if s.i < len(s.b) && s.b[s.i] == 'n' {
		return s.lit("null")
	}
	return false
}

// getString reads a string value into *dst, or leaves *dst as it is for a
// null, as encoding/json does; ok is false for any other value.
func (s *jscan) getString(dst *string) bool {
	if s.null() {
		return true
	}
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return false
	}
	raw, esc, ok := s.str()
	if ok {
		*dst = unquoteJSON(raw, esc)
	}
	return ok
}

// getBool reads true or false into *dst, or leaves it for a null.
func (s *jscan) getBool(dst *bool) bool {
	switch {
	case s.null():
		return true
	case s.lit("true"):
		*dst = true
		return true
	case s.lit("false"):
		*dst = false
		return true
	}
	return false
}

// raw skips a value and returns its bytes as written.
func (s *jscan) raw() ([]byte, bool) {
	start := s.i
	if !s.skip() {
		return nil, false
	}
	return s.b[start:s.i], true
}

// unquoteJSON is the string the bytes between a JSON string's quotes
// stand for, as encoding/json decodes them: escapes resolved, a lone or
// broken surrogate and every byte of invalid UTF-8 made U+FFFD.
func unquoteJSON(raw []byte, esc bool) string {
	if !esc && utf8.Valid(raw) {
		return string(raw)
	}
	b := make([]byte, 0, len(raw)+2*utf8.UTFMax)
	for r := 0; r < len(raw); {
		c := raw[r]
		switch {
		case c == '\\':
			switch c = raw[r+1]; c {
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'u':
				rr := getu4(raw[r:])
				r += 6
				if utf16.IsSurrogate(rr) {
					if dec := utf16.DecodeRune(rr, getu4(raw[r:])); dec != unicode.ReplacementChar {
						b = utf8.AppendRune(b, dec)
						r += 6
						continue
					}
					rr = unicode.ReplacementChar
				}
				b = utf8.AppendRune(b, rr)
				continue
			}
			b = append(b, c)
			r += 2
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(raw[r:])
			b = utf8.AppendRune(b, rr)
			r += size
		}
	}
	return string(b)
}

// getu4 decodes \uXXXX at the start of s, or returns -1.
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c = c - '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// jsonFields is the set of a struct's JSON field names, as jscan's
// decoders match a key against them.
// members reads the object at s.i member by member: an unknown key's value
// is skipped, a known one's read by field with the key's index in fields.
// False when encoding/json must decide: not an object, a key to unescape
// or fold, a key written twice, or a value field could not take.
func (s *jscan) members(fields jsonFields, field func(f int) bool) bool {
	if !s.object() {
		return false
	}
	var seen uint32
	for first := true; ; first = false {
		key, esc, done, ok := s.member(first)
		if !ok {
			return false
		}
		if done {
			return true
		}
		f, ok := fields.index(key, esc)
		switch {
		case !ok:
			return false
		case f < 0:
			ok = s.skip()
		case seen&(1<<f) != 0:
			return false
		default:
			seen |= 1 << f
			ok = field(f)
		}
		if !ok {
			return false
		}
	}
}

type jsonFields []string

// index is the field a key names exactly (-1 if none); ok is false when
// encoding/json might match it to a field where index does not: a key with
// escapes or other than ASCII, or one equal to a field name but for case.
func (f jsonFields) index(key []byte, esc bool) (i int, ok bool) {
	if esc {
		return -1, false
	}
	for _, c := range key {
		if c >= utf8.RuneSelf {
			return -1, false
		}
	}
	for i, name := range f {
		if len(name) == len(key) && foldASCII(key, name) {
			if name != string(key) {
				return -1, false
			}
			return i, true
		}
	}
	return -1, true
}

// foldASCII reports whether the ASCII key equals name but for case.
func foldASCII(key []byte, name string) bool {
	for i, c := range key {
		d := name[i]
		if c == d {
			continue
		}
		if c|0x20 != d|0x20 || c|0x20 < 'a' || c|0x20 > 'z' {
			return false
		}
	}
	return true
}
