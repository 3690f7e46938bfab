package markdown

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	gparser "github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// mdParser is built once: goldmark's parser is immutable configuration
// (it initialises itself under a sync.Once) and safe for concurrent use, and
// building it per file would cost more than parsing a typical memory.
// Tables, strikethrough and task lists are the GFM parts memories use; task
// list checkboxes would otherwise leave "[ ]" in the plain text.
var mdParser gparser.Parser = goldmark.New(goldmark.WithExtensions(
	extension.Table,
	extension.Strikethrough,
	extension.TaskList,
)).Parser()

// span is one word of the plain text, as byte offsets into Doc.Text.
type span struct{ start, end int }

// section marks where a heading's text starts, in words, and the heading
// path (H1 > H2 > ...) in force from there on.
type section struct {
	unit int
	path []string
}

type heading struct {
	level int
	text  string
}

// bodyState is what parseBody keeps while it walks the blocks. Its
// buffers are reused from block to block.
type bodyState struct {
	src   []byte
	text  []byte    // Doc.Text being built
	stack []heading // open headings, outermost first
	inl   []byte    // inline text of the current leaf block
	lit   [][2]int  // ranges of inl that are code or URLs: not scanned for links and tags
	out   []byte    // the current leaf block's finished text
	row   []byte    // the current table row's text
}

// parseBody parses the markdown body and fills Text, Headings, Links, the
// inline Tags and, when the frontmatter gave none, the Title; it also
// leaves the word units and sections for chunk.
func (p *parser) parseBody(src []byte) {
	src, defused := defuse(src)
	if defused {
		p.warn("markdown nested too deeply or too dense with markup in places; those parts were indexed as literal text")
	}
	root := mdParser.Parse(text.NewReader(src))
	b := &bodyState{src: src, text: make([]byte, 0, len(src))}
	p.units = make([]span, 0, len(src)/6+8)
	walk(root, func(n ast.Node) bool { return p.block(b, n) })
	p.doc.Text = string(b.text)
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
	defer func() {
		if len(p.blockLinks) > 0 {
			section := ""
			if len(b.stack) > 0 {
				section = b.stack[len(b.stack)-1].text
			}
			p.placeLinks(section)
		}
	}()
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
	return false
}

// addBlock appends one block's text to Doc.Text, cuts it into word units,
// and keeps the heading path up to date.
func (p *parser) addBlock(b *bodyState, s []byte, level int) {
	s = bytes.TrimSpace(s)
	if len(s) == 0 {
		return
	}
	if !utf8.Valid(s) {
		// Cannot happen with valid input and goldmark's segment
		// boundaries, but the promise of valid UTF-8 is cheap to keep.
		s = bytes.ToValidUTF8(s, []byte("\uFFFD"))
	}
	if level > 0 {
		title := strings.Join(strings.Fields(string(s)), " ")
		p.doc.Headings = append(p.doc.Headings, title)
		if level == 1 && p.doc.Title == "" {
			p.doc.Title = title
		}
		for len(b.stack) > 0 && b.stack[len(b.stack)-1].level >= level {
			b.stack = b.stack[:len(b.stack)-1]
		}
		b.stack = append(b.stack, heading{level, title})
		path := make([]string, len(b.stack))
		for i, h := range b.stack {
			path[i] = h.text
		}
		p.sections = append(p.sections, section{unit: len(p.units), path: path})
	}
	if len(b.text) > 0 {
		b.text = append(b.text, '\n')
	}
	p.units = appendUnits(p.units, s, len(b.text))
	b.text = append(b.text, s...)
}

// codeText is a code block's content, kept verbatim: code is searchable
// text in a memory, identifiers especially.
func (b *bodyState) codeText(n ast.Node) []byte {
	b.out = b.out[:0]
	lines := n.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
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
// WikiLinks replaced by their display text and recorded in Links, and
// inline #tags recorded in Tags. Code spans and autolinks are copied as
// they are: a "[[x]]" or "#x" inside them is an example, not a link. The
// result is valid until the next call.
func (p *parser) leafText(b *bodyState, n ast.Node) []byte {
	b.inl, b.lit = b.inl[:0], b.lit[:0]
	walk(n, func(c ast.Node) bool {
		if c == n {
			return true
		}
		return p.inline(b, c)
	})

	b.out = b.out[:0]
	prose := 0
	for _, r := range b.lit {
		b.out = p.scanProse(b.out, b.inl[prose:r[0]])
		b.out = append(b.out, b.inl[r[0]:r[1]]...)
		prose = r[1]
	}
	return p.scanProse(b.out, b.inl[prose:])
}

// inline handles one inline node and says whether to descend into it.
func (p *parser) inline(b *bodyState, n ast.Node) bool {
	switch n := n.(type) {
	case *ast.Text:
		v := n.Value(b.src)
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
		if n.IsCode() {
			b.literal(n.Value)
		} else {
			b.inl = append(b.inl, n.Value...)
		}
	case *ast.CodeSpan:
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch c := c.(type) {
			case *ast.Text:
				b.literal(c.Value(b.src))
				if c.SoftLineBreak() || c.HardLineBreak() {
					b.literal([]byte{' '})
				}
			case *ast.String:
				b.literal(c.Value)
			}
		}
	case *ast.AutoLink:
		b.literal(n.Label(b.src))
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
