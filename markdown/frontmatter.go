package markdown

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// bom is the UTF-8 byte order mark some Windows editors put at the top of a
// file; it would otherwise hide the opening "---".
var bom = []byte("\uFEFF")

type frontState int

const (
	frontNone     frontState = iota // the file does not start with "---"
	frontOK                         // "---" ... "---" (or "...") found
	frontUnclosed                   // an opening "---" with no closing line
)

// SplitFrontmatter splits a YAML frontmatter block off the top of data: a
// first line "---" and everything up to the next line "---" or "...". CRLF
// line endings and a leading UTF-8 byte order mark are accepted, and
// trailing spaces on the fence lines are ignored. front is the YAML between
// the fences; body is what follows the closing line. ok is false when there
// is no complete block, and then body is data unchanged.
func SplitFrontmatter(data []byte) (front, body []byte, ok bool) {
	front, body, st := splitFrontmatter(data)
	return front, body, st == frontOK
}

func splitFrontmatter(data []byte) (front, body []byte, st frontState) {
	d := bytes.TrimPrefix(data, bom)
	nl := bytes.IndexByte(d, '\n')
	if nl < 0 {
		if isFence(d, false) {
			return nil, data, frontUnclosed
		}
		return nil, data, frontNone
	}
	if !isFence(d[:nl], false) {
		return nil, data, frontNone
	}
	start := nl + 1
	for pos := start; pos < len(d); {
		line, next := d[pos:], len(d)
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line, next = line[:i], pos+i+1
		}
		if isFence(line, true) {
			return d[start:pos], d[next:], frontOK
		}
		pos = next
	}
	return nil, data, frontUnclosed
}

// isFence reports whether line opens (or, with closer, closes) a
// frontmatter block. YAML's document end marker "..." only closes.
func isFence(line []byte, closer bool) bool {
	line = bytes.TrimRight(line, " \t\r")
	return string(line) == "---" || closer && string(line) == "..."
}

// applyFrontmatter decodes the YAML block and fills the Doc's metadata. A
// block that is not a YAML mapping is reported and otherwise ignored: the
// body is still worth indexing.
func (p *parser) applyFrontmatter(front []byte) {
	m, dup, err := decodeYAML(front)
	if err != nil {
		p.warn("malformed frontmatter: " + err.Error())
		return
	}
	if dup != "" {
		p.warn(fmt.Sprintf("frontmatter: duplicate key %q; the last value is used", dup))
	}
	// The known keys are handled in a fixed order so that warnings come out
	// the same on every run; map order would shuffle them.
	d := p.doc
	p.setTitle(m["title"])
	tags := len(d.Tags)
	p.addFrontTags(m["tags"])
	if p.flavor == FlavorDendron {
		// Dendron links every frontmatter tag to its note "tags.<tag>".
		for _, t := range d.Tags[tags:] {
			p.addLink(NormalizeConcept("tags." + t))
		}
		p.placeLinks("")
	}
	p.addFrontAliases(m["aliases"])
	p.addFrontAliases(m["alias"])
	p.frontLinks(m)
	d.Created = p.parseTimeField("created", m["created"])
	d.Modified = p.parseTimeField("modified", m["modified"])
	for k, v := range m {
		switch k {
		case "title", "tags", "created", "modified":
			continue
		}
		if d.Meta == nil {
			d.Meta = make(map[string]any, len(m))
		}
		d.Meta[k] = v
	}
}

