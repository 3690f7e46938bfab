package markdown

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// TestSplitCharacterRepaired covers walkBody's repair pass. goldmark never
// cuts a text segment inside a character, so no markdown input reaches
// it; this tree is built by hand with a heading that ends one byte into
// "é" and a paragraph that starts with the rest of it. The result must be
// what checking every block from the start gives: each block repaired on
// its own, and nothing from the abandoned first walk left behind (tags,
// links, headings, the title, word units).
func TestSplitCharacterRepaired(t *testing.T) {
	src := []byte("Head é\nsee [[Some Link]] #tag é")
	cut := bytes.Index(src, []byte("é")) + 1
	root := ast.NewDocument()
	h := ast.NewHeading(1)
	h.AppendChild(h, ast.NewTextSegment(text.NewSegment(0, cut)))
	para := ast.NewParagraph()
	open := bytes.Index(src, []byte("[["))
	closing := bytes.Index(src, []byte("]]"))
	para.AppendChild(para, ast.NewTextSegment(text.NewSegment(cut, open)))
	para.AppendChild(para, &wikiNode{inner: text.NewSegment(open+2, closing)})
	para.AppendChild(para, ast.NewTextSegment(text.NewSegment(closing+2, len(src))))
	root.AppendChild(root, h)
	root.AppendChild(root, para)

	walkBody := func(repair bool) (*Doc, []span) {
		d := &Doc{Tags: []string{"front"}}
		p := &parser{doc: d, tagSeen: map[string]struct{}{"front": {}}}
		p.body.repair = repair
		p.walkBody(root, src)
		return d, p.units
	}
	got, gotUnits := walkBody(false)
	want, wantUnits := walkBody(true)
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotUnits, wantUnits) {
		t.Errorf("walk with a repair pass gave\n%#v\n%v\nchecking every block gives\n%#v\n%v", got, gotUnits, want, wantUnits)
	}
	if wantText := "Head \uFFFD\n\uFFFD\nsee Some Link #tag é"; got.Text != wantText {
		t.Errorf("Text = %q, want %q", got.Text, wantText)
	}
	if got.Title != "Head \uFFFD" || strings.Join(got.Tags, ",") != "front,tag" || len(got.Links) != 1 {
		t.Errorf("Title %q, Tags %q, Links %q", got.Title, got.Tags, got.Links)
	}
}

// TestNothingCarriesOver parses files one after another, as a sync does
// with pooled parsers: a link reference, a tag, a link or a heading of one
// file must not show in the next, nor goldmark's note that an HTML comment
// is never closed (which holds for positions, not for a file).
func TestNothingCarriesOver(t *testing.T) {
	unclosed := strings.Repeat("x", 200) + " <!-- never closed\n"
	closed := "a <!-- c --> b\n"
	for range 3 {
		if d := mustParse(t, "1.md", unclosed, Options{}); !strings.HasSuffix(d.Text, "<!-- never closed") {
			t.Fatalf("unclosed comment: Text = %q", d.Text)
		}
		if d := mustParse(t, "2.md", closed, Options{}); d.Text != "a  b" {
			t.Fatalf("comment after an unclosed one in another file: Text = %q, want %q", d.Text, "a  b")
		}
	}

	first := "# First\n\n[a]: https://example.com\n\n[a] and [[Link]] #tag\n"
	second := "[a] again [[Other]] #other\n"
	for range 3 {
		d := mustParse(t, "1.md", first, Options{})
		if d.Text != "First\na and Link #tag" {
			t.Fatalf("first Text = %q", d.Text)
		}
		d = mustParse(t, "2.md", second, Options{})
		want := &Doc{
			Title: "2", Concept: "2", Tags: []string{"other"}, Body: second, Text: "[a] again Other #other",
			Links: []string{"other"}, Mentions: []Mention{{Concept: "other", Count: 1}},
			Chunks: []Chunk{{Text: "[a] again Other #other"}},
		}
		if !reflect.DeepEqual(d, want) {
			t.Fatalf("second file gave\n%#v\nwant\n%#v", d, want)
		}
	}
}
