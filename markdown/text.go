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

// bodyState is what parseBody keeps while it walks the blocks.
type bodyState struct {
	src     []byte
	text    strings.Builder // Doc.Text being built
	stack   []heading       // open headings, outermost first
	inl     []byte          // inline text of the current leaf block
	literal []bool          // per byte of inl: code or URL text, not scanned for links and tags
	out     strings.Builder // scratch for finishing a leaf block
}

// parseBody parses the markdown body and fills Text, Headings, Links, the
// inline Tags and, when the frontmatter gave none, the Title; it also
// leaves the word units and sections for chunk.
func (p *parser) parseBody(src []byte) {
	root := mdParser.Parse(text.NewReader(src))
	b := &bodyState{src: src}
	walk(root, func(n ast.Node) bool { return p.block(b, n) })
	p.doc.Text = b.text.String()
}

// walk visits root and its descendants in document order, descending into
// a node only when enter returns true. It loops instead of recursing so
// that pathological nesting (a blockquote 100,000 levels deep) cannot
// exhaust the stack.
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
		p.addBlock(b, codeText(b.src, n), 0)
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
func (p *parser) addBlock(b *bodyState, s string, level int) {
	s = strings.TrimSpace(s)
	if s == "" {
		return
	}
	if !utf8.ValidString(s) {
		// Cannot happen with valid input and goldmark's segment
		// boundaries, but the promise of valid UTF-8 is cheap to keep.
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if level > 0 {
		title := strings.Join(strings.Fields(s), " ")
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
	if b.text.Len() > 0 {
		b.text.WriteByte('\n')
	}
	p.units = appendUnits(p.units, s, b.text.Len())
	b.text.WriteString(s)
}

// codeText is a code block's content, kept verbatim: code is searchable
// text in a memory, identifiers especially.
func codeText(src []byte, n ast.Node) string {
	lines := n.Lines()
	var buf bytes.Buffer
	for i := range lines.Len() {
		seg := lines.At(i)
		buf.Write(seg.Value(src))
	}
	return strings.TrimRight(buf.String(), " \t\n")
}

// rowText is a table row's cells, separated by tabs so that the plain
// text stays readable as a row.
func (p *parser) rowText(b *bodyState, row ast.Node) string {
	var cells []string
	for c := row.FirstChild(); c != nil; c = c.NextSibling() {
		if s := strings.TrimSpace(p.leafText(b, c)); s != "" {
			cells = append(cells, s)
		}
	}
	return strings.Join(cells, "\t")
}

// leafText is the plain text of a leaf block's inline content, with
// WikiLinks replaced by their display text and recorded in Links, and
// inline #tags recorded in Tags. Code spans and autolinks are copied as
// they are: a "[[x]]" or "#x" inside them is an example, not a link.
func (p *parser) leafText(b *bodyState, n ast.Node) string {
	b.inl, b.literal = b.inl[:0], b.literal[:0]
	walk(n, func(c ast.Node) bool {
		if c == n {
			return true
		}
		return p.inline(b, c)
	})

	b.out.Reset()
	for i := 0; i < len(b.inl); {
		j := i + 1
		for j < len(b.inl) && b.literal[j] == b.literal[i] {
			j++
		}
		if b.literal[i] {
			b.out.Write(b.inl[i:j])
		} else {
			p.scanProse(&b.out, string(b.inl[i:j]))
		}
		i = j
	}
	return b.out.String()
}

// inline handles one inline node and says whether to descend into it.
func (p *parser) inline(b *bodyState, n ast.Node) bool {
	switch n := n.(type) {
	case *ast.Text:
		v := n.Value(b.src)
		if !n.IsRaw() {
			v = unescape(v)
		}
		b.add(v, false)
		switch {
		case n.HardLineBreak():
			b.add([]byte{'\n'}, false)
		case n.SoftLineBreak():
			b.add([]byte{' '}, false)
		}
	case *ast.String:
		b.add(n.Value, n.IsCode())
	case *ast.CodeSpan:
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch c := c.(type) {
			case *ast.Text:
				b.add(c.Value(b.src), true)
				if c.SoftLineBreak() || c.HardLineBreak() {
					b.add([]byte{' '}, true)
				}
			case *ast.String:
				b.add(c.Value, true)
			}
		}
	case *ast.AutoLink:
		b.add(n.Label(b.src), true)
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

func (b *bodyState) add(v []byte, literal bool) {
	b.inl = append(b.inl, v...)
	for range v {
		b.literal = append(b.literal, literal)
	}
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
