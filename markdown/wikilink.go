package markdown

import (
	"bytes"
	"strings"

	"github.com/yuin/goldmark/ast"
	gparser "github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// WikiLinks are found by an inline parser of their own, tried at every
// "[[" and "![[" of the source before CommonMark's link parser,
// so what surrounds a link cannot change what it says: a link reference
// definition whose label is the link's name ("[installation]: …", which
// Foam writes at the end of every note) would otherwise make CommonMark
// read "[[installation]]" as a reference link inside brackets, and a "<"
// inside the name ("[[f<x>]]") would start inline HTML. Code spans are
// tried before it (their backticks bind tighter in CommonMark, and Obsidian,
// Foam and Logseq treat a link in code as code), so a link in code stays
// code. A link never spans lines.

// kindWikiLink is the goldmark node kind of a WikiLink.
var kindWikiLink = ast.NewNodeKind("WikiLink")

// wikiNode is one WikiLink as written: inner is the text between the
// brackets; embed and tag say whether a '!' (an embed) or a '#' (Logseq's
// tag form) stood before it; a tag's '#' is in the text before it. Its meaning (concept, display text) depends
// on the vault's tool, so the walk, which knows the Flavor, reads it.
type wikiNode struct {
	ast.BaseInline
	inner      text.Segment
	embed, tag bool
}

func (n *wikiNode) Kind() ast.NodeKind { return kindWikiLink }

func (n *wikiNode) Dump(src []byte, level int) {
	ast.DumpHelper(n, src, level, map[string]string{"Inner": string(n.inner.Value(src))}, nil)
}

// wikiParser is the inline parser of WikiLinks.
type wikiParser struct{}

// wikiPriority runs the parser before goldmark's link parser (200), which
// shares its '[' and '!' triggers.
const wikiPriority = 199

func (wikiParser) Trigger() []byte { return []byte{'[', '!'} }

func (wikiParser) Parse(_ ast.Node, block text.Reader, _ gparser.Context) ast.Node {
	line, seg := block.PeekLine()
	open := 2
	n := &wikiNode{}
	switch {
	case bytes.HasPrefix(line, openLink):
		// "#[[x]]": the '#' is already text before the link (a '#'
		// trigger would split text at every '#', and with it "&#65;").
		src := block.Source()
		n.tag = seg.Start > 0 && src[seg.Start-1] == '#'
	case len(line) > 2 && line[0] == '!' && bytes.HasPrefix(line[1:], openLink):
		open, n.embed = 3, true
	default:
		return nil
	}
	end := bytes.Index(line[open:], closeLink)
	if end < 0 {
		return nil
	}
	inner := line[open : open+end]
	if bytes.ContainsAny(inner, "[]\n") {
		return nil
	}
	if rest := line[open+end+2:]; len(rest) > 0 && rest[0] == '(' && !n.embed {
		// "[[1]](https://…)": a CommonMark link whose text is "[1]",
		// as READMEs and RFCs write numbered references.
		return nil
	}
	if _, ok := parseWikiLink(string(inner), FlavorObsidian); !ok {
		return nil // nothing to show in any flavor: text, as written
	}
	n.inner = text.NewSegment(seg.Start+open, seg.Start+open+end)
	block.Advance(open + end + 2)
	return n
}

var openLink, closeLink = []byte("[["), []byte("]]")

// Link is what one WikiLink says once its tool's rules are applied.
type link struct {
	display string // what the plain text shows
	concept string // normalised; "" for a link to a heading or block of the same note, or to an attachment
}

// parseWikiLink reads the inside of [[...]] by the rules of flavor:
// "target", "target|label", "target#heading", "target#^block" (and
// Dendron's reversed "label|target"). A table cell writes the pipe as
// "\|". ok is false when there is nothing to show at all.
func parseWikiLink(inner string, f Flavor) (l link, ok bool) {
	inner = strings.ReplaceAll(inner, `\|`, "|")
	target, label, piped := strings.Cut(inner, "|")
	if f == FlavorDendron && piped {
		target, label = label, target
	}
	if f != FlavorDendron && piped && strings.ContainsRune(target, '.') && isEmbedSize(label) {
		// "![[image.png|300]]": a size, not a label.
		label = ""
	}
	name, head, _ := strings.Cut(target, "#")
	name, head, label = strings.TrimSpace(name), strings.TrimSpace(head), strings.TrimSpace(label)
	switch {
	case label != "":
		l.display = label
	case name != "":
		l.display = name
	default:
		l.display = strings.TrimPrefix(head, "^")
	}
	if l.display == "" {
		return link{}, false
	}
	l.concept = noteConcept(name, f)
	return l, true
}

// noteConcept is the concept a link target names under flavor's rules.
// Obsidian and Foam resolve "folder/note", "/folder/note" and "./note" to
// the note, whose name is the last segment; Logseq's "a/b" is a namespace
// page of that whole name, and Dendron's "a.b.c" a note of that whole
// name ("dendron://vault/a.b" names a note of another vault, and a path
// with a slash names a file, not a note). A target
// with an attachment's extension (an image, a PDF) names a file, not a
// concept.
func noteConcept(name string, f Flavor) string {
	switch f {
	case FlavorDendron:
		if rest, ok := strings.CutPrefix(name, "dendron://"); ok {
			_, name, _ = strings.Cut(rest, "/")
		}
		if strings.ContainsAny(name, `/\`) {
			return "" // a file's path ("[[src/index.js]]"): notes are named with dots
		}
	case FlavorLogseq:
	default:
		name = strings.TrimRight(name, `/\`)
		if i := strings.LastIndexAny(name, `/\`); i >= 0 {
			name = name[i+1:]
		}
	}
	if len(name) >= 3 && strings.EqualFold(name[len(name)-3:], ".md") {
		name = name[:len(name)-3]
	} else if isAttachment(name) {
		return ""
	}
	return NormalizeConcept(name)
}

// attachmentExts are the file kinds Obsidian, Foam and Logseq embed as
// attachments (and Obsidian's canvases and bases, views of notes): a link
// to one names a file, not a note.
var attachmentExts = map[string]bool{
	"png": true, "jpg": true, "jpeg": true, "gif": true, "svg": true, "webp": true, "bmp": true, "avif": true,
	"pdf": true, "mp3": true, "wav": true, "m4a": true, "ogg": true, "flac": true, "mp4": true, "webm": true,
	"mov": true, "mkv": true, "canvas": true, "excalidraw": true, "base": true,
}

func isAttachment(name string) bool {
	i := strings.LastIndexByte(name, '.')
	return i >= 0 && attachmentExts[strings.ToLower(name[i+1:])]
}

// isEmbedSize reports whether s is an embed's size ("300", "300x200",
// "50%", "300|right"), which Obsidian and Foam write after an image's pipe.
func isEmbedSize(s string) bool {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "|")
	s = strings.TrimSuffix(s, "%")
	if s == "" {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && r != 'x' {
			return false
		}
	}
	return true
}
