package markdown

import (
	"bytes"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	gparser "github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// span is one word of the plain text, as byte offsets into Doc.Text.
type span struct{ start, end int }

// section is one heading: where its text starts, in words, the
// enclosing heading's section (-1 for none), and the heading path
// (H1 > H2 > ...) in force from there on, built when a chunk first needs it.
type section struct {
	unit   int
	parent int
	level  int
	title  string
	path   []string
}

// bodyState is what parseBody keeps while it walks the blocks. Its
// buffers are reused from block to block, and from file to file through
// the parser pool.
type bodyState struct {
	src   []byte
	text  []byte   // Doc.Text being built
	stack []int    // open headings (indices into sections), outermost first
	inl   []byte   // inline text of the current leaf block
	lit   [][2]int // ranges of inl that are code or URLs: not scanned for links and tags
	out   []byte   // the current leaf block's finished text
	row   []byte   // the current table row's text
	// suspect is set when a piece of text might cut a character, and
	// repair when a walk left Doc.Text invalid UTF-8: the walk is done
	// again, repairing each block (see walkBody).
	suspect, repair bool
}

// segment notes whether seg might cut a character of src: whether it
// starts or ends at a UTF-8 continuation byte.
func (b *bodyState) segment(seg text.Segment) {
	if seg.Start < len(b.src) && b.src[seg.Start]&0xC0 == 0x80 || seg.Stop < len(b.src) && b.src[seg.Stop]&0xC0 == 0x80 {
		b.suspect = true
	}
}

// decoded notes whether v, text goldmark made, might not be valid.
func (b *bodyState) decoded(v []byte) {
	if !utf8.Valid(v) {
		b.suspect = true
	}
}

// reset empties b for the next file, dropping buffers that one large file
// grew beyond what the pool should keep.
func (b *bodyState) reset() {
	b.src, b.suspect, b.repair = nil, false, false
	b.text = trimBuf(b.text)
	b.stack = b.stack[:0]
	b.inl = trimBuf(b.inl)
	b.lit = b.lit[:0]
	b.out = trimBuf(b.out)
	b.row = trimBuf(b.row)
}

func trimBuf(b []byte) []byte {
	if cap(b) > 16*maxPooled {
		return nil
	}
	return b[:0]
}

// parseBody parses the markdown body and fills Text, Headings, Links, the
// inline Tags and, when the frontmatter gave none, the Title; it also
// leaves the word units and sections for chunk.
func (p *parser) parseBody(src []byte) {
	src, defused := defuse(src)
	if defused {
		p.warn("markdown nested too deeply or too dense with markup in places; those parts were indexed as literal text")
	}
	if p.ctx == nil {
		p.ctx = newParseContext()
		p.ctxOpt = gparser.WithContext(p.ctx)
	}
	root := mdParser.Parse(text.NewReader(src), p.ctxOpt)
	p.walkBody(root, src)
}

// walkBody fills the Doc from the blocks of root, parsed from src, which
// is valid UTF-8.
//
// Every block's text must be valid UTF-8 too. It is made of pieces of src
// and of text goldmark decoded (escapes, entities), and as long as no
// piece of src starts or ends inside a character it is valid; goldmark
// cuts only at ASCII characters, so the walk just notes whether a piece
// might do otherwise (b.suspect) instead of checking every block, which
// cost a few percent of Parse on a corpus of CJK text. If one might, the
// text is checked, and if it is not valid (which needs a cut character:
// blocks are joined by '\n') the walk is done again, checking and
// repairing each block as it is added.
func (p *parser) walkBody(root ast.Node, src []byte) {
	b := &p.body
	b.src = src
	d := p.doc
	title, tags := d.Title, len(d.Tags)
	// Links the frontmatter or page properties gave come before the body's.
	links, mentions := slices.Clone(d.Links), cloneMentions(d.Mentions)
	walk(root, func(n ast.Node) bool { return p.block(b, n) })
	if b.suspect && !utf8.Valid(b.text) {
		for _, t := range d.Tags[tags:] {
			delete(p.tagSeen, t)
		}
		d.Tags = d.Tags[:tags:tags]
		if tags == 0 {
			d.Tags = nil
		}
		d.Title, d.Headings, d.Links, d.Mentions = title, nil, links, mentions
		p.linkSeen, p.blockLinks = nil, p.blockLinks[:0]
		for i, c := range links {
			if p.linkSeen == nil {
				p.linkSeen = make(map[string]int)
			}
			p.linkSeen[c] = i
		}
		p.units, p.sections = p.units[:0], p.sections[:0]
		b.text, b.stack = b.text[:0], b.stack[:0]
		b.repair = true
		walk(root, func(n ast.Node) bool { return p.block(b, n) })
	}
	d.Text = string(b.text)
}

func cloneMentions(ms []Mention) []Mention {
	if ms == nil {
		return nil
	}
	out := make([]Mention, len(ms))
	for i, m := range ms {
		out[i] = Mention{Concept: m.Concept, Count: m.Count, Sections: slices.Clone(m.Sections)}
	}
	return out
}

// walk visits root and its descendants in document order, descending into
// a node only when enter returns true. It loops instead of recursing so
// that pathological nesting cannot exhaust the stack.
func walk(root ast.Node, enter func(ast.Node) bool) {
	n := root
	for {
		if enter(n) && n.FirstChild() != nil {
			n = n.FirstChild()
			continue
		}
		for n != root && n.NextSibling() == nil {
			n = n.Parent()
		}
		if n == root {
			return
		}
		n = n.NextSibling()
	}
}

// block handles one block node and says whether to descend into it.
// Containers (document, lists, quotes, tables) are descended into; leaves
// add their text.
func (p *parser) block(b *bodyState, n ast.Node) bool {
	switch n := n.(type) {
	case *ast.Heading:
		p.addBlock(b, p.leafText(b, n), n.Level)
	case *ast.Paragraph, *ast.TextBlock:
		p.addBlock(b, p.leafText(b, n), 0)
	case *ast.CodeBlock, *ast.FencedCodeBlock:
		p.addBlock(b, b.codeText(n), 0)
	case *east.TableHeader, *east.TableRow:
		p.addBlock(b, p.rowText(b, n), 0)
	case *ast.HTMLBlock, *ast.ThematicBreak:
		// Raw HTML is markup, not prose; a rule has no text.
	default:
		return true
	}
	if len(p.blockLinks) > 0 {
		section := ""
		if len(b.stack) > 0 {
			section = p.sections[b.stack[len(b.stack)-1]].title
		}
		p.placeLinks(section)
	}
	return false
}

// addBlock appends one block's text to Doc.Text, cuts it into word units,
// and keeps the heading path up to date.
func (p *parser) addBlock(b *bodyState, s []byte, level int) {
	s = bytes.TrimSpace(s)
	if len(s) == 0 {
		return
	}
	if b.repair && !utf8.Valid(s) {
		s = bytes.ToValidUTF8(s, []byte("\uFFFD"))
	}
	if level > 0 {
		title := collapseSpace(s)
		p.doc.Headings = append(p.doc.Headings, title)
		if level == 1 && p.doc.Title == "" {
			p.doc.Title = title
		}
		for len(b.stack) > 0 && p.sections[b.stack[len(b.stack)-1]].level >= level {
			b.stack = b.stack[:len(b.stack)-1]
		}
		parent := -1
		if len(b.stack) > 0 {
			parent = b.stack[len(b.stack)-1]
		}
		b.stack = append(b.stack, len(p.sections))
		p.sections = append(p.sections, section{unit: len(p.units), parent: parent, level: level, title: title})
	}
	if len(b.text) > 0 {
		b.text = append(b.text, '\n')
	}
	p.units = appendUnits(p.units, s, len(b.text))
	b.text = append(b.text, s...)
}

// collapseSpace is strings.Join(strings.Fields(string(s)), " ") with one
// allocation, and without the join when s is already a single line of
// words separated by single spaces (nearly every heading).
func collapseSpace(s []byte) string {
	prevSpace := true // a leading space is not clean
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			space := asciiSpace[c]
			if space && (c != ' ' || prevSpace) {
				return strings.Join(strings.Fields(string(s)), " ")
			}
			prevSpace = space
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if unicode.IsSpace(r) {
			return strings.Join(strings.Fields(string(s)), " ")
		}
		prevSpace = false
		i += size
	}
	if prevSpace { // empty, or a trailing space
		return strings.Join(strings.Fields(string(s)), " ")
	}
	return string(s)
}

