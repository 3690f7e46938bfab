package markdown

import (
	"sort"
	"unicode"
	"unicode/utf8"
)

// appendUnits appends the word units of s, offset by base, to units. A
// unit is a run of non-space characters, except that each CJK character
// (Han, Hiragana, Katakana, Hangul) is a unit of its own: those scripts
// do not put spaces between words, and without this a long Chinese note
// would count as one word and never be split.
func appendUnits(units []span, s []byte, base int) []span {
	for i := 0; i < len(s); {
		// Between words: skip white space, a CJK character is a unit.
		switch byteClass[s[i]] {
		case classSpace:
			i++
			continue
		case classMulti:
			r, size := utf8.DecodeRune(s[i:])
			if breaksWord(r) {
				if !unicode.IsSpace(r) {
					units = append(units, span{base + i, base + i + size})
				}
				i += size
				continue
			}
		}
		// A word: up to white space or a CJK character.
		start := i
		for i < len(s) {
			switch byteClass[s[i]] {
			case classWord:
				i++
				continue
			case classMulti:
				r, size := utf8.DecodeRune(s[i:])
				if !breaksWord(r) {
					i += size
					continue
				}
			}
			break
		}
		units = append(units, span{base + start, base + i})
	}
	return units
}

// byteClass sorts bytes for appendUnits: ASCII white space (that of
// strings.Fields), other ASCII, and bytes of multi-byte characters.
var byteClass = func() (t [256]uint8) {
	for c := range t {
		switch {
		case c >= utf8.RuneSelf:
			t[c] = classMulti
		case asciiSpace[c]:
			t[c] = classSpace
		}
	}
	return t
}()

const (
	classWord = iota
	classSpace
	classMulti
)

// breaksWord reports whether r ends a word: white space
// (unicode.IsSpace) or a CJK character (isCJK).
func breaksWord(r rune) bool {
	if r < 0x10000 {
		return breakBMP[r>>6]&(1<<(r&63)) != 0
	}
	return isCJK(r) // no white space beyond the BMP
}

func isCJK(r rune) bool {
	if r < 0x1100 { // below the first Hangul Jamo: nothing to look up
		return false
	}
	if r < 0x10000 {
		return cjkBMP[r>>6]&(1<<(r&63)) != 0
	}
	return unicode.In(r, cjkTables...)
}

var cjkTables = []*unicode.RangeTable{unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul}

// cjkBMP and breakBMP hold isCJK and breaksWord for the Basic
// Multilingual Plane, one bit a rune, made from the tables behind
// unicode.In and unicode.IsSpace (White_Space): those walk range tables
// on every call, and text in most scripts but Latin calls them for
// nearly every rune.
var cjkBMP, breakBMP = func() (cjk, brk *[0x10000 / 64]uint64) {
	cjk, brk = new([0x10000 / 64]uint64), new([0x10000 / 64]uint64)
	set := func(t *[0x10000 / 64]uint64, tab *unicode.RangeTable) {
		for _, r := range tab.R16 {
			for c := uint32(r.Lo); c <= uint32(r.Hi); c += uint32(r.Stride) {
				t[c>>6] |= 1 << (c & 63)
			}
		}
		for _, r := range tab.R32 {
			for c := r.Lo; c <= min(r.Hi, 0xFFFF); c += r.Stride {
				t[c>>6] |= 1 << (c & 63)
			}
		}
	}
	for _, tab := range cjkTables {
		set(cjk, tab)
		set(brk, tab)
	}
	set(brk, unicode.White_Space)
	return cjk, brk
}()

// chunk cuts Doc.Text into Chunks. It walks the sections (a heading and
// the text under it) in order: a heading closes the current chunk when
// that chunk already holds a quarter of ChunkWords, so a run of small
// sections shares one chunk instead of making many tiny ones. A span
// longer than ChunkWords is cut into windows of ChunkWords words, each
// repeating the last OverlapWords words of the one before, so that a
// sentence cut at a boundary is still whole somewhere. Every word lands in
// at least one chunk.
func (p *parser) chunk(opt Options) {
	n := len(p.units)
	if n == 0 {
		return
	}
	minWords := max(1, opt.ChunkWords/4)
	start := 0
	for _, s := range p.sections {
		if s.unit-start >= minWords {
			p.windows(start, s.unit, opt.ChunkWords, opt.OverlapWords, minWords)
			start = s.unit
		}
	}
	p.windows(start, n, opt.ChunkWords, opt.OverlapWords, minWords)
}

// windows emits chunks covering units [s, e). A tail shorter than minWords
// is folded into the window before it rather than left as a scrap chunk.
func (p *parser) windows(s, e, size, overlap, minWords int) {
	for s < e {
		end := s + size
		if end >= e || e-end < minWords {
			end = e
		}
		p.emit(s, end)
		if end == e {
			return
		}
		s = end - overlap
	}
}

func (p *parser) emit(s, e int) {
	d := p.doc
	d.Chunks = append(d.Chunks, Chunk{
		Index:    len(d.Chunks),
		Headings: p.pathAt(s),
		Text:     d.Text[p.units[s].start:p.units[e-1].end],
		Start:    p.units[s].start,
	})
}

// pathAt is the heading path in force at unit u: that of the last section
// starting at or before it. Chunks starting in the same section share it.
func (p *parser) pathAt(u int) []string {
	i := sort.Search(len(p.sections), func(i int) bool { return p.sections[i].unit > u })
	if i == 0 {
		return nil
	}
	s := &p.sections[i-1]
	if s.path == nil {
		depth := 0
		for j := i - 1; j >= 0; j = p.sections[j].parent {
			depth++
		}
		s.path = make([]string, depth)
		for j := i - 1; j >= 0; j = p.sections[j].parent {
			depth--
			s.path[depth] = p.sections[j].title
		}
	}
	return s.path
}
