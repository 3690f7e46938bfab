package markdown

import (
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func mustParse(t *testing.T, name, in string, opt Options) *Doc {
	t.Helper()
	d, err := Parse(name, []byte(in), opt)
	if err != nil {
		t.Fatalf("Parse(%q): %v", name, err)
	}
	return d
}

func TestTitle(t *testing.T) {
	tests := []struct {
		name, file, in, want string
	}{
		{"frontmatter wins", "a.md", "---\ntitle: From YAML\n---\n# From H1\n", "From YAML"},
		{"first H1", "a.md", "Intro\n\n## Sub\n\n# The *Real* Title\n\n# Second\n", "The Real Title"},
		{"setext H1", "a.md", "Setext Title\n===\n\ntext", "Setext Title"},
		{"blank frontmatter title falls through", "a.md", "---\ntitle: \"  \"\n---\n# H\n", "H"},
		{"file name kept as written", "journal/2024-01-05-standup.md", "no headings here", "2024-01-05-standup"},
		{"upper-case extension", "Notes/Idea.MD", "", "Idea"},
		{"backslash path", `win\dir\note.md`, "", "note"},
		{"no name at all", "", "", "untitled"},
		{"only extension", "dir/.md", "", "untitled"},
		{"multi-line YAML title is one line", "a.md", "---\ntitle: |\n  two\n  lines\n---\n", "two lines"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustParse(t, tt.file, tt.in, Options{}).Title; got != tt.want {
				t.Errorf("Title = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPlainText(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"emphasis and strikethrough", "Some *em*, **strong**, ~~old~~ text.", "Some em, strong, old text."},
		{"links keep text, images keep alt", "See [the docs](https://x.io/a) and ![a diagram](d.png).", "See the docs and a diagram."},
		{"autolink keeps the URL", "Go to <https://x.io/p#frag>.", "Go to https://x.io/p#frag."},
		{"inline code kept", "Run `go test ./...` now.", "Run go test ./... now."},
		{"fenced code kept verbatim", "Before\n\n```go\nfunc f() {\n\treturn\n}\n```\n\nAfter", "Before\nfunc f() {\n\treturn\n}\nAfter"},
		{"indented code kept", "Text\n\n    x := 1\n      y := 2\n", "Text\nx := 1\n  y := 2"},
		{"inline HTML dropped, text kept", "a <span class=\"x\">b</span> c", "a b c"},
		{"HTML block dropped", "<div>\nhidden\n</div>\n\nshown", "shown"},
		{"HTML comment dropped", "<!-- note to self -->\n\nshown", "shown"},
		{"headings, lists, quotes", "# Title\n\n- one\n- two\n  - nested\n\n> quoted\n> more\n\n1. first", "Title\none\ntwo\nnested\nquoted more\nfirst"},
		{"table cells", "| a | b |\n|---|---|\n| 1 | **2** |\n|  | 3 |\n", "a\tb\n1\t2\n3"},
		{"task list", "- [ ] open\n- [x] done", "open\ndone"},
		{"link reference definitions are not text", "[a]: https://x.io\n\nSee [a] and [b][a].\n\n  [c]:\n  /c 'title'\n\n- [d]: /d\n\nand [c], [d]", "See a and b.\nand c, d"},
		{"escapes and entities", `\*not em\* &amp; &copy; &#65;`, "*not em* & © A"},
		{"soft and hard breaks", "one\ntwo  \nthree", "one two\nthree"},
		{"thematic break has no text", "a\n\n---\n\nb", "a\nb"},
		{"empty body", "", ""},
		{"only whitespace", "  \n\n\t\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustParse(t, "n.md", tt.in, Options{}).Text; got != tt.want {
				t.Errorf("Text = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestHeadings(t *testing.T) {
	d := mustParse(t, "n.md", "# One\n\ntext\n\n## Two [[Linked Note|alias]]\n\n#\n\n### Three `code`\n", Options{})
	want := []string{"One", "Two alias", "Three code"}
	if !reflect.DeepEqual(d.Headings, want) {
		t.Errorf("Headings = %q, want %q", d.Headings, want)
	}
}

func TestWikiLinks(t *testing.T) {
	tests := []struct {
		name, in, text string
		links          []string
	}{
		{"plain", "See [[Project Alpha]].", "See Project Alpha.", []string{"project-alpha"}},
		{"alias", "See [[Project Alpha|the project]].", "See the project.", []string{"project-alpha"}},
		{"heading", "See [[Project Alpha#Risks]].", "See Project Alpha.", []string{"project-alpha"}},
		{"heading and alias", "See [[Project Alpha#Risks|risks]].", "See risks.", []string{"project-alpha"}},
		{"same-note heading is not a link", "See [[#Risks]].", "See Risks.", nil},
		{"embed", "![[Diagram Note]]", "Diagram Note", []string{"diagram-note"}},
		{"path and extension", "[[people/Jane_Doe.md]]", "people/Jane_Doe.md", []string{"jane-doe"}},
		{"unique, first appearance order", "[[B]] [[a]] [[b]] [[A|x]]", "B a b x", []string{"b", "a"}},
		{"markup inside is the name", "[[*Starred* Note]]", "*Starred* Note", []string{"*starred*-note"}},
		{"escaped pipe in a table", "| l |\n|---|\n| [[Note\\|alias]] |", "l\nalias", []string{"note"}},
		{"in a heading", "# About [[Topic]]", "About Topic", []string{"topic"}},
		{"in a list and a quote", "- [[One]]\n\n> [[Two]]", "One\nTwo", []string{"one", "two"}},
		{"extra brackets", "[[[Inner]]]", "[Inner]", []string{"inner"}},
		{"empty is text", "[[]] and [[ | ]]", "[[]] and [[ | ]]", nil},
		{"unclosed is text", "[[open and ]", "[[open and ]", nil},
		{"not in a code span", "Write `[[Not A Link]]` to link.", "Write [[Not A Link]] to link.", nil},
		{"not in fenced code", "```\n[[Not A Link]]\n```", "[[Not A Link]]", nil},
		{"not in indented code", "text\n\n    [[Not A Link]]", "text\n[[Not A Link]]", nil},
		{"non-ASCII", "[[Café Décisions]] [[東京 タワー]]", "Café Décisions 東京 タワー", []string{"café-décisions", "東京-タワー"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustParse(t, "n.md", tt.in, Options{})
			if d.Text != tt.text {
				t.Errorf("Text = %q, want %q", d.Text, tt.text)
			}
			if !reflect.DeepEqual(d.Links, tt.links) {
				t.Errorf("Links = %q, want %q", d.Links, tt.links)
			}
		})
	}
}

func TestInlineTags(t *testing.T) {
	tests := []struct {
		name, in string
		tags     []string
	}{
		{"simple, multi-word, nested", "Notes #tag about #Multi-Word and #nested/Deep/tag.", []string{"tag", "multi-word", "nested/deep/tag"}},
		{"start of block and after newline", "#first\n#second", []string{"first", "second"}},
		{"underscore and digits", "#_private #y2k #1984a", []string{"_private", "y2k", "1984a"}},
		{"purely numeric and dates are not tags", "Issue #123 on #2024-01-05", nil},
		{"not inside a code span", "Use `#notatag` here", nil},
		{"not inside fenced code", "```sh\n# comment #notatag\n```", nil},
		{"heading marker is not a tag", "# Heading\n\n## Sub #real", []string{"real"}},
		{"no space is a tag, as in Obsidian", "#nospace", []string{"nospace"}},
		{"URL fragments and C#", "See http://x.io/page#frag, C# and a#b.", nil},
		{"autolink fragment", "<http://x.io/#frag>", nil},
		{"only after white space", "(#paren) x,#comma", nil},
		{"trailing slash trimmed", "#area/ end", []string{"area"}},
		{"non-ASCII", "#café #東京", []string{"café", "東京"}},
		{"lowercased and deduplicated", "#Go #go #GO", []string{"go"}},
		{"inside emphasis and links", "*#em* [#linked](u)", []string{"em", "linked"}},
		{"not in wikilink alias", "[[Note| #alias]]", nil},
		{"merged after frontmatter tags", "---\ntags: [go, search]\n---\n#Search #new", []string{"go", "search", "new"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustParse(t, "n.md", tt.in, Options{})
			if !reflect.DeepEqual(d.Tags, tt.tags) {
				t.Errorf("Tags = %q, want %q", d.Tags, tt.tags)
			}
		})
	}
}

func TestRefusedFiles(t *testing.T) {
	tests := []struct {
		name string
		in   string
		opt  Options
		want error
	}{
		{"NUL byte", "text\x00more", Options{}, ErrBinary},
		{"over the limit", strings.Repeat("a", 11), Options{MaxBytes: 10}, ErrTooLarge},
		{"over the default limit", strings.Repeat("a", DefaultMaxBytes+1), Options{}, ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Parse("dir/bad.md", []byte(tt.in), tt.opt)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if d != nil {
				t.Errorf("Doc = %+v, want nil", d)
			}
			if !strings.Contains(err.Error(), "dir/bad.md") {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
	t.Run("exactly at the limit", func(t *testing.T) {
		if _, err := Parse("ok.md", []byte("0123456789"), Options{MaxBytes: 10}); err != nil {
			t.Errorf("err = %v, want nil", err)
		}
	})
}

func TestInvalidUTF8(t *testing.T) {
	in := "---\ntitle: caf\xe9\ntags: [b\xffad]\n---\n# H\xc3\n\nText \xff[[Li\xfenk]] #t\xe9g\n"
	d := mustParse(t, "bad\xffname.md", in, Options{})
	if len(d.Warnings) != 1 || d.Warnings[0] != "invalid UTF-8 repaired" {
		t.Errorf("Warnings = %q", d.Warnings)
	}
	if d.Title != "caf\uFFFD" {
		t.Errorf("Title = %q", d.Title)
	}
	if !strings.Contains(d.Text, "\uFFFD") {
		t.Errorf("Text %q lost the replacement characters", d.Text)
	}
	checkValidUTF8(t, d)
}

// checkValidUTF8 fails t for any string in d that is not valid UTF-8.
func checkValidUTF8(t testing.TB, d *Doc) {
	t.Helper()
	check := func(what, s string) {
		if !utf8.ValidString(s) {
			t.Errorf("%s is not valid UTF-8: %q", what, s)
		}
	}
	check("Title", d.Title)
	check("Body", d.Body)
	check("Text", d.Text)
	for _, list := range [][]string{d.Tags, d.Headings, d.Links, d.Warnings} {
		for _, s := range list {
			check("list item", s)
		}
	}
	for _, c := range d.Chunks {
		check("chunk text", c.Text)
		for _, h := range c.Headings {
			check("chunk heading", h)
		}
	}
	var walkMeta func(v any)
	walkMeta = func(v any) {
		switch v := v.(type) {
		case string:
			check("meta value", v)
		case map[string]any:
			for k, x := range v {
				check("meta key", k)
				walkMeta(x)
			}
		case []any:
			for _, x := range v {
				walkMeta(x)
			}
		}
	}
	walkMeta(d.Meta)
}

// TestPathological checks that inputs on which goldmark is quadratic are
// defused: each would take minutes at this size without the guard.
func TestPathological(t *testing.T) {
	const n = 1 << 20
	tests := []struct {
		name, in, keep string
	}{
		{"nested quotes", strings.Repeat(">", n) + " deep", "deep"},
		{"nested lists", strings.Repeat("- ", n/2) + "deep", "deep"},
		{"nested ordered lists", strings.Repeat("1) ", n/3) + "deep", "deep"},
		{"empty links", strings.Repeat("[](", n/3), "[]("},
		{"unclosed destinations", strings.Repeat("[a](<b", n/6), "[a](<b"},
		{"link definitions", strings.Repeat("[a]: ", n/5), "[a]:"},
		{"backticks", strings.Repeat("\\``", n/3), "``"},
		{"emphasis soup", strings.Repeat("*a_b*c_d**e_f*g**h*i_j**", n/24), "*a_b*"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustParse(t, "n.md", tt.in, Options{})
			if !strings.Contains(d.Text, tt.keep) {
				t.Errorf("Text lost %q", tt.keep)
			}
			if len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], "literal text") {
				t.Errorf("Warnings = %q", d.Warnings)
			}
		})
	}
	ordinary := []struct{ name, in string }{
		{"long document", string(benchDoc(5000))},
		{"long quoted reply", strings.Repeat(strings.Repeat("> Quoted *line* with a [link](http://x.io) and `code`.\n", 5)+">\n", 400)},
		{"long list of links", strings.Repeat("* [Item **title**](https://example.com/a_b) — `note`\n", 2000)},
		{"long table of links", "| a | b |\n|---|---|\n" + strings.Repeat("| [x](http://x.io/_y_) | ![i](i.png) *z* |\n", 2000)},
		{"nesting at the limit", strings.Repeat("> ", maxNesting) + "deep but fine\n"},
	}
	for _, tt := range ordinary {
		t.Run("left alone: "+tt.name, func(t *testing.T) {
			src := []byte(tt.in)
			if out, changed := defuse(src); changed || &out[0] != &src[0] {
				t.Error("defuse rewrote ordinary markdown")
			}
		})
	}
	t.Run("code is never escaped", func(t *testing.T) {
		code := strings.Repeat("x[i](j) = *p_q[`k`];\n", 4000)
		d := mustParse(t, "n.md", "```c\n"+code+"```\n", Options{})
		if d.Text != strings.TrimSpace(code) {
			t.Errorf("code block changed")
		}
	})
	t.Run("deep nesting by indentation still parses", func(t *testing.T) {
		var b strings.Builder
		for i := range 300 {
			b.WriteString(strings.Repeat(" ", 2*i) + "- item\n")
		}
		d := mustParse(t, "n.md", b.String(), Options{})
		if got := strings.Count(d.Text, "item"); got != 300 {
			t.Errorf("%d items in the text, want 300", got)
		}
	})
}

// TestConcurrentParse runs Parse from many goroutines; with -race it
// checks that the shared goldmark parser holds no per-call state.
func TestConcurrentParse(t *testing.T) {
	// Parsers and their buffers are pooled: different files parsed at
	// once, in different orders, must each come out as parsed alone.
	inputs := []string{
		string(benchDoc(500)),
		string(benchDoc(40)),
		"---\ntags: [x, y]\n---\n# 東京\n\n東京タワーは高い。[[東京 タワー]] #旅行\n\n## 二\n\n" + strings.Repeat("語", 300),
		"plain [[A]] and [[B|bee]] #t\n\n| a | b |\n|---|---|\n| [[C]] | `[[not]]` |\n",
		"",
	}
	want := make([]*Doc, len(inputs))
	for i, in := range inputs {
		want[i] = mustParse(t, "n.md", in, Options{ChunkWords: 20})
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for k := range 20 * len(inputs) {
				i := (g + k*(g+1)) % len(inputs)
				d, err := Parse("n.md", []byte(inputs[i]), Options{ChunkWords: 20})
				if err != nil || !reflect.DeepEqual(d, want[i]) {
					t.Errorf("concurrent Parse of input %d gave a different result", i)
					return
				}
			}
		})
	}
	wg.Wait()
}