// asciiSpace is the ASCII white space of strings.Fields.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// codeText is a code block's content, kept verbatim: code is searchable
// text in a memory, identifiers especially.
func (b *bodyState) codeText(n ast.Node) []byte {
	b.out = b.out[:0]
	lines := n.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		b.segment(seg)
		b.out = append(b.out, seg.Value(b.src)...)
	}
	return bytes.TrimRight(b.out, " \t\n")
}

// rowText is a table row's cells, separated by tabs so that the plain
// text stays readable as a row.
func (p *parser) rowText(b *bodyState, row ast.Node) []byte {
	b.row = b.row[:0]
	for c := row.FirstChild(); c != nil; c = c.NextSibling() {
		cell := bytes.TrimSpace(p.leafText(b, c))
		if len(cell) == 0 {
			continue
		}
		if len(b.row) > 0 {
			b.row = append(b.row, '\t')
		}
		b.row = append(b.row, cell...)
	}
	return b.row
}

// leafText is the plain text of a leaf block's inline content, with
// WikiLinks (wikiNode) replaced by their display text and recorded in
// Links, and inline #tags recorded in Tags. Code spans and autolinks are copied as
// they are: a "[[x]]" or "#x" inside them is an example, not a link. The
// result is valid until the next call.
func (p *parser) leafText(b *bodyState, n ast.Node) []byte {
	b.inl, b.lit = b.inl[:0], b.lit[:0]
	// walk(n, ...) without the indirect call per inline node.
	for c := n.FirstChild(); c != nil; {
		if p.inline(b, c) && c.FirstChild() != nil {
			c = c.FirstChild()
			continue
		}
		for c != n && c.NextSibling() == nil {
			c = c.Parent()
		}
		if c == n {
			break
		}
		c = c.NextSibling()
	}

	b.out = b.out[:0]
	prose := 0
	for _, r := range b.lit {
		b.out = p.writeTags(b.out, b.inl[prose:r[0]])
		b.out = append(b.out, b.inl[r[0]:r[1]]...)
		prose = r[1]
	}
	return p.writeTags(b.out, b.inl[prose:])
}

