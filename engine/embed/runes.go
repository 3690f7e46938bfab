package embed

import (
	"unicode"
	"unicode/utf8"
)

// Rune properties the tokenizer asks about for every character. Answering
// them from unicode's range tables costs a binary search each (a third of
// the tokenizer's time on tldr, whose pages are half Korean, Chinese,
// Hindi, Russian...), so for the Basic Multilingual Plane they are read
// from one 64 KB table built from those very range tables at start-up
// (about 0.1 ms). TestRuneInfo checks every entry against unicode.
const (
	rAlnum     = 1 << iota // unicode.IsLetter or unicode.IsDigit; equals class alnum
	rJoiner                // isJoiner; equals class joiner
	rDigit                 // unicode.IsDigit
	rUpper                 // unicode.IsUpper
	rLower                 // unicode.IsLower
	rFoldMoves             // appendFolded writes it differently: unicode.ToLower changes it, or a fold rule
)

var runeInfo = newRuneInfo()

func newRuneInfo() *[1 << 16]uint8 {
	t := new([1 << 16]uint8)
	set := func(tab *unicode.RangeTable, bit uint8) {
		for _, r := range tab.R16 {
			for c := int(r.Lo); c <= int(r.Hi); c += int(r.Stride) {
				t[c] |= bit
			}
		}
	}
	set(unicode.Letter, rAlnum)
	set(unicode.Digit, rAlnum|rDigit)
	set(unicode.Upper, rUpper)
	set(unicode.Lower, rLower)
	for _, c := range "-'\u2019" {
		t[c] |= rJoiner
	}
	for _, cr := range unicode.CaseRanges {
		for c := rune(cr.Lo); c <= rune(min(cr.Hi, 0xFFFF)); c++ {
			if unicode.ToLower(c) != c {
				t[c] |= rFoldMoves
			}
		}
	}
	for c := range latinFold {
		t[0xC0+c] |= rFoldMoves
	}
	t['\u2019'] |= rFoldMoves
	return t
}

// classOf returns r's class: separator, alnum or joiner.
func classOf(r rune) uint8 { return props(r) & (rAlnum | rJoiner) }

// props returns r's bits rAlnum, rJoiner, rDigit, rUpper and rLower
// (and, in the plane, rFoldMoves).
func props(r rune) uint8 {
	if uint32(r) < 1<<16 {
		return runeInfo[r]
	}
	return propsBeyond(r)
}

// propsBeyond is props for runes outside the Basic Multilingual Plane.
func propsBeyond(r rune) uint8 {
	var p uint8
	if unicode.IsLetter(r) {
		p |= rAlnum
	}
	if unicode.IsDigit(r) {
		p |= rAlnum | rDigit
	}
	if unicode.IsUpper(r) {
		p |= rUpper
	}
	if unicode.IsLower(r) {
		p |= rLower
	}
	return p
}

// foldKeeps reports whether appendFolded writes the rune r, decoded from
// n bytes, as those very bytes. An invalid byte (RuneError of length 1)
// becomes U+FFFD, so it is not kept.
func foldKeeps(r rune, n int) bool {
	return uint32(r) < 1<<16 && runeInfo[r]&rFoldMoves == 0 && (r != utf8.RuneError || n > 1)
}
