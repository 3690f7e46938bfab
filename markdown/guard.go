package markdown

import "bytes"

// goldmark, like most CommonMark parsers, has inputs on which it takes
// quadratic time: containers nested on one line ("> > > …", "- - - … x"),
// and inline content dense with brackets, backticks or emphasis markers
// ("[](" repeated, "[a](<b" repeated, "[a]: " repeated). A file of the
// size limit made of them would take hours and stall every sync that
// meets it. No memory written by a person or an agent looks like that, so
// defuse rewrites only such regions, before goldmark sees them, into
// backslash-escaped text that parses in linear time and reads the same in
// the plain text.
const (
	// maxNesting is the deepest container nesting (quotes and list items
	// opened on one line) passed to goldmark. Real notes use a handful;
	// each level costs goldmark a scan of the rest of the line.
	maxNesting = 16
	// heavyBudget bounds markup characters × bytes for one inline block
	// (a paragraph, list item, heading or table row), which is what the
	// slow paths cost. It is set high enough that a dense but real
	// paragraph (4 KiB with 120 brackets, backticks and asterisks) stays
	// under it, and low enough that a file at the size limit made of
	// blocks just under it still parses in seconds, most of that
	// goldmark's linear cost for such dense markup.
	heavyBudget = 1 << 19
)

// isMarkup reports the characters that open goldmark's expensive inline
// scans, plus the backslash, so that escaping them all is exact. defuse
// looks at every byte of every file, hence the table.
func isMarkup(c byte) bool { return markupByte[c] }

var markupByte = [256]bool{'\\': true, '[': true, ']': true, '!': true, '`': true, '<': true, '>': true, '*': true, '_': true, '~': true}

// countMarkup is the number of markup characters in b.
func countMarkup(b []byte) int {
	n := 0
	for _, c := range b {
		if markupByte[c] {
			n++
		}
	}
	return n
}

// region is a byte range of the source.
type region struct{ start, end int }

// defuse returns src with pathological regions escaped, and whether it
// changed anything; src itself is returned when there is nothing to do
// (the common case, at the cost of one pass over the bytes).
//
// It approximates goldmark's blocks from lines: a block ends at a blank
// line and a new one starts at each list item, heading and table row.
// Fenced code is left alone: goldmark does not parse inside it and its text
// must stay verbatim. The quote and list markers that open a line are
// never escaped, so the structure around a defused block survives.
func defuse(src []byte) (out []byte, changed bool) {
	heavy, inserts := dangers(src)
	if len(heavy) == 0 && len(inserts) == 0 {
		return src, false
	}
	return escapeAt(src, heavy, inserts), true
}

// blockWeight tallies the block being read: once it ends, its line
// contents are heavy if its markup times its size is over heavyBudget.
type blockWeight struct {
	heavy  []region // line contents to escape completely
	block  []region // line contents of the current block
	markup int      // markup characters in block
	size   int      // bytes in block
}

func (w *blockWeight) end() {
	if w.markup*w.size > heavyBudget {
		w.heavy = append(w.heavy, w.block...)
	}
	w.block, w.markup, w.size = w.block[:0], 0, 0
}

func (w *blockWeight) add(r region, rest []byte) {
	w.markup += countMarkup(rest)
	w.size += len(rest)
	w.block = append(w.block, r)
}

