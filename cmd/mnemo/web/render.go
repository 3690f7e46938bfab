package web

import (
	"bytes"
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"mnemo/markdown"
)

// md renders memories. goldmark's HTML renderer is left at its safe
// default: raw HTML in a memory is omitted (a comment stands in its place)
// and links or images whose URL is dangerous (javascript:, vbscript:,
// file:, data: other than images) get an empty destination. WikiLinks
// become links to the page's own routes.
var md = goldmark.New(
	goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.TaskList),
	goldmark.WithParserOptions(parser.WithInlineParsers(util.Prioritized(wikiLinks{}, 199))),
)

// render turns a memory's body into HTML, its links pointing into the page:
// a WikiLink or a relative link to a memory opens that memory; a WikiLink
// to a concept no memory stands for opens the concept in the graph.
func render(body string, resolve func(string) (string, error)) (string, error) {
	src := []byte(body)
	pc := parser.NewContext()
	wiki := map[*ast.Link]bool{}
	pc.Set(wikiKey, wiki)
	doc := md.Parser().Parse(text.NewReader(src), parser.WithContext(pc))
	var images []*ast.Image
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		switch n := n.(type) {
		case *ast.Link:
			if entering {
				n.Destination = []byte(route(string(n.Destination), wiki[n], resolve))
			}
		case *ast.Image:
			if entering && !bytes.HasPrefix(bytes.ToLower(n.Destination), []byte("data:image/")) {
				images = append(images, n)
			}
		}
		return ast.WalkContinue, nil
	})
	for _, img := range images {
		imageAsLink(img)
	}
	var buf bytes.Buffer
	if err := md.Renderer().Render(&buf, src, doc); err != nil {
		return "", fmt.Errorf("render markdown: %w", err)
	}
	return buf.String(), nil
}

// imageAsLink replaces an image by a link to it: the page loads nothing
// a memory names (a remote image is a beacon that tells its server the
// memory was read; the vault's own files are not served).
func imageAsLink(img *ast.Image) {
	l := ast.NewLink()
	l.Destination = img.Destination
	l.AppendChild(l, ast.NewString([]byte("🖼 ")))
	for c := img.FirstChild(); c != nil; {
		next := c.NextSibling()
		l.AppendChild(l, c)
		c = next
	}
	img.Parent().ReplaceChild(img.Parent(), img, l)
}

// wikiKey holds, in a parse's context, the set of links the WikiLink
// parser made: their destination is a name to resolve, not a URL.
var wikiKey = parser.NewContextKey()

// route is where a link in a memory goes on the page. Links with a scheme
// or to an anchor stay as written (goldmark drops dangerous ones).
func route(dest string, wiki bool, resolve func(string) (string, error)) string {
	if wiki {
		target, _, _ := strings.Cut(dest, "#")
		if p, err := resolve(target); err == nil {
			return "#/memory/" + url.PathEscape(p)
		}
		if p, err := resolve(markdown.NormalizeConcept(target)); err == nil {
			return "#/memory/" + url.PathEscape(p)
		}
		return "#/graph/" + url.PathEscape(markdown.NormalizeConcept(target))
	}
	u, err := url.Parse(dest)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Path == "" || strings.HasPrefix(dest, "#") {
		return dest
	}
	if p, err := resolve(path.Clean(strings.TrimPrefix(u.Path, "/"))); err == nil {
		return "#/memory/" + url.PathEscape(p)
	}
	return dest
}

// wikiLinks parses [[target]], [[target|label]] and ![[target]] into
// links whose destination is the target, recorded under wikiKey.
type wikiLinks struct{}

func (wikiLinks) Trigger() []byte { return []byte{'[', '!'} }

func (wikiLinks) Parse(_ ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, _ := block.PeekLine()
	open := 2
	if bytes.HasPrefix(line, []byte("![[")) {
		open = 3
	} else if !bytes.HasPrefix(line, []byte("[[")) {
		return nil
	}
	end := bytes.Index(line[open:], []byte("]]"))
	if end <= 0 {
		return nil
	}
	inner := string(line[open : open+end])
	if strings.ContainsAny(inner, "[]\n") {
		return nil
	}
	target, label, hasLabel := strings.Cut(strings.ReplaceAll(inner, `\|`, "|"), "|")
	target, label = strings.TrimSpace(target), strings.TrimSpace(label)
	if !hasLabel || label == "" {
		label = target
	}
	if target == "" || strings.HasPrefix(target, "#") {
		return nil
	}
	block.Advance(open + end + 2)
	l := ast.NewLink()
	l.Destination = []byte(target)
	l.AppendChild(l, ast.NewString([]byte(label)))
	if set, ok := pc.Get(wikiKey).(map[*ast.Link]bool); ok {
		set[l] = true
	}
	return l
}