// decodeYAML decodes a frontmatter block into a map. It goes through
// yaml.Node rather than straight into a map because yaml.v3's map decoder
// checks for duplicate keys in quadratic time (16 KiB of repeated "k: v"
// takes seconds); building the map here is linear, and a repeated key
// simply keeps its last value. A panic inside yaml.v3 becomes an error, so
// that the file is still indexed, only without its metadata.
func decodeYAML(front []byte) (m map[string]any, dup string, err error) {
	defer func() {
		if r := recover(); r != nil {
			m, dup, err = nil, "", fmt.Errorf("yaml: internal error: %v", r)
		}
	}()
	var doc yaml.Node
	if err := yaml.Unmarshal(front, &doc); err != nil {
		return nil, "", err
	}
	root := &doc
	if root.Kind == 0 {
		return nil, "", nil // empty block, or only comments
	}
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return nil, "", nil // empty block
		}
		root = root.Content[0]
	}
	c := yamlConv{budget: maxYAMLNodes}
	switch {
	case root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null":
		return nil, "", nil // "---\n~\n---" and the like
	case root.Kind != yaml.MappingNode:
		return nil, "", fmt.Errorf("not a key: value mapping (line %d)", root.Line)
	}
	v, err := c.value(root, 0, false)
	if err != nil {
		return nil, "", err
	}
	m, _ = v.(map[string]any)
	return m, c.dup, nil
}

// Bounds on what decodeYAML builds: aliases can expand a few lines into
// millions of nodes ("billion laughs"), or refer to themselves. Nodes
// reached without an alias are bounded by the size of the file.
const (
	maxYAMLNodes = 100_000 // nodes reached through aliases
	maxYAMLDepth = 1000
)

// yamlConv turns a yaml.Node tree into plain Go values: map[string]any,
// []any, and the scalars yaml.v3 itself would produce.
type yamlConv struct {
	budget int
	dup    string // the first repeated key of the top-level mapping
}

func (c *yamlConv) value(n *yaml.Node, depth int, aliased bool) (any, error) {
	if aliased {
		if c.budget--; c.budget < 0 {
			return nil, errors.New("yaml: document contains excessive aliasing")
		}
	}
	if depth > maxYAMLDepth {
		if aliased {
			return nil, errors.New("yaml: an alias refers to itself or nests too deeply")
		}
		return nil, errors.New("yaml: nested too deeply")
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return c.value(n.Content[0], depth+1, aliased)
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, nil
		}
		return c.value(n.Alias, depth+1, true)
	case yaml.SequenceNode:
		list := make([]any, 0, len(n.Content))
		for _, item := range n.Content {
			v, err := c.value(item, depth+1, aliased)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		return list, nil
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, err := c.key(n.Content[i], depth+1, aliased)
			if err != nil {
				return nil, err
			}
			v, err := c.value(n.Content[i+1], depth+1, aliased)
			if err != nil {
				return nil, err
			}
			if _, ok := m[k]; ok && depth == 0 && c.dup == "" {
				c.dup = k
			}
			m[k] = v
		}
		return m, nil
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!str":
			return n.Value, nil
		case "!!null":
			return nil, nil
		}
		var v any
		if err := n.Decode(&v); err != nil {
			return n.Value, nil // an odd tag: keep the text
		}
		if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			// ".nan" and ".inf" are valid YAML but not valid JSON, and
			// Meta is served as JSON; keep them as written.
			return n.Value, nil
		}
		return v, nil
	}
	return nil, nil
}

// key renders a mapping key as a string, as yaml.v3 does when decoding
// into map[string]any: scalars by their text, anything else printed.
func (c *yamlConv) key(n *yaml.Node, depth int, aliased bool) (string, error) {
	if n.Kind == yaml.ScalarNode {
		return n.Value, nil
	}
	v, err := c.value(n, depth, aliased)
	if err != nil {
		return "", err
	}
	return fmt.Sprint(v), nil
}

func (p *parser) setTitle(v any) {
	var s string
	switch v := v.(type) {
	case nil:
		return
	case string:
		s = v
	case time.Time:
		s = formatTime(v)
	case bool, int, int64, uint64, float64:
		// "title: 2024" is a title, even if YAML reads it as a number.
		s = fmt.Sprint(v)
	default:
		p.warn(fmt.Sprintf("title: not a string (%T); ignored", v))
		return
	}
	// A title is one line; YAML block scalars can smuggle in newlines.
	p.doc.Title = strings.Join(strings.Fields(s), " ")
}