// inline handles one inline node and says whether to descend into it.
func (p *parser) inline(b *bodyState, n ast.Node) bool {
	switch n := n.(type) {
	case *ast.Text:
		b.segment(n.Segment)
		v := n.Segment.Value(b.src)
		if !n.IsRaw() {
			v = unescape(v)
		}
		b.inl = append(b.inl, v...)
		switch {
		case n.HardLineBreak():
			b.inl = append(b.inl, '\n')
		case n.SoftLineBreak():
			b.inl = append(b.inl, ' ')
		}
	case *ast.String:
		b.decoded(n.Value)
		if n.IsCode() {
			b.literal(n.Value)
		} else {
			b.inl = append(b.inl, n.Value...)
		}
	case *ast.CodeSpan:
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch c := c.(type) {
			case *ast.Text:
				b.segment(c.Segment)
				b.literal(c.Segment.Value(b.src))
				if c.SoftLineBreak() || c.HardLineBreak() {
					b.literal([]byte{' '})
				}
			case *ast.String:
				b.decoded(c.Value)
				b.literal(c.Value)
			}
		}
	case *ast.AutoLink:
		label := n.Label(b.src)
		b.decoded(label)
		b.literal(label)
	case *wikiNode:
		p.wikiLink(b, n)
	case *ast.Link:
		// Logseq's "[label]([[page]])" links to the page.
		if d := n.Destination; len(d) > 4 && bytes.HasPrefix(d, openLink) && bytes.HasSuffix(d, closeLink) {
			if l, ok := parseWikiLink(string(d[2:len(d)-2]), p.flavor); ok && !bytes.ContainsAny(d[2:len(d)-2], "[]") {
				p.addLink(l.concept)
			}
		}
		return true
	case *ast.RawHTML:
		// Inline HTML tags are markup; the text between them is kept.
	case *east.TaskCheckBox:
	default:
		// Emphasis, links, images (their children are the alt text),
		// strikethrough and anything unknown: keep the text inside.
		return true
	}
	return false
}

// wikiLink adds a WikiLink's display text, which is the link's and not
// prose (a '#' in a label is not a tag), and records its concept.
func (p *parser) wikiLink(b *bodyState, n *wikiNode) {
	b.segment(n.inner)
	inner := string(n.inner.Value(b.src))
	l, ok := parseWikiLink(inner, p.flavor)
	if !ok {
		return
	}
	if n.tag && p.flavor == FlavorLogseq && len(b.inl) > 0 && b.inl[len(b.inl)-1] == '#' {
		// Logseq's "#[[multi word]]": a tag, shown as the name.
		b.inl = b.inl[:len(b.inl)-1]
		name, _, _ := strings.Cut(inner, "|")
		p.addTag(name)
	}
	b.literal([]byte(l.display))
	p.addLink(l.concept)
}

// literal appends text that is not scanned for links and tags.
func (b *bodyState) literal(v []byte) {
	start := len(b.inl)
	b.inl = append(b.inl, v...)
	if k := len(b.lit); k > 0 && b.lit[k-1][1] == start {
		b.lit[k-1][1] = len(b.inl)
		return
	}
	b.lit = append(b.lit, [2]int{start, len(b.inl)})
}

// unescape resolves backslash escapes and character references, which
// goldmark leaves in text segments for the renderer to handle.
func unescape(v []byte) []byte {
	if bytes.IndexByte(v, '\\') < 0 && bytes.IndexByte(v, '&') < 0 {
		return v
	}
	v = util.UnescapePunctuations(v)
	v = util.ResolveNumericReferences(v)
	return util.ResolveEntityNames(v)
}
