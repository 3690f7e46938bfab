package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

type readIn struct {
	Identifier      string `json:"identifier" jsonschema:"a memory:// URI, a path relative to the memory folder (with or without .md), or an exact title; at most 4096 bytes"`
	IncludeChecksum bool   `json:"includeChecksum,omitempty" jsonschema:"return the checksum EditMemory takes to refuse a stale edit"`
}

type readOut struct {
	URI       string    `json:"uri"`
	Title     string    `json:"title"`
	Created   time.Time `json:"created,omitzero"`
	Modified  time.Time `json:"modified,omitzero"`
	Tags      []string  `json:"tags"`
	Checksum  string    `json:"checksum,omitempty" jsonschema:"SHA-256 of the file; pass it to EditMemory to edit only this version"`
	Size      int       `json:"size" jsonschema:"bytes of content, before any cut"`
	Content   string    `json:"content" jsonschema:"the markdown body, without frontmatter"`
	Truncated bool      `json:"truncated,omitempty" jsonschema:"content was cut to fit the response limit"`
	Note      string    `json:"note,omitempty"`
}

func (o *readOut) units() int { return len(o.Content) }

func (o *readOut) keep(n int) {
	if n >= len(o.Content) {
		return
	}
	for n > 0 && n < len(o.Content) && !isRuneStart(o.Content[n]) {
		n--
	}
	o.Content, o.Truncated = o.Content[:n], true
	o.Note = fmt.Sprintf("content cut to its first %d of %d bytes to stay under the response size limit", n, o.Size)
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

func (s *server) readTool() tool[readIn, readOut] {
	return tool[readIn, readOut]{
		name:  "ReadMemory",
		title: "Read a memory",
		desc: "Read one memory: its title, dates, tags, checksum and markdown content (without frontmatter). " +
			"Reading marks the memory as recently used, which ranks it higher in later searches.",
		readOnly:   true,
		idempotent: true,
		schema: func(in *jsonschema.Schema) {
			property(in, "includeChecksum").Default = json.RawMessage("true")
		},
		run:  s.read,
		text: readText,
	}
}

// readText is ReadMemory for clients that show the model only text: the
// title, where the memory is, its dates, tags and full checksum (what
// EditMemory needs), then the content.
func readText(o *readOut) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\nURI: %s\n", o.Title, o.URI)
	if !o.Created.IsZero() {
		fmt.Fprintf(&b, "Created: %s\n", o.Created.UTC().Format(time.RFC3339))
	}
	if !o.Modified.IsZero() {
		fmt.Fprintf(&b, "Modified: %s\n", o.Modified.UTC().Format(time.RFC3339))
	}
	if len(o.Tags) > 0 {
		fmt.Fprintf(&b, "Tags: %s\n", strings.Join(o.Tags, ", "))
	}
	if o.Checksum != "" {
		fmt.Fprintf(&b, "Checksum: %s\n", o.Checksum)
	}
	b.WriteString("\n---\n\n")
	b.WriteString(o.Content)
	if o.Note != "" {
		b.WriteString("\n\n(" + o.Note + ")")
	}
	return b.String()
}

func (s *server) read(ctx context.Context, in *readIn) (*readOut, error) {
	if err := checkIdentifier(in.Identifier); err != nil {
		return nil, err
	}
	m, err := s.eng.Read(ctx, in.Identifier)
	if err != nil {
		return nil, err
	}
	out := &readOut{
		URI: m.URI, Title: m.Title, Created: m.Created, Modified: m.Modified, Tags: m.Tags,
		Size: len(m.Content), Content: m.Content,
	}
	if in.IncludeChecksum {
		out.Checksum = m.Checksum
	}
	// Cut what cannot fit at all now, so that fitting it exactly later
	// works on at most one response's worth of text.
	out.keep(s.opts.MaxResponseBytes)
	return out, nil
}

// checkIdentifier refuses identifiers no memory can have, before the
// engine quotes them back in an error.
func checkIdentifier(id string) error {
	switch {
	case strings.TrimSpace(id) == "":
		return fmt.Errorf("identifier is required")
	case len(id) > maxPathBytes:
		return fmt.Errorf("identifier is %d bytes, over the %d-byte limit", len(id), maxPathBytes)
	}
	return nil
}
