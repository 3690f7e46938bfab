package markdown

import (
	"bytes"
	"net/url"
	"strings"
)

// Flavor is the note-taking tool whose link rules a vault follows. The
// tools agree on "[[note]]", "[[note|label]]", "[[note#heading]]" and
// "![[note]]"; they differ in what a slash, a pipe and a #tag mean, and so
// in which concepts a vault has. The engine tells Parse which one a vault
// is (by the files each tool keeps at its root).
type Flavor int

const (
	// FlavorObsidian is Obsidian's and Foam's rules, and the default:
	// "[[folder/note]]" names the note "note", "[[target|label]]", and a
	// #tag is a tag, not a link.
	FlavorObsidian Flavor = iota
	// FlavorLogseq is Logseq's: "[[a/b]]" is the namespace page "a/b",
	// "#tag" and "#[[multi word]]" are page references as well as tags,
	// and the first block's "tags::" and "alias::" properties name pages.
	FlavorLogseq
	// FlavorDendron is Dendron's: notes are named by their whole dotted
	// hierarchy ("a.b.c"), the label comes first ("[[label|a.b.c]]"),
	// and "#tag" and frontmatter tags link to the note "tags.tag".
	FlavorDendron
)

// String names the flavor as status and the docs do.
func (f Flavor) String() string {
	switch f {
	case FlavorLogseq:
		return "logseq"
	case FlavorDendron:
		return "dendron"
	}
	return "obsidian"
}

// NoteConcept is the concept a memory file stands for: the name other
// notes link to it by, normalised. It is the file name without folder and
// extension; in Logseq, whose file names encode a page's namespace as
// "___" (or "%2F") and other characters in percent form, the decoded page
// name.
func NoteConcept(path string, f Flavor) string {
	name := path
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		switch strings.ToLower(name[i:]) {
		case ".md", ".markdown":
			name = name[:i]
		}
	}
	if f == FlavorLogseq {
		name = strings.ReplaceAll(name, "___", "/")
		if u, err := url.PathUnescape(name); err == nil {
			name = u
		}
	}
	return NormalizeConcept(name)
}

// logseqProps reads the page properties Logseq writes as the first lines
// of a page ("key:: value", up to the first line that is not one) and
// applies the ones that name pages: alias:: (this page's other names),
// tags:: (tags, and pages), title:: (the page's name and title). A value
// written as "[[x]]" or "#x" is a link the body parse counts already; a
// plain one is counted here.
func (p *parser) logseqProps(body []byte) {
	for len(body) > 0 {
		line := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		key, val, ok := strings.Cut(string(bytes.TrimSpace(line)), ":: ")
		if !ok {
			key, ok = strings.CutSuffix(string(bytes.TrimSpace(line)), "::")
		}
		if !ok || key == "" || strings.ContainsAny(key, " \t[]#") {
			break
		}
		switch strings.ToLower(key) {
		case "alias":
			for _, v := range propValues(val) {
				p.addAlias(v.name)
			}
		case "tags":
			for _, v := range propValues(val) {
				if v.form == '#' {
					continue // the tag scan counts it, as tag and page
				}
				p.addTag(v.name)
				if v.form == 0 {
					p.addLink(NormalizeConcept(v.name))
				}
			}
		case "title":
			if t := strings.TrimSpace(val); t != "" {
				p.doc.Concept = NormalizeConcept(t)
				if p.doc.Title == "" {
					p.doc.Title = strings.Join(strings.Fields(t), " ")
				}
			}
		}
	}
	p.placeLinks("")
}

// propValue is one comma-separated value of a Logseq property; form is
// '[' for "[[x]]", '#' for "#x" or "#[[x]]", 0 for plain text.
type propValue struct {
	name string
	form byte
}

func propValues(val string) []propValue {
	var out []propValue
	for v := range strings.SplitSeq(val, ",") {
		v = strings.TrimSpace(v)
		var form byte
		if s, ok := strings.CutPrefix(v, "#"); ok {
			v, form = s, '#'
		}
		if s, ok := strings.CutPrefix(v, "[["); ok {
			if s, ok = strings.CutSuffix(s, "]]"); ok {
				v = s
				if form == 0 {
					form = '['
				}
			}
		}
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, propValue{v, form})
		}
	}
	return out
}

// addAlias records another name of this memory, normalised as links are;
// its own name and repeats are left out.
func (p *parser) addAlias(name string) {
	c := NormalizeConcept(name)
	if c == "" {
		return
	}
	for _, a := range p.doc.Aliases {
		if a == c {
			return
		}
	}
	p.doc.Aliases = append(p.doc.Aliases, c)
}

// logseqOutline undoes the indentation of a Logseq page. Logseq writes a
// page as an outline, nesting blocks with tabs ("\t- child"), and has no
// indented code (its code is fenced), but to CommonMark a tab-indented
// line after a heading or a paragraph is an indented code block: the
// links and text of every nested block would be read as code. Each line
// loses its leading white space; a fenced block's lines lose as much as
// its opening line had, so code keeps its own indentation and a fence
// opened in a bullet stays in it.
func logseqOutline(body []byte) []byte {
	out := make([]byte, 0, len(body))
	fence, fenceIndent := "", 0
	for len(body) > 0 {
		line := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i+1], body[i+1:]
		} else {
			body = nil
		}
		trim := bytes.TrimLeft(line, " \t")
		indent := len(line) - len(trim)
		if fence != "" {
			out = append(out, line[min(indent, fenceIndent):]...)
			if bytes.HasPrefix(trim, []byte(fence)) && len(bytes.TrimSpace(trim[len(fence):])) == 0 {
				fence = ""
			}
			continue
		}
		// A fence opens a line, or a bullet ("- ```clojure"): its lines
		// keep their indentation past the fence line's own.
		code := bytes.TrimPrefix(trim, []byte("- "))
		if run := code[:len(code)-len(bytes.TrimLeft(code, "`~"))]; len(run) >= 3 && bytes.Count(run, run[:1]) == len(run) {
			fence, fenceIndent = string(run), indent
		}
		out = append(out, trim...)
	}
	return out
}
