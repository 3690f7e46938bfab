package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"mnemo/engine"
)

// memoryRef is what the write tools return: where the memory now is and
// the checksum to pass to the next EditMemory.
type memoryRef struct {
	URI      string    `json:"uri"`
	Path     string    `json:"path" jsonschema:"relative to the memory folder"`
	Title    string    `json:"title"`
	Created  time.Time `json:"created,omitzero"`
	Modified time.Time `json:"modified,omitzero"`
	Tags     []string  `json:"tags"`
	Checksum string    `json:"checksum" jsonschema:"SHA-256 of the file as written"`
}

func refOf(m engine.Memory) *memoryRef {
	return &memoryRef{URI: m.URI, Path: m.Path, Title: m.Title, Created: m.Created, Modified: m.Modified, Tags: m.Tags, Checksum: m.Checksum}
}

type writeIn struct {
	Title     string   `json:"title" jsonschema:"the memory's title: one line, at most 512 bytes; the file name is made from it"`
	Content   string   `json:"content" jsonschema:"markdown body, without frontmatter"`
	Folder    string   `json:"folder,omitempty" jsonschema:"folder relative to the memory folder, created if missing; default the memory folder itself"`
	Tags      []string `json:"tags,omitempty" jsonschema:"tags, stored lowercase without '#'"`
	Overwrite bool     `json:"overwrite,omitempty" jsonschema:"replace the memory with the same title in this folder (its created date is kept)"`
}

func (s *server) writeTool() tool[writeIn, memoryRef] {
	return tool[writeIn, memoryRef]{
		name:  "WriteMemory",
		title: "Write a memory",
		desc: "Create a memory: a markdown file with frontmatter (title, created, modified, tags) named after its title, in any script. " +
			"It is searchable as soon as this returns. A memory with the same title in the same folder is refused unless overwrite is true. " +
			"Write [[WikiLinks]] in the content to name the concepts it is about ([[connection pooling]], [[Project Alpha|the project]]): they build the concept graph " +
			"that BuildContext, Visualize and FindSimilarConcepts walk, linking memories that mention the same concept.",
		destructive: false,
		schema: func(in *jsonschema.Schema) {
			property(in, "tags").MaxItems = ptr(engine.MaxTags)
		},
		run: func(ctx context.Context, in *writeIn) (*memoryRef, error) {
			if len(in.Folder) > maxPathBytes {
				return nil, fmt.Errorf("folder is %d bytes, over the %d-byte limit", len(in.Folder), maxPathBytes)
			}
			m, err := s.eng.Write(ctx, engine.WriteRequest{Title: in.Title, Content: in.Content, Folder: in.Folder, Tags: in.Tags, Overwrite: in.Overwrite})
			if err != nil {
				return nil, err
			}
			return refOf(m), nil
		},
		text: func(o *memoryRef) string {
			return fmt.Sprintf("Wrote %q as %s.\nChecksum: %s", o.Title, o.URI, o.Checksum)
		},
	}
}

type editIn struct {
	Identifier    string `json:"identifier" jsonschema:"the memory: memory:// URI, relative path or exact title"`
	Operation     string `json:"operation" jsonschema:"append, prepend, find_replace or replace_section"`
	Content       string `json:"content" jsonschema:"the new text: appended, prepended, the replacement for find, or the new body of the section"`
	Find          string `json:"find,omitempty" jsonschema:"find_replace: the exact text to replace (every occurrence); maenifold's findText is accepted too"`
	ExpectedCount int    `json:"expectedCount,omitempty" jsonschema:"find_replace: how many occurrences there must be; the edit is refused otherwise. 0 means at least one"`
	Section       string `json:"section,omitempty" jsonschema:"replace_section: the heading whose body to replace, e.g. 'Status' or '## Status' to pin the level; maenifold's sectionName is accepted too"`
	Checksum      string `json:"checksum,omitempty" jsonschema:"the checksum ReadMemory returned (64 hex digits); the edit is refused if the memory changed since"`
}

var editOps = []any{string(engine.Append), string(engine.Prepend), string(engine.FindReplace), string(engine.ReplaceSection)}

