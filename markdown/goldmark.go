package markdown

import (
	"fmt"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	gparser "github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// mdParser is built once: goldmark's parser is immutable configuration
// (it initialises itself under a sync.Once) and safe for concurrent use, and
// building it per file would cost more than parsing a typical memory.
// It is goldmark's default parser (every CommonMark block and inline
// parser: each one changes the plain text of some input) with its link
// reference transformer behind a cheap test, WikiLinks (wikilink.go),
// plus the GFM parts memories use: tables, strikethrough and task lists (whose checkboxes would
// otherwise leave "[ ]" in the plain text).
var mdParser gparser.Parser = goldmark.New(
	goldmark.WithParser(gparser.NewParser(
		gparser.WithBlockParsers(gparser.DefaultBlockParsers()...),
		gparser.WithInlineParsers(append(gparser.DefaultInlineParsers(), util.Prioritized(wikiParser{}, wikiPriority))...),
		gparser.WithParagraphTransformers(util.Prioritized(linkRefs{}, 100)),
	)),
	goldmark.WithExtensions(
		extension.Table,
		extension.Strikethrough,
		extension.TaskList,
	),
).Parser()

// linkRefs is goldmark's LinkReferenceParagraphTransformer (at its
// default priority), called only for paragraphs that can start with a
// link reference definition ("[label]: url"). goldmark runs it on every
// paragraph and list item, and it allocates a block reader each time to
// find, nearly always, that the first character is not '['.
type linkRefs struct{}

func (linkRefs) Transform(node *ast.Paragraph, reader text.Reader, pc gparser.Context) {
	// The transformer skips white space (across lines) and gives up
	// unless what follows is '['. Segment padding and forced newlines
	// only add white space, so the source bytes tell.
	src := reader.Source()
	lines := node.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		for _, c := range src[seg.Start:seg.Stop] {
			if util.IsSpace(c) {
				continue
			}
			if c == '[' {
				gparser.LinkReferenceParagraphTransformer.Transform(node, reader, pc)
			}
			return
		}
	}
	gparser.LinkReferenceParagraphTransformer.Transform(node, reader, pc)
}

// parseContext is a goldmark parser context that can be reset and so
// reused from file to file (goldmark's own allocates a store, a reference
// map and an id set per file). goldmark's context still keeps the
// delimiter list, block offsets and open blocks, which every parse leaves
// empty or sets before use; the store is goldmark's too, emptied key by
// key; link references live here.
type parseContext struct {
	gparser.Context
	refs map[string]gparser.Reference
	ids  gparser.IDs
}

func newParseContext() *parseContext {
	return &parseContext{Context: gparser.NewContext(), refs: make(map[string]gparser.Reference)}
}

// reset makes c as good as new, or reports that it cannot: a parse that
// left delimiters behind (none does) leaves c to the garbage collector.
func (c *parseContext) reset() bool {
	if c.FirstDelimiter() != nil || c.LastDelimiter() != nil {
		return false
	}
	for k := range gparser.ContextKeyMax + 1 {
		c.Set(k, nil)
	}
	c.SetBlockOffset(-1)
	c.SetBlockIndent(-1)
	c.SetOpenedBlocks(nil)
	if len(c.refs) > maxPooled {
		c.refs = make(map[string]gparser.Reference)
	}
	clear(c.refs)
	c.ids = nil
	return true
}

func (c *parseContext) AddReference(ref gparser.Reference) {
	key := util.ToLinkReference(ref.Label())
	if _, ok := c.refs[key]; !ok {
		c.refs[key] = ref
	}
}

func (c *parseContext) Reference(label string) (gparser.Reference, bool) {
	ref, ok := c.refs[label]
	return ref, ok
}

func (c *parseContext) References() []gparser.Reference {
	refs := make([]gparser.Reference, 0, len(c.refs))
	for _, r := range c.refs {
		refs = append(refs, r)
	}
	return refs
}

// IDs is a fresh id set per file, made only if asked for: only automatic
// heading ids and attributes, both off, use one.
func (c *parseContext) IDs() gparser.IDs {
	if c.ids == nil {
		c.ids = gparser.NewContext().IDs()
	}
	return c.ids
}

func (c *parseContext) String() string {
	refs := make([]string, 0, len(c.refs))
	for _, r := range c.refs {
		refs = append(refs, r.String())
	}
	return fmt.Sprintf("Context{%v, Refs:%s}", c.Context, strings.Join(refs, ","))
}
