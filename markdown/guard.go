package markdown

import "bytes"

// goldmark, like most CommonMark parsers, has inputs on which it takes
// quadratic time: containers nested on one line ("> > > …", "- - - … x",
// goldmark issue #592), and paragraphs dense with brackets, backticks or
// emphasis markers ("[](" repeated, "[a](<b" repeated, "[a]: " repeated).
// 64 KiB of "[](" takes 2.5 s; a 10 MiB file would take hours and stall
// every sync that meets it. No memory written by a person or an agent looks
// like that, so defuse rewrites only such regions, before goldmark sees
// them, into backslash-escaped text that parses in linear time and reads
// the same in the plain text.
const (
	// maxNesting is the deepest container nesting (quotes and list items
	// opened on one line) passed to goldmark. Real notes use a handful.
	maxNesting = 32
	// heavyBudget bounds markup characters × bytes for one run of
	// non-blank lines, which is what the slow paths cost. A 4 KiB
	// paragraph with 500 brackets and asterisks stays under it.
	heavyBudget = 1 << 21
)

// isMarkup reports the characters that open goldmark's expensive inline
// scans, plus the backslash, so that escaping them all is exact.
func isMarkup(c byte) bool {
	switch c {
	case '\\', '[', ']', '!', '`', '<', '>', '*', '_', '~':
		return true
	}
	return false
}

// defuse returns src with pathological regions escaped, and whether it
// changed anything; src itself is returned when there are none (the common case, at the cost of one pass over the bytes).
// Fenced code is left alone: goldmark does not parse inside it, and its
// text must stay verbatim.
func defuse(src []byte) (out []byte, changed bool) {
	type span struct{ start, end int }
	var (
		heavy   []span // runs to escape completely
		inserts []int  // single escapes that cut deep nesting
	)
	runStart, runMarkup := -1, 0
	endRun := func(end int) {
		if runStart >= 0 && runMarkup*(end-runStart) > heavyBudget {
			heavy = append(heavy, span{runStart, end})
		}
		runStart, runMarkup = -1, 0
	}

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
			if c, n, _ := fenceLine(line); c == fence && n >= fenceLen && isBlank(line[bytes.IndexByte(line, c)+n:]) {
				fence = 0
			}
			continue
		}
		if c, n, ok := fenceLine(line); ok {
			endRun(lineStart)
			fence, fenceLen = c, n
			continue
		}
		if isBlank(line) {
			endRun(lineStart)
			continue
		}
		if runStart < 0 {
			if indented(line) {
				// An indented code block, most likely; it is verbatim
				// text and goldmark does not parse inside it.
				continue
			}
			runStart = lineStart
		}
		for _, c := range line {
			if isMarkup(c) {
				runMarkup++
			}
		}
		if i := tooDeep(line); i >= 0 {
			inserts = append(inserts, lineStart+i)
		}
	}
	endRun(len(src))

	if len(heavy) == 0 && len(inserts) == 0 {
		return src, false
	}
	out = make([]byte, 0, len(src)+len(src)/8)
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
	return out, true
}

// fenceLine reports whether line opens or closes fenced code: three or
// more '`' or '~' after optional indentation and blockquote markers.
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
	return len(bytes.TrimLeft(line, " \t\r\n")) == 0
}

func indented(line []byte) bool {
	return line[0] == '\t' || bytes.HasPrefix(line, []byte("    "))
}

// tooDeep returns the offset in line of the container marker that would
// open the (maxNesting+1)th level, or -1. The escape goes before the
// marker character itself ('>', '-', '+', '*', or the '.' or ')' of an
// ordered item), which makes it literal text.
func tooDeep(line []byte) int {
	depth, i := 0, 0
	for {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		if i == len(line) {
			return -1
		}
		at := -1
		switch c := line[i]; {
		case c == '>':
			at = i
			i++
		case c == '-' || c == '+' || c == '*':
			if i+1 < len(line) && (line[i+1] == ' ' || line[i+1] == '\t') {
				at = i
				i++
			}
		case '0' <= c && c <= '9':
			j := i
			for j < len(line) && j-i < 9 && '0' <= line[j] && line[j] <= '9' {
				j++
			}
			if j < len(line)-1 && (line[j] == '.' || line[j] == ')') && (line[j+1] == ' ' || line[j+1] == '\t') {
				at = j
				i = j + 1
			}
		}
		if at < 0 {
			return -1
		}
		if depth++; depth > maxNesting {
			return at
		}
	}
}
