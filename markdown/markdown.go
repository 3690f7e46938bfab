// Package markdown parses one memory file: YAML frontmatter, a CommonMark
// body with GFM tables and [[WikiLinks]], and Obsidian-style #tags. It turns
// the file into the pieces the indexes need: a title, metadata, plain text
// for BM25, and heading-aware chunks for embedding.
//
// Parse is the one parser for a memory file in mnemo; everything that needs
// to know what a file says calls it. It never panics and never fails on
// malformed content: a broken frontmatter block or invalid UTF-8 becomes a
// warning on an otherwise usable Doc. Only files that are not text at all
// (ErrBinary) or too large (ErrTooLarge) are refused.
package markdown

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	gparser "github.com/yuin/goldmark/parser"
)

// DefaultMaxBytes is the size limit used when Options.MaxBytes is zero. A
// memory file is prose written by a person or an agent; anything over 10 MiB
// is almost certainly an export or a log that does not belong in the index.
const DefaultMaxBytes = 10 << 20

// Default chunk sizes. Short chunks suit the built-in static embedder, an
// average of word vectors, which blurs as a chunk grows (docs/benchmarks.md
// compares chunk sizes); a 30-word overlap keeps a sentence that straddles
// a window boundary whole in at least one chunk.
const (
	defaultChunkWords   = 100
	defaultOverlapWords = 30
)

// Errors for files Parse refuses. They are wrapped with the file name; test
// with errors.Is.
var (
	ErrBinary   = errors.New("file looks binary (contains NUL bytes)")
	ErrTooLarge = errors.New("file is larger than the size limit")
)

// Options tune Parse. The zero value is ready to use.
type Options struct {
	MaxBytes     int64  // 0 (or negative) means DefaultMaxBytes (10 MiB)
	ChunkWords   int    // target words per chunk (a short tail is folded in, up to 1.25×); 0 (or negative) means 100
	OverlapWords int    // words repeated from the previous window; 0 means 30, negative means none; at most ChunkWords/2
	Flavor       Flavor // the tool whose link rules the vault follows; the zero value is Obsidian's (and Foam's)
}

// Doc is one parsed memory file. Every string in it is valid UTF-8.
type Doc struct {
	Title    string
	Tags     []string       // frontmatter tags + inline #tags, lowercased, deduplicated, order of first appearance, no leading '#'
	Created  time.Time      // UTC; zero if absent or unparseable
	Modified time.Time      // UTC; zero if absent or unparseable
	Meta     map[string]any // other frontmatter keys (not title/tags/created/modified); nil if none
	Body     string         // the markdown after the frontmatter, UTF-8 repaired, line endings as in the file
	Text     string         // plain text of the body: markup removed, code kept, blocks separated by "\n"
	Headings []string       // heading texts in document order
	Links    []string       // normalised concepts linked (WikiLinks, and the tags Logseq and Dendron treat as links), unique, order of first appearance
	Concept  string         // the concept this memory stands for: the name links use for it (NoteConcept, or Logseq's title:: property)
	Aliases  []string       // other names of that concept: frontmatter aliases (Obsidian), alias:: (Logseq); normalised, unique
	Mentions []Mention      // one per entry of Links, in the same order: how often and under which headings
	Chunks   []Chunk        // zero chunks when Text is empty
	Warnings []string       // problems that did not stop the parse, one line each
}

// Mention is how one file links to one concept: Count WikiLinks in all,
// under the headings in Sections (the innermost heading in force at each
// link; a link before the first heading has none). The concept graph is
// built from these.
type Mention struct {
	Concept  string
	Count    int
	Sections []string // unique, order of first appearance; nil if every link precedes the first heading
}

// Chunk is one window of a Doc's plain text, sized for embedding.
type Chunk struct {
	Index    int
	Headings []string // heading path (H1 > H2 > ...) in force where the chunk starts
	Text     string   // plain text of the chunk; does not include the title (the caller prepends it)
	Start    int      // byte offset of Text in Doc.Text (Text is Doc.Text[Start:Start+len(Text)])
}

