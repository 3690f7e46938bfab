package markdown

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestSplitFrontmatter(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		front     string
		body      string
		ok        bool
		sameInput bool // body must be the input itself
	}{
		{name: "basic", in: "---\ntitle: x\n---\nbody\n", front: "title: x\n", body: "body\n", ok: true},
		{name: "dots closer", in: "---\ntitle: x\n...\nbody", front: "title: x\n", body: "body", ok: true},
		{name: "CRLF", in: "---\r\ntitle: x\r\n---\r\nbody\r\n", front: "title: x\r\n", body: "body\r\n", ok: true},
		{name: "BOM", in: "\uFEFF---\ntitle: x\n---\nbody", front: "title: x\n", body: "body", ok: true},
		{name: "trailing spaces on fences", in: "--- \ntitle: x\n---\t\nbody", front: "title: x\n", body: "body", ok: true},
		{name: "empty block", in: "---\n---\nbody", front: "", body: "body", ok: true},
		{name: "closer at EOF", in: "---\ntitle: x\n---", front: "title: x\n", body: "", ok: true},
		{name: "no frontmatter", in: "# Title\n---\n", body: "# Title\n---\n", sameInput: true},
		{name: "four dashes", in: "----\ntitle: x\n----\nbody", body: "----\ntitle: x\n----\nbody", sameInput: true},
		{name: "no closer", in: "---\ntitle: x\nbody\n", body: "---\ntitle: x\nbody\n", sameInput: true},
		{name: "only opener", in: "---", body: "---", sameInput: true},
		{name: "empty", in: "", body: ""},
		{name: "dots do not open", in: "...\ntitle: x\n...\nbody", body: "...\ntitle: x\n...\nbody", sameInput: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			front, body, ok := SplitFrontmatter([]byte(tt.in))
			if ok != tt.ok || string(front) != tt.front || string(body) != tt.body {
				t.Errorf("SplitFrontmatter(%q) = %q, %q, %v; want %q, %q, %v",
					tt.in, front, body, ok, tt.front, tt.body, tt.ok)
			}
		})
	}
}