// dangers finds what defuse must escape, line by line: the line contents
// of heavy blocks, and the offsets where a single escape cuts nesting too
// deep.
func dangers(src []byte) (heavy []region, inserts []int) {
	// A block holds no more markup and no more bytes than the whole
	// source, so most files cannot hold a heavy block, and then only the
	// nesting needs looking at, line by line.
	// (a*n > heavyBudget is written a > heavyBudget/n, which cannot
	// overflow.)
	n := len(src)
	weighBlocks := n > 0 && n > heavyBudget/n && countMarkup(src) > heavyBudget/n
	var w blockWeight
	var fence byte // '`' or '~' while inside fenced code
	fenceLen := 0
	for pos := 0; pos < len(src); {
		end := len(src)
		if i := bytes.IndexByte(src[pos:], '\n'); i >= 0 {
			end = pos + i + 1
		}
		line := src[pos:end]
		lineStart := pos
		pos = end

		if fence != 0 {
			if c, n, ok := fenceLine(line); c == fence && n >= fenceLen && ok && isBlank(line[bytes.IndexByte(line, c)+n:]) {
				fence = 0
			}
			continue
		}
		if c, n, ok := fenceLine(line); ok {
			w.end()
			fence, fenceLen = c, n
			continue
		}
		if isBlank(line) {
			w.end()
			continue
		}
		content, item, deep := containerPrefix(line)
		if deep >= 0 {
			inserts = append(inserts, lineStart+deep)
		}
		rest := line[content:]
		if isBlank(rest) {
			w.end() // ">" alone separates paragraphs inside a quote
			continue
		}
		if !weighBlocks {
			continue
		}
		if item || rest[0] == '|' || rest[0] == '#' {
			w.end()
		}
		w.add(region{lineStart + content, end}, rest)
	}
	w.end()
	return w.heavy, inserts
}

// escapeAt copies src with a backslash before every markup character in
// heavy and at every offset in inserts (both in source order).
func escapeAt(src []byte, heavy []region, inserts []int) []byte {
	out := make([]byte, 0, len(src)+len(src)/8)
	h, k := 0, 0
	for i, c := range src {
		for h < len(heavy) && heavy[h].end <= i {
			h++
		}
		escape := h < len(heavy) && heavy[h].start <= i && isMarkup(c)
		for k < len(inserts) && inserts[k] < i {
			k++
		}
		if escape || k < len(inserts) && inserts[k] == i {
			out = append(out, '\\')
		}
		out = append(out, c)
	}
	return out
}

// fenceLine reports whether line opens fenced code: three or more '`' or
// '~' after optional indentation and blockquote markers, and for '`' no
// backtick after them. c and n are the fence character and length.
func fenceLine(line []byte) (c byte, n int, ok bool) {
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t' || line[i] == '>') {
		i++
	}
	if i == len(line) || line[i] != '`' && line[i] != '~' {
		return 0, 0, false
	}
	c = line[i]
	for i+n < len(line) && line[i+n] == c {
		n++
	}
	if n < 3 || c == '`' && bytes.IndexByte(line[i+n:], '`') >= 0 {
		return c, n, false
	}
	return c, n, true
}

func isBlank(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// containerPrefix scans the quote and list markers that open line. It
// returns where the line's own content starts, whether a list item starts
// on this line, and the offset of the marker that would open nesting level
// maxNesting+1, or -1. The escape for that goes before the marker
// character itself ('>', '-', '+', '*', or the '.' or ')' of an ordered
// item), which makes it and the rest of the line literal text.
func containerPrefix(line []byte) (content int, item bool, deep int) {
	depth, i := 0, 0
	for {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		content = i
		if i == len(line) {
			return content, item, -1
		}
		at := -1
		switch c := line[i]; {
		case c == '>':
			at = i
			i++
		case c == '-' || c == '+' || c == '*':
			if i+1 < len(line) && (line[i+1] == ' ' || line[i+1] == '\t') {
				at, item = i, true
				i++
			}
		case '0' <= c && c <= '9':
			j := i
			for j < len(line) && j-i < 9 && '0' <= line[j] && line[j] <= '9' {
				j++
			}
			if j < len(line)-1 && (line[j] == '.' || line[j] == ')') && (line[j+1] == ' ' || line[j+1] == '\t') {
				at, item = j, true
				i = j + 1
			}
		}
		if at < 0 {
			return content, item, -1
		}
		if depth++; depth > maxNesting {
			return at, item, at
		}
	}
}