// Parse parses one memory file. name is the path relative to the memory
// folder (slash-separated, with .md); it is used for error messages and for
// the title when neither the frontmatter nor an H1 gives one.
//
// Parse fails only for files that are not memories: larger than
// opt.MaxBytes (ErrTooLarge) or containing a NUL byte (ErrBinary). Anything
// else it can read is parsed, with Warnings saying what was wrong.
func Parse(name string, data []byte, opt Options) (doc *Doc, err error) {
	// The parser is written not to panic, and fuzzed; this is the last line
	// of defence so that one odd file cannot take down a whole sync.
	defer func() {
		if r := recover(); r != nil {
			doc = nil
			err = fmt.Errorf("parse %s: internal error: %v", name, r)
		}
	}()

	opt = opt.withDefaults()
	if int64(len(data)) > opt.MaxBytes {
		return nil, fmt.Errorf("parse %s: %w (%d bytes, limit %d)", name, ErrTooLarge, len(data), opt.MaxBytes)
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return nil, fmt.Errorf("parse %s: %w (NUL at byte %d)", name, ErrBinary, i)
	}

	doc = &Doc{Concept: NoteConcept(name, opt.Flavor)}
	p := parsers.Get().(*parser)
	p.doc, p.flavor = doc, opt.Flavor
	if !utf8.Valid(data) {
		data = bytes.ToValidUTF8(data, []byte("\uFFFD"))
		p.warn("invalid UTF-8 repaired")
	}
	data = bytes.TrimPrefix(data, bom)

	body := data
	switch front, rest, state := splitFrontmatter(data); state {
	case frontOK:
		body = rest
		p.applyFrontmatter(normalizeNewlines(front))
	case frontUnclosed:
		p.warn(`malformed frontmatter: no closing "---" line; parsed the whole file as markdown`)
	}
	doc.Body = string(body)

	body = normalizeNewlines(body)
	if opt.Flavor == FlavorLogseq {
		p.logseqProps(body)
		body = logseqOutline(body)
	}
	p.parseBody(body)
	p.chunk(opt)
	doc.Aliases = slices.DeleteFunc(doc.Aliases, func(a string) bool { return a == doc.Concept })
	if len(doc.Aliases) == 0 {
		doc.Aliases = nil
	}

	if doc.Title == "" {
		doc.Title = titleFromName(name)
	}
	// Only a parse that ran to the end gives its parser back: after a
	// panic its state is not worth trusting.
	p.release()
	return doc, nil
}

func (o Options) withDefaults() Options {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.ChunkWords <= 0 {
		o.ChunkWords = defaultChunkWords
	}
	switch {
	case o.OverlapWords == 0:
		o.OverlapWords = defaultOverlapWords
	case o.OverlapWords < 0:
		o.OverlapWords = 0
	}
	// Overlap must leave each window some new words, or chunking would not
	// advance; half a window is already generous.
	o.OverlapWords = min(o.OverlapWords, o.ChunkWords/2)
	return o
}

// parser holds the state of one Parse call: the Doc being filled, the
// sets that keep Tags and Links unique without quadratic scans (a
// generated file can hold many thousands of tags), and the working buffers
// of the body walk. Parsers are pooled: a sync spends a large part of its
// markdown time allocating and zeroing these buffers afresh for each
// file otherwise. Nothing in a Doc points into them.
type parser struct {
	doc      *Doc
	flavor   Flavor
	tagSeen  map[string]struct{}
	linkSeen map[string]int // concept → index in Links and Mentions
	// blockLinks are the concepts linked in the block being read; once
	// the block is added they are counted under the heading in force.
	blockLinks []string

	// Filled by parseBody for chunk: the plain text's word units and
	// the headings, each with where its section starts.
	units    []span
	sections []section

	body   bodyState
	ctx    *parseContext // goldmark's, reused
	ctxOpt gparser.ParseOption
}