// addFrontTags accepts the forms people write: a YAML list, a
// comma-separated string, or Obsidian's space-separated "#a #b".
func (p *parser) addFrontTags(v any) {
	switch v := v.(type) {
	case nil:
	case string:
		var parts []string
		if strings.Contains(v, ",") {
			parts = strings.Split(v, ",")
		} else {
			parts = strings.Fields(v)
		}
		for _, t := range parts {
			p.addTag(t)
		}
	case []any:
		for _, item := range v {
			if s, ok := scalarString(item); ok {
				p.addTag(s)
			}
		}
	default:
		if s, ok := scalarString(v); ok {
			p.addTag(s)
			return
		}
		p.warn(fmt.Sprintf("tags: unsupported value of type %T; ignored", v))
	}
}

// frontLinks counts the WikiLinks in frontmatter values ("categories:
// - "[[People]]"", "author: "[[Steph Ango]]""), which Obsidian's
// properties show and graph as links; keys in sorted order, so Links
// come out the same on every run.
func (p *parser) frontLinks(m map[string]any) {
	keys := slices.Sorted(maps.Keys(m))
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			for {
				i := strings.Index(v, "[[")
				if i < 0 {
					return
				}
				j := strings.Index(v[i+2:], "]]")
				if j < 0 {
					return
				}
				inner := v[i+2 : i+2+j]
				v = v[i+2+j+2:]
				if strings.ContainsAny(inner, "[]\n") {
					continue
				}
				if l, ok := parseWikiLink(inner, p.flavor); ok {
					p.addLink(l.concept)
				}
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				walk(v[k])
			}
		}
	}
	for _, k := range keys {
		switch k {
		case "title", "tags", "created", "modified":
			continue
		}
		walk(m[k])
	}
	p.placeLinks("")
}

// addFrontAliases reads Obsidian's aliases (also written "alias"): a
// YAML list, or one string, comma-separated.
func (p *parser) addFrontAliases(v any) {
	switch v := v.(type) {
	case nil:
	case []any:
		for _, item := range v {
			if s, ok := scalarString(item); ok {
				p.addAlias(s)
			}
		}
	default:
		s, ok := scalarString(v)
		if !ok {
			p.warn(fmt.Sprintf("aliases: unsupported value of type %T; ignored", v))
			return
		}
		for a := range strings.SplitSeq(s, ",") {
			p.addAlias(a)
		}
	}
}

func scalarString(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case bool, int, int64, uint64, float64:
		return fmt.Sprint(v), true
	case time.Time:
		return formatTime(v), true
	}
	return "", false
}

// timeLayouts are the date forms accepted in created/modified strings, most
// specific first. Forms without a zone are taken as UTC.
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05",
	"2006-01-02T15:04",
	"2006-01-02 15:04",
	"2006-01-02",
}

// parseTimeField parses a created/modified value, warning when a value is
// present but unreadable: a silently dropped date would make a memory fall
// out of date-range filters with no clue why.
func (p *parser) parseTimeField(key string, v any) time.Time {
	switch v := v.(type) {
	case nil:
		return time.Time{}
	case time.Time:
		return v.UTC()
	case int:
		// Dendron writes Unix time in milliseconds ("created:
		// 1595003088839"); a number of seconds is as plain a clock.
		if v > 1e11 {
			return time.UnixMilli(int64(v)).UTC()
		}
		if v > 0 {
			return time.Unix(int64(v), 0).UTC()
		}
	case string:
		s := strings.TrimSpace(v)
		if s == "" {
			return time.Time{}
		}
		for _, layout := range timeLayouts {
			if t, err := time.Parse(layout, s); err == nil {
				return t.UTC()
			}
		}
	}
	p.warn(fmt.Sprintf("%s: cannot parse %s", key, strconv.Quote(fmt.Sprint(v))))
	return time.Time{}
}

func formatTime(t time.Time) string {
	t = t.UTC()
	if t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 && t.Nanosecond() == 0 {
		return t.Format("2006-01-02")
	}
	return t.Format(time.RFC3339)
}
