package markdown

import (
	"bytes"
	"fmt"
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
	m, err := decodeYAML(front)
	if err != nil {
		p.warn("malformed frontmatter: " + err.Error())
		return
	}
	// The known keys are handled in a fixed order so that warnings come out
	// the same on every run; map order would shuffle them.
	d := p.doc
	p.setTitle(m["title"])
	p.addFrontTags(m["tags"])
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
		d.Meta[k] = normalizeYAML(v)
	}
}

// decodeYAML decodes a frontmatter block into a map. yaml.v3 is mature but
// not ours; a panic inside it is turned into an error so that the file is
// still indexed, only without its metadata.
func decodeYAML(front []byte) (m map[string]any, err error) {
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, fmt.Errorf("yaml: internal error: %v", r)
		}
	}()
	err = yaml.Unmarshal(front, &m)
	return m, err
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

// normalizeYAML makes a decoded YAML value safe to hand to encoding/json:
// yaml.v3 decodes nested mappings with non-string keys as map[any]any,
// which json.Marshal rejects. Keys are turned into strings.
func normalizeYAML(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = normalizeYAML(x)
		}
		return v
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[fmt.Sprint(k)] = normalizeYAML(x)
		}
		return m
	case []any:
		for i, x := range v {
			v[i] = normalizeYAML(x)
		}
		return v
	}
	return v
}