var parsers = sync.Pool{New: func() any { return new(parser) }}

// maxPooled bounds the buffers (in elements) a parser keeps for the next
// file: one huge file should not pin its buffers for the rest of a sync.
const maxPooled = 1 << 16

// release empties p and returns it to the pool.
func (p *parser) release() {
	p.doc = nil
	p.tagSeen, p.linkSeen = nil, nil
	// Strings left in the buffers belong to the Doc: drop them.
	clear(p.blockLinks[:cap(p.blockLinks)])
	p.blockLinks = p.blockLinks[:0]
	if cap(p.units) > maxPooled {
		p.units = nil
	}
	p.units = p.units[:0]
	if cap(p.sections) > maxPooled/16 { // a section is 64 bytes
		p.sections = nil
	}
	clear(p.sections[:cap(p.sections)])
	p.sections = p.sections[:0]
	p.body.reset()
	if p.ctx != nil && !p.ctx.reset() {
		p.ctx, p.ctxOpt = nil, nil
	}
	parsers.Put(p)
}

// warn records a problem. Warnings are single lines so that they read well
// in a sync report; YAML errors in particular span several lines.
func (p *parser) warn(msg string) {
	p.doc.Warnings = append(p.doc.Warnings, strings.Join(strings.Fields(msg), " "))
}

// addTag adds one tag, lowercased and without leading '#', unless it is
// empty or already present.
func (p *parser) addTag(t string) {
	t = strings.TrimSpace(strings.TrimLeftFunc(t, func(r rune) bool { return r == '#' || unicode.IsSpace(r) }))
	if t == "" {
		return
	}
	t = strings.ToLower(t)
	if _, ok := p.tagSeen[t]; ok {
		return
	}
	if p.tagSeen == nil {
		p.tagSeen = make(map[string]struct{})
	}
	p.tagSeen[t] = struct{}{}
	p.doc.Tags = append(p.doc.Tags, t)
}

// addLink records one link to a normalised concept (empty ones are
// ignored). It is counted, with its section, by placeLinks once its
// block is added.
func (p *parser) addLink(concept string) {
	if concept != "" {
		p.blockLinks = append(p.blockLinks, concept)
	}
}

// placeLinks counts the links of the block just added under section, the
// innermost heading in force ("" before the first heading).
func (p *parser) placeLinks(section string) {
	for _, concept := range p.blockLinks {
		i, ok := p.linkSeen[concept]
		if !ok {
			if p.linkSeen == nil {
				p.linkSeen = make(map[string]int)
			}
			i = len(p.doc.Links)
			p.linkSeen[concept] = i
			p.doc.Links = append(p.doc.Links, concept)
			p.doc.Mentions = append(p.doc.Mentions, Mention{Concept: concept})
		}
		m := &p.doc.Mentions[i]
		m.Count++
		if section != "" && !slices.Contains(m.Sections, section) {
			m.Sections = append(m.Sections, section)
		}
	}
	p.blockLinks = p.blockLinks[:0]
}

// titleFromName is the last-resort title: the file name without folder and
// without ".md", kept as written (dates and dashes included) because that is
// how the user knows the file. It never returns "", so every Doc has a title.
func titleFromName(name string) string {
	name = strings.ToValidUTF8(name, "\uFFFD")
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	if len(name) >= 3 && strings.EqualFold(name[len(name)-3:], ".md") {
		name = name[:len(name)-3]
	}
	if name = strings.TrimSpace(name); name == "" {
		return "untitled"
	}
	return name
}

// normalizeNewlines turns CRLF and lone CR into LF, so that neither YAML
// nor goldmark nor the plain text ever sees a '\r'. It returns b itself when
// there is nothing to do, which is the common case.
func normalizeNewlines(b []byte) []byte {
	if bytes.IndexByte(b, '\r') < 0 {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c == '\r' {
			if i+1 < len(b) && b[i+1] == '\n' {
				continue
			}
			c = '\n'
		}
		out = append(out, c)
	}
	return out
}