func (s *server) editTool() tool[editIn, memoryRef] {
	return tool[editIn, memoryRef]{
		name:  "EditMemory",
		title: "Edit a memory",
		desc: "Change a memory's body: append or prepend text, replace exact text (find_replace, optionally requiring an exact number of occurrences), " +
			"or replace the body under a heading (replace_section). Updates its modified date; searchable as soon as this returns. Pass the checksum from ReadMemory to refuse the edit if the memory changed meanwhile.",
		destructive: true,
		schema: func(in *jsonschema.Schema) {
			property(in, "operation").Enum = editOps
			property(in, "expectedCount").Minimum = ptr(0.0)
			property(in, "checksum").Pattern = checksumPattern
		},
		aliases: map[string]string{"findText": "find", "sectionName": "section"},
		run: func(ctx context.Context, in *editIn) (*memoryRef, error) {
			if err := checkIdentifier(in.Identifier); err != nil {
				return nil, err
			}
			op := engine.EditOp(strings.ToLower(strings.TrimSpace(in.Operation)))
			switch op {
			case engine.Append, engine.Prepend, engine.FindReplace, engine.ReplaceSection:
			default:
				return nil, fmt.Errorf("operation %.40q: want append, prepend, find_replace or replace_section", in.Operation)
			}
			sum, err := hexChecksum(in.Checksum)
			if err != nil {
				return nil, err
			}
			m, err := s.eng.Edit(ctx, engine.EditRequest{
				ID: in.Identifier, Op: op, Content: in.Content, Find: in.Find,
				ExpectedCount: in.ExpectedCount, Section: in.Section, Checksum: sum,
			})
			if err != nil {
				return nil, err
			}
			return refOf(m), nil
		},
		text: func(o *memoryRef) string { return fmt.Sprintf("Edited %s.\nChecksum: %s", o.URI, o.Checksum) },
	}
}

// checksumPattern is what EditMemory's checksum may look like: the 64 hex
// digits ReadMemory and the write tools return, or the same SHA-256 in
// base64, the form maenifold's tools print.
const checksumPattern = `^\s*([0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)\s*$`

// hexChecksum reads a checksum argument as hex: "" (no check), 64 hex
// digits, or base64 of the 32 bytes.
func hexChecksum(c string) (string, error) {
	c = strings.TrimSpace(c)
	switch {
	case c == "" || isHex64(c):
		return c, nil
	case len(c) == 44:
		if b, err := base64.StdEncoding.DecodeString(c); err == nil && len(b) == sha256.Size {
			return hex.EncodeToString(b), nil
		}
	}
	return "", fmt.Errorf("checksum must be the 64 hex digits ReadMemory returned")
}

func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	return true
}

type deleteIn struct {
	Identifier string `json:"identifier" jsonschema:"the memory: memory:// URI, relative path or exact title"`
	Confirm    bool   `json:"confirm" jsonschema:"must be true: deleting removes the file"`
}

type deleteOut struct {
	URI     string `json:"uri"`
	Deleted bool   `json:"deleted"`
}

func (s *server) deleteTool() tool[deleteIn, deleteOut] {
	return tool[deleteIn, deleteOut]{
		name:        "DeleteMemory",
		title:       "Delete a memory",
		desc:        "Delete a memory file and remove it from the index. Requires confirm: true.",
		destructive: true,
		schema: func(in *jsonschema.Schema) {
			property(in, "confirm").Const = ptr[any](true)
		},
		run: func(ctx context.Context, in *deleteIn) (*deleteOut, error) {
			if err := checkIdentifier(in.Identifier); err != nil {
				return nil, err
			}
			rel, err := s.eng.Resolve(in.Identifier)
			if err != nil {
				return nil, err
			}
			if !in.Confirm {
				return nil, fmt.Errorf("set confirm to true to delete %s", engine.URI(rel))
			}
			if err := s.eng.Delete(ctx, in.Identifier); err != nil {
				return nil, err
			}
			return &deleteOut{URI: engine.URI(rel), Deleted: true}, nil
		},
		text: func(o *deleteOut) string { return "Deleted " + o.URI + "." },
	}
}

type moveIn struct {
	Identifier  string `json:"identifier" jsonschema:"the memory: memory:// URI, relative path or exact title; maenifold's source is accepted too"`
	Destination string `json:"destination" jsonschema:"new path relative to the memory folder ('.md' optional), or a folder ending in '/' to keep the file name"`
}

type moveOut struct {
	From string `json:"from" jsonschema:"the memory's old URI"`
	memoryRef
}

func (s *server) moveTool() tool[moveIn, moveOut] {
	return tool[moveIn, moveOut]{
		name:    "MoveMemory",
		title:   "Move a memory",
		desc:    "Move or rename a memory within the memory folder. It keeps its read time, so its recency ranking is unchanged. The destination must not exist (a rename that changes only letter case is allowed).",
		aliases: map[string]string{"source": "identifier"},
		run: func(ctx context.Context, in *moveIn) (*moveOut, error) {
			if err := checkIdentifier(in.Identifier); err != nil {
				return nil, err
			}
			switch {
			case strings.TrimSpace(in.Destination) == "":
				return nil, fmt.Errorf("destination is required")
			case len(in.Destination) > maxPathBytes:
				return nil, fmt.Errorf("destination is %d bytes, over the %d-byte limit", len(in.Destination), maxPathBytes)
			}
			rel, err := s.eng.Resolve(in.Identifier)
			if err != nil {
				return nil, err
			}
			m, err := s.eng.Move(ctx, in.Identifier, in.Destination)
			if err != nil {
				return nil, err
			}
			return &moveOut{From: engine.URI(rel), memoryRef: *refOf(m)}, nil
		},
		text: func(o *moveOut) string { return fmt.Sprintf("Moved %s to %s.", o.From, o.URI) },
	}
}
