package markdown

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// NormalizeConcept turns a WikiLink target into the key that links,
// files and the concept graph are matched on: trimmed, in Unicode NFC (so a
// precomposed "é" and "e" plus a combining accent are one letter),
// lowercased, with spaces, underscores and slashes (and backslashes) turned
// into single dashes, and no dash at either end. Letters outside ASCII are
// kept, so "Café Décisions" becomes "café-décisions" and "東京 タワー"
// becomes "東京-タワー". It is the one normalisation of concept names in
// mnemo: the engine applies it to the names callers ask about too.
func NormalizeConcept(s string) string {
	s = strings.TrimSpace(s)
	if !norm.NFC.IsNormalString(s) {
		s = norm.NFC.String(s)
	}
	b := make([]byte, 0, len(s))
	dash := false
	for i := 0; i < len(s); {
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		i += size
		switch {
		case r == '-' || r == '_' || r == '/' || r == '\\' || unicode.IsSpace(r):
			dash = true
			continue
		case 'A' <= r && r <= 'Z':
			r += 'a' - 'A'
		case r >= utf8.RuneSelf:
			r = unicode.ToLower(r)
		}
		if dash && len(b) > 0 {
			b = append(b, '-')
		}
		dash = false
		b = utf8.AppendRune(b, r)
	}
	out := string(b)
	if !norm.NFC.IsNormalString(out) {
		out = norm.NFC.String(out) // lowercasing can leave a sequence NFC composes
	}
	return out
}

// writeTags writes prose to out and records the inline tags in it.
//
// A tag is Obsidian's: '#' at the start of the text or after white space,
// then letters, digits, '_', '-' and '/', with at least one letter or '_'
// so that "#123" and "#2024-01-05" (issue numbers, dates) are not tags. A
// '#' after anything else ("C#", "http://x/#frag") is not a tag, and
// heading markers never reach this text: goldmark has removed them.
func (p *parser) writeTags(out, s []byte) []byte {
	if bytes.IndexByte(s, '#') < 0 {
		return append(out, s...)
	}
	prev := rune(' ') // the start of a block counts as white space
	if len(out) > 0 {
		prev, _ = utf8.DecodeLastRune(out)
	}
	for i := 0; i < len(s); {
		if s[i] != '#' {
			r, size := utf8.DecodeRune(s[i:])
			prev = r
			i += size
			continue
		}
		if !unicode.IsSpace(prev) {
			prev = '#'
			i++
			continue
		}
		j := i + 1
		named := false
		for j < len(s) {
			r, size := utf8.DecodeRune(s[j:])
			if !isTagRune(r) {
				break
			}
			if r == '_' || unicode.IsLetter(r) {
				named = true
			}
			j += size
		}
		if named {
			p.inlineTag(strings.TrimRight(string(s[i+1:j]), "/"))
		}
		if j == i+1 {
			prev = '#'
			i++
			continue
		}
		prev, _ = utf8.DecodeLastRune(s[:j])
		i = j
	}
	return append(out, s...)
}

// inlineTag records a #tag, and the page it links to where the vault's
// tool makes a tag a link: the page of that name in Logseq, the note
// "tags.<tag>" in Dendron.
func (p *parser) inlineTag(t string) {
	p.addTag(t)
	switch p.flavor {
	case FlavorLogseq:
		p.addLink(NormalizeConcept(t))
	case FlavorDendron:
		p.addLink(NormalizeConcept("tags." + t))
	}
}

func isTagRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' ||
			r == '_' || r == '-' || r == '/'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}
