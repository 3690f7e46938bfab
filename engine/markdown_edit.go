package engine

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// frontmatter is what Write puts at the top of a new memory, in this order.
type frontmatter struct {
	Title    string    `yaml:"title"`
	Created  time.Time `yaml:"created"`
	Modified time.Time `yaml:"modified"`
	Tags     []string  `yaml:"tags,flow"`
}

func renderFront(title string, created, modified time.Time, tags []string) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("---\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(frontmatter{Title: title, Created: created.UTC(), Modified: modified.UTC(), Tags: tags}); err != nil {
		return nil, fmt.Errorf("frontmatter: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("frontmatter: %w", err)
	}
	b.WriteString("---\n")
	return b.Bytes(), nil
}

// touchModified sets the top-level "modified" key of a YAML frontmatter
// block to t, changing only that line (or adding it at the end), so the
// rest of the user's frontmatter keeps its exact formatting. A block that
// is not a YAML mapping is returned unchanged.
func touchModified(front []byte, t time.Time) []byte {
	var m map[string]any
	if err := yaml.Unmarshal(front, &m); err != nil {
		return front
	}
	line := "modified: " + t.Format(time.RFC3339) + "\n"
	lines := strings.SplitAfter(string(front), "\n")
	var out strings.Builder
	done := false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		key, _, ok := strings.Cut(l, ":")
		if done || !ok || strings.TrimRight(key, " \t") != "modified" {
			out.WriteString(l)
			continue
		}
		out.WriteString(line)
		done = true
		// Drop the old value's continuation lines (a block scalar).
		for i+1 < len(lines) && (strings.HasPrefix(lines[i+1], " ") || strings.HasPrefix(lines[i+1], "\t")) {
			i++
		}
	}
	s := out.String()
	if !done {
		if s != "" && !strings.HasSuffix(s, "\n") {
			s += "\n"
		}
		s += line
	}
	return []byte(s)
}

// applyEdit returns body with the edit applied.
func applyEdit(body string, req EditRequest) (string, error) {
	c := req.Content
	switch req.Op {
	case Append:
		if strings.TrimSpace(c) == "" {
			return "", fmt.Errorf("append: content is required: %w", ErrInvalid)
		}
		b := strings.TrimRight(body, "\r\n")
		if strings.TrimSpace(b) == "" {
			return withNewline(strings.Trim(c, "\r\n")), nil
		}
		return b + "\n\n" + withNewline(strings.Trim(c, "\r\n")), nil
	case Prepend:
		if strings.TrimSpace(c) == "" {
			return "", fmt.Errorf("prepend: content is required: %w", ErrInvalid)
		}
		b := strings.TrimLeft(body, "\r\n")
		if strings.TrimSpace(b) == "" {
			return withNewline(strings.Trim(c, "\r\n")), nil
		}
		return strings.Trim(c, "\r\n") + "\n\n" + b, nil
	case FindReplace:
		if req.Find == "" {
			return "", fmt.Errorf("find_replace: find is required: %w", ErrInvalid)
		}
		n := strings.Count(body, req.Find)
		switch {
		case n == 0:
			return "", fmt.Errorf("find_replace: %.60q does not occur: %w", req.Find, ErrNoMatch)
		case req.ExpectedCount > 0 && n != req.ExpectedCount:
			return "", fmt.Errorf("find_replace: %.60q occurs %d times, expected %d; nothing changed: %w", req.Find, n, req.ExpectedCount, ErrNoMatch)
		}
		return strings.ReplaceAll(body, req.Find, c), nil
	case ReplaceSection:
		return replaceSection(body, req.Section, c)
	}
	return "", fmt.Errorf("operation %q: %w", req.Op, ErrInvalid)
}

// replaceSection replaces what lies under the heading named section, up
// to the next heading of the same or a higher level, with content. ATX
// headings ("## Text") are recognised outside fenced code blocks.
func replaceSection(body, section, content string) (string, error) {
	want := strings.TrimSpace(section)
	wantLevel := 0
	if lvl, text, ok := parseHeading(want); ok {
		wantLevel, want = lvl, text
	}
	want = strings.Join(strings.Fields(want), " ")
	if want == "" {
		return "", fmt.Errorf("replace_section: section is required: %w", ErrInvalid)
	}
	type heading struct{ level, start, end int } // line start, line end (after '\n')
	var hs []heading
	var found []int
	fence := ""
	for pos := 0; pos < len(body); {
		end := len(body)
		if i := strings.IndexByte(body[pos:], '\n'); i >= 0 {
			end = pos + i + 1
		}
		line := strings.TrimRight(body[pos:end], "\r\n")
		if f := fenceOf(line); f != "" {
			switch {
			case fence == "":
				fence = f
			case strings.HasPrefix(f, fence) && strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), fence[:1])) == "":
				fence = ""
			}
		} else if fence == "" {
			if lvl, text, ok := parseHeading(line); ok {
				hs = append(hs, heading{lvl, pos, end})
				if (wantLevel == 0 || wantLevel == lvl) && strings.EqualFold(strings.Join(strings.Fields(text), " "), want) {
					found = append(found, len(hs)-1)
				}
			}
		}
		pos = end
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("replace_section: no heading %.60q: %w", section, ErrNoMatch)
	case 1:
	default:
		return "", fmt.Errorf("replace_section: %d headings %.60q; make the section unique: %w", len(found), section, ErrNoMatch)
	}
	h := hs[found[0]]
	stop := len(body)
	for _, n := range hs[found[0]+1:] {
		if n.level <= h.level {
			stop = n.start
			break
		}
	}
	head := body[:h.end]
	if !strings.HasSuffix(head, "\n") {
		head += "\n"
	}
	var mid string
	if c := strings.Trim(content, "\r\n"); c != "" {
		mid = "\n" + c + "\n"
	}
	if stop < len(body) {
		mid += "\n"
	}
	return head + mid + body[stop:], nil
}

// parseHeading parses an ATX heading line: up to three spaces, one to six
// '#', then a space or the end of the line.
func parseHeading(line string) (level int, text string, ok bool) {
	s := strings.TrimLeft(line, " ")
	if len(line)-len(s) > 3 {
		return 0, "", false
	}
	for level < len(s) && s[level] == '#' {
		level++
	}
	if level == 0 || level > 6 || (level < len(s) && s[level] != ' ' && s[level] != '\t') {
		return 0, "", false
	}
	text = strings.TrimSpace(s[level:])
	// A closing sequence of '#' is not part of the text.
	if t := strings.TrimRight(text, "#"); t != text && (t == "" || strings.HasSuffix(t, " ") || strings.HasSuffix(t, "\t")) {
		text = strings.TrimSpace(t)
	}
	return level, text, true
}

// fenceOf returns the fence ("```", "~~~~", …) a line opens or closes, or "".
func fenceOf(line string) string {
	s := strings.TrimLeft(line, " ")
	if len(line)-len(s) > 3 || len(s) < 3 || (s[0] != '`' && s[0] != '~') {
		return ""
	}
	n := 0
	for n < len(s) && s[n] == s[0] {
		n++
	}
	if n < 3 {
		return ""
	}
	return s[:n]
}

func withNewline(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}