func TestParseFrontmatter(t *testing.T) {
	day := time.Date(2024, 1, 5, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		in       string
		title    string
		tags     []string
		created  time.Time
		modified time.Time
		meta     map[string]any
		body     string
		text     string
		warning  string // a substring of the only warning; "" means no warnings
	}{
		{
			name:  "list tags and meta",
			in:    "---\ntitle: Design notes\ntags: [Go, Search, go]\nauthor: sam\n---\nbody\n",
			title: "Design notes", tags: []string{"go", "search"},
			meta: map[string]any{"author": "sam"}, body: "body\n", text: "body",
		},
		{
			name:  "block list tags with hashes",
			in:    "---\ntags:\n  - alpha\n  - '#Beta'\n  - 42\n---\nx",
			title: "note", tags: []string{"alpha", "beta", "42"}, body: "x", text: "x",
		},
		{
			name:  "comma-separated tags",
			in:    "---\ntags: one, Two ,three four\n---\nx",
			title: "note", tags: []string{"one", "two", "three four"}, body: "x", text: "x",
		},
		{
			name:  "space-separated hash tags",
			in:    "---\ntags: \"#one #two\"\n---\nx",
			title: "note", tags: []string{"one", "two"}, body: "x", text: "x",
		},
		{
			name:    "Unix milliseconds and seconds (Dendron)",
			in:      "---\ncreated: 1595003088839\nmodified: 1704412800\n---\nx",
			title:   "note",
			created: time.UnixMilli(1595003088839).UTC(), modified: day, body: "x", text: "x",
		},
		{
			name:    "plain dates",
			in:      "---\ncreated: 2024-01-05\nmodified: \"2024-01-06\"\n---\nx",
			title:   "note",
			created: day, modified: day.AddDate(0, 0, 1), body: "x", text: "x",
		},
		{
			name:    "RFC 3339 with offset goes to UTC",
			in:      "---\ncreated: 2024-01-05T10:00:00+02:00\nmodified: \"2024-01-05T10:00:00.5Z\"\n---\nx",
			title:   "note",
			created: day.Add(8 * time.Hour), modified: day.Add(10*time.Hour + 500*time.Millisecond),
			body: "x", text: "x",
		},
		{
			name:    "date and time with a space",
			in:      "---\ncreated: \"2024-01-05 15:04:05\"\nmodified: 2024-01-05 15:04:05\n---\nx",
			title:   "note",
			created: day.Add(15*time.Hour + 4*time.Minute + 5*time.Second), modified: day.Add(15*time.Hour + 4*time.Minute + 5*time.Second),
			body: "x", text: "x",
		},
		{
			name:  "unparseable date",
			in:    "---\ncreated: foo\n---\nx",
			title: "note", body: "x", text: "x", warning: `created: cannot parse "foo"`,
		},
		{
			name:  "numeric title",
			in:    "---\ntitle: 2024\n---\nx",
			title: "2024", body: "x", text: "x",
		},
		{
			name:  "malformed YAML keeps the body after the closer",
			in:    "---\ntitle: [unclosed\n---\n# Heading\n\nbody",
			title: "Heading", body: "# Heading\n\nbody", text: "Heading\nbody",
			warning: "malformed frontmatter: yaml:",
		},
		{
			name:  "frontmatter that is not a mapping",
			in:    "---\njust a sentence\n---\nbody",
			title: "note", body: "body", text: "body", warning: "malformed frontmatter: not a key: value mapping",
		},
		{
			name:  "missing closer: the whole file is the body",
			in:    "---\ntitle: x\n\nSome text.",
			title: "note", body: "---\ntitle: x\n\nSome text.", text: "title: x\nSome text.",
			warning: `no closing "---"`,
		},
		{
			name:  "CRLF line endings",
			in:    "---\r\ntitle: Windows\r\ntags: [a]\r\n---\r\nline one\r\nline two\r\n",
			title: "Windows", tags: []string{"a"}, body: "line one\r\nline two\r\n", text: "line one line two",
		},
		{
			name:  "byte order mark",
			in:    "\uFEFF---\ntitle: BOM\n---\nx",
			title: "BOM", body: "x", text: "x",
		},
		{
			name:  "duplicate key keeps the last value",
			in:    "---\ntitle: first\ntitle: second\n---\nx",
			title: "second", body: "x", text: "x", warning: `duplicate key "title"`,
		},
		{
			name:  "empty and null frontmatter",
			in:    "---\n~\n---\nx",
			title: "note", body: "x", text: "x",
		},
		{
			name:  "nested meta with non-string keys",
			in:    "---\nrefs: {1: one, b: [x, 2]}\n---\nx",
			title: "note", meta: map[string]any{"refs": map[string]any{"1": "one", "b": []any{"x", 2}}},
			body: "x", text: "x",
		},
		{
			name:  "NaN and infinity kept as text so Meta stays JSON",
			in:    "---\nratio: .nan\nlimit: -.inf\nn: 1.5\n---\nx",
			title: "note", meta: map[string]any{"ratio": ".nan", "limit": "-.inf", "n": 1.5},
			body: "x", text: "x",
		},
		{
			name:  "alias bomb is refused, file still parsed",
			in:    "---\na: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n---\nx",
			title: "note", body: "x", text: "x", warning: "excessive aliasing",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Parse("folder/note.md", []byte(tt.in), Options{})
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if d.Title != tt.title {
				t.Errorf("Title = %q, want %q", d.Title, tt.title)
			}
			if !reflect.DeepEqual(d.Tags, tt.tags) {
				t.Errorf("Tags = %q, want %q", d.Tags, tt.tags)
			}
			if !d.Created.Equal(tt.created) || !d.Modified.Equal(tt.modified) {
				t.Errorf("Created, Modified = %v, %v; want %v, %v", d.Created, d.Modified, tt.created, tt.modified)
			}
			if d.Created.Location() != time.UTC || d.Modified.Location() != time.UTC {
				t.Errorf("times not in UTC: %v, %v", d.Created.Location(), d.Modified.Location())
			}
			if !reflect.DeepEqual(d.Meta, tt.meta) {
				t.Errorf("Meta = %#v, want %#v", d.Meta, tt.meta)
			}
			if d.Body != tt.body {
				t.Errorf("Body = %q, want %q", d.Body, tt.body)
			}
			if d.Text != tt.text {
				t.Errorf("Text = %q, want %q", d.Text, tt.text)
			}
			switch {
			case tt.warning == "" && len(d.Warnings) > 0:
				t.Errorf("unexpected warnings %q", d.Warnings)
			case tt.warning != "" && (len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], tt.warning)):
				t.Errorf("Warnings = %q, want one containing %q", d.Warnings, tt.warning)
			}
			for _, w := range d.Warnings {
				if strings.Contains(w, "\n") {
					t.Errorf("warning spans lines: %q", w)
				}
			}
			if _, err := json.Marshal(d); err != nil {
				t.Errorf("Doc does not marshal to JSON: %v", err)
			}
		})
	}
}
