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
	start := -1
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v' {
				if start >= 0 {
					units = append(units, span{base + start, base + i})
					start = -1
				}
			} else if start < 0 {
				start = i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		switch {
		case unicode.IsSpace(r):
			if start >= 0 {
				units = append(units, span{base + start, base + i})
				start = -1
			}
		case isCJK(r):
			if start >= 0 {
				units = append(units, span{base + start, base + i})
				start = -1
			}
			units = append(units, span{base + i, base + i + size})
		default:
			if start < 0 {
				start = i
			}
		}
		i += size
	}
	if start >= 0 {
		units = append(units, span{base + start, base + len(s)})
	}
	return units
}

func isCJK(r rune) bool {
	if r < 0x1100 { // below the first Hangul Jamo: nothing to look up
		return false
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

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
// starting at or before it.
func (p *parser) pathAt(u int) []string {
	i := sort.Search(len(p.sections), func(i int) bool { return p.sections[i].unit > u })
	if i == 0 {
		return nil
	}
	return p.sections[i-1].path
}
