package web

import (
	"errors"
	"strings"
	"testing"
)

func noMemory(string) (string, error) { return "", errors.New("none") }

// TestRenderInert: what a hostile memory writes renders as text or not at
// all: no element that runs script, no handler attribute, no dangerous URL.
func TestRenderInert(t *testing.T) {
	cases := []struct {
		name, md string
		banned   []string
	}{
		{"script", "hi <script>alert(1)</script>", []string{"<script"}},
		{"script block", "<script>\nalert(1)\n</script>\n", []string{"<script"}},
		{"img onerror", `<img src=x onerror="alert(1)">`, []string{"<img", "onerror"}},
		{"svg onload", "<svg onload=alert(1)></svg>", []string{"<svg", "onload"}},
		{"iframe", `<iframe src="https://evil.example"></iframe>`, []string{"<iframe"}},
		{"javascript link", "[click](javascript:alert(1))", []string{"javascript:"}},
		{"javascript link, case", "[click](JaVaScRiPt:alert(1))", []string{"javascript:"}},
		{"javascript autolink", "<javascript:alert(1)>", []string{`href="javascript`}},
		{"vbscript", "[x](vbscript:msgbox(1))", []string{"vbscript:"}},
		{"data html", "[x](data:text/html;base64,PHNjcmlwdD4=)", []string{"data:text/html"}},
		{"image javascript", "![x](javascript:alert(1))", []string{"javascript:"}},
		{"wikilink label", "[[a|<img src=x onerror=alert(1)>]]", []string{"<img"}},
		{"wikilink target", `[[" onmouseover="alert(1)]]`, []string{`" onmouseover`}},
		{"entity", "&lt;script&gt;", []string{"<script"}},
		{"link title", `[x](http://a.example "t\" onclick=\"alert(1)")`, []string{`" onclick`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			html, err := render(c.md, noMemory)
			if err != nil {
				t.Fatal(err)
			}
			low := strings.ToLower(html)
			for _, b := range c.banned {
				if strings.Contains(low, strings.ToLower(b)) {
					t.Errorf("render(%q) = %q holds %q", c.md, html, b)
				}
			}
		})
	}
}

func TestRenderLinks(t *testing.T) {
	resolve := func(id string) (string, error) {
		switch id {
		case "recency-decay", "research/recency-decay.md", "recency decay":
			return "research/recency-decay.md", nil
		}
		return "", errors.New("none")
	}
	cases := []struct{ md, want string }{
		{"[[recency decay]]", `<a href="#/memory/research%2Frecency-decay.md">recency decay</a>`},
		{"[[recency-decay|the decay]]", `<a href="#/memory/research%2Frecency-decay.md">the decay</a>`},
		{"[[Some Concept]]", `<a href="#/graph/some-concept">Some Concept</a>`},
		{"[see](research/recency-decay.md)", `<a href="#/memory/research%2Frecency-decay.md">see</a>`},
		{"[web](https://example.com/x)", `<a href="https://example.com/x">web</a>`},
		{"[anchor](#layers)", `<a href="#layers">anchor</a>`},
		{"`[[in code]]`", `<code>[[in code]]</code>`},
	}
	for _, c := range cases {
		html, err := render(c.md, resolve)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(html, c.want) {
			t.Errorf("render(%q) = %q, want it to hold %q", c.md, html, c.want)
		}
	}
}

func TestRenderImagesLoadNothing(t *testing.T) {
	html, err := render("![beacon](https://beacon.example/x.png) and ![local](pic.png)", noMemory)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(html, "<img") {
		t.Errorf("render kept an image, which the browser would fetch: %s", html)
	}
	if !strings.Contains(html, `<a href="https://beacon.example/x.png">`) || !strings.Contains(html, "beacon</a>") {
		t.Errorf("the image is not offered as a link: %s", html)
	}
}
