package markdown

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// NormalizeConcept turns a WikiLink target into the key that links and
// files are matched on: trimmed, lowercased, with spaces, underscores and
// slashes (and backslashes) turned into single dashes, and no dash at either
// end. Letters outside ASCII are kept, so "Café Décisions" becomes
// "café-décisions" and "東京 タワー" becomes "東京-タワー".
func NormalizeConcept(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	var b strings.Builder
	b.Grow(len(s))
	dash := false
	for _, r := range s {
		switch {
		case r == '-' || r == '_' || r == '/' || r == '\\' || unicode.IsSpace(r):
			dash = true
			continue
		case dash && b.Len() > 0:
			b.WriteByte('-')
		}
		dash = false
		b.WriteRune(r)
	}
	return b.String()
}

// scanProse writes prose text (not code) to out, replacing each WikiLink
// with its display text and recording its concept, and recording inline
// #tags. The text before each "[[" is scanned for tags with what out
// already holds as its left context.
func (p *parser) scanProse(out *strings.Builder, s string) {
	for {
		// Pair each "]]" with the nearest "[[" before it. Every byte is
		// looked at a bounded number of times, so a file of ten million
		// '[' stays linear.
		j := strings.Index(s, "]]")
		if j < 0 {
			break
		}
		i := strings.LastIndex(s[:j], "[[")
		if i < 0 {
			p.writeTags(out, s[:j+2])
			s = s[j+2:]
			continue
		}
		display, concept, ok := parseWikiLink(s[i+2 : j])
		if !ok {
			p.writeTags(out, s[:j+2])
			s = s[j+2:]
			continue
		}
		pre := s[:i]
		// "![[note]]" embeds a note in Obsidian; for search it is a link.
		pre = strings.TrimSuffix(pre, "!")
		p.writeTags(out, pre)
		out.WriteString(display)
		p.addLink(concept)
		s = s[j+2:]
	}
	p.writeTags(out, s)
}

// parseWikiLink reads the inside of [[...]]: "concept", "concept|alias",
// "concept#heading" or "concept#heading|alias". display is what the plain
// text shows (the alias, else the concept, else the heading); concept is
// normalised and "" for a link to a heading of the same note. ok is false
// when this is not a WikiLink at all.
func parseWikiLink(inner string) (display, concept string, ok bool) {
	if strings.ContainsAny(inner, "[]\n") {
		return "", "", false
	}
	target, alias, _ := strings.Cut(inner, "|")
	name, head, _ := strings.Cut(target, "#")
	name, head, alias = strings.TrimSpace(name), strings.TrimSpace(head), strings.TrimSpace(alias)
	switch {
	case alias != "":
		display = alias
	case name != "":
		display = name
	default:
		display = head
	}
	if display == "" {
		return "", "", false
	}
	// [[note.md]] and [[note]] name the same file.
	if len(name) >= 3 && strings.EqualFold(name[len(name)-3:], ".md") {
		name = name[:len(name)-3]
	}
	return display, NormalizeConcept(name), true
}

// writeTags writes prose to out and records the inline tags in it.
//
// A tag is Obsidian's: '#' at the start of the text or after white space,
// then letters, digits, '_', '-' and '/', with at least one letter or '_'
// so that "#123" and "#2024-01-05" (issue numbers, dates) are not tags. A
// '#' after anything else ("C#", "http://x/#frag") is not a tag, and
// heading markers never reach this text: goldmark has removed them.
func (p *parser) writeTags(out *strings.Builder, s string) {
	if strings.IndexByte(s, '#') < 0 {
		out.WriteString(s)
		return
	}
	prev := rune(' ') // the start of a block counts as white space
	if out.Len() > 0 {
		prev, _ = utf8.DecodeLastRuneInString(out.String())
	}
	for i := 0; i < len(s); {
		if s[i] != '#' {
			r, size := utf8.DecodeRuneInString(s[i:])
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
			r, size := utf8.DecodeRuneInString(s[j:])
			if !isTagRune(r) {
				break
			}
			if r == '_' || unicode.IsLetter(r) {
				named = true
			}
			j += size
		}
		if named {
			p.addTag(strings.TrimRight(s[i+1:j], "/"))
		}
		if j == i+1 {
			prev = '#'
			i++
			continue
		}
		prev, _ = utf8.DecodeLastRuneInString(s[:j])
		i = j
	}
	out.WriteString(s)
}

func isTagRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' ||
			r == '_' || r == '-' || r == '/'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}
