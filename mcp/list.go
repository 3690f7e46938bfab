package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

type listIn struct {
	Folder string `json:"folder,omitempty" jsonschema:"folder relative to the memory folder; default the memory folder itself"`
}

type listOut struct {
	Folder    string       `json:"folder" jsonschema:"relative to the memory folder; empty for the memory folder itself"`
	Folders   []listFolder `json:"folders"`
	Files     []listFile   `json:"files"`
	Truncated bool         `json:"truncated,omitempty" jsonschema:"entries were cut to fit the response limit"`
	Note      string       `json:"note,omitempty"`
	total     [2]int       // folders and files before any cut
}

type listFolder struct {
	Path     string `json:"path"`
	Memories int    `json:"memories" jsonschema:"memories at any depth below it"`
}

type listFile struct {
	URI         string    `json:"uri"`
	Title       string    `json:"title"`
	Created     time.Time `json:"created,omitzero"`
	Modified    time.Time `json:"modified,omitzero"`
	LastRead    time.Time `json:"lastRead,omitzero"`
	Size        int64     `json:"size" jsonschema:"bytes"`
	DecayWeight float64   `json:"decayWeight" jsonschema:"recency weight now, 0 to 1: 1 within the grace period, then fading"`
	Indexed     bool      `json:"indexed" jsonschema:"false until a sync has seen the file"`
}

func (o *listOut) units() int { return len(o.Folders) + len(o.Files) }

func (o *listOut) keep(n int) {
	if n >= o.units() {
		return
	}
	if n < len(o.Folders) {
		o.Folders, o.Files = o.Folders[:n], o.Files[:0]
	} else {
		o.Files = o.Files[:n-len(o.Folders)]
	}
	o.Truncated = true
	o.Note = fmt.Sprintf("response cut to %d of %d folders and %d of %d files to stay under the response size limit; list a subfolder", len(o.Folders), o.total[0], len(o.Files), o.total[1])
}

func (s *server) listTool() tool[listIn, listOut] {
	return tool[listIn, listOut]{
		name:       "ListMemories",
		title:      "List a folder",
		desc:       "List one folder of the memory folder: its subfolders (with how many memories each holds) and its memory files with title, dates, size and current recency weight.",
		readOnly:   true,
		idempotent: true,
		run: func(ctx context.Context, in *listIn) (*listOut, error) {
			if len(in.Folder) > maxPathBytes {
				return nil, fmt.Errorf("folder is %d bytes, over the %d-byte limit", len(in.Folder), maxPathBytes)
			}
			l, err := s.eng.List(ctx, in.Folder)
			if err != nil {
				return nil, err
			}
			out := &listOut{Folder: l.Folder, Folders: make([]listFolder, 0, len(l.Folders)), Files: make([]listFile, 0, len(l.Files))}
			for _, f := range l.Folders {
				out.Folders = append(out.Folders, listFolder{Path: f.Path, Memories: f.Memories})
			}
			for _, f := range l.Files {
				out.Files = append(out.Files, listFile{
					URI: f.URI, Title: f.Title, Created: f.Created, Modified: f.Modified, LastRead: f.LastRead,
					Size: f.Size, DecayWeight: f.DecayWeight, Indexed: f.Indexed,
				})
			}
			out.total = [2]int{len(out.Folders), len(out.Files)}
			return out, nil
		},
		text: func(o *listOut) string {
			var b strings.Builder
			name := o.Folder
			if name == "" {
				name = "(memory folder)"
			}
			fmt.Fprintf(&b, "%s: %d folders, %d memories\n", name, len(o.Folders), len(o.Files))
			for _, f := range o.Folders {
				fmt.Fprintf(&b, "%s/ (%d)\n", f.Path, f.Memories)
			}
			for _, f := range o.Files {
				fmt.Fprintf(&b, "%s — %s (modified %s)\n", f.Title, f.URI, f.Modified.Format(time.DateOnly))
			}
			if o.Note != "" {
				b.WriteString("(" + o.Note + ")")
			}
			return strings.TrimRight(b.String(), "\n")
		},
	}
}

type recentIn struct {
	Limit    int    `json:"limit,omitempty" jsonschema:"at most this many memories, 1 to 200"`
	Timespan string `json:"timespan,omitempty" jsonschema:"only memories modified or read within this long ago: 30m, 24h, 7d, 2w; default no bound"`
}

type recentOut struct {
	Memories  []recentItem `json:"memories" jsonschema:"most recent first"`
	Truncated bool         `json:"truncated,omitempty" jsonschema:"entries were cut to fit the response limit"`
	Note      string       `json:"note,omitempty"`
}

type recentItem struct {
	URI      string    `json:"uri"`
	Title    string    `json:"title"`
	Event    string    `json:"event" jsonschema:"modified or read, whichever is later"`
	At       time.Time `json:"at"`
	Modified time.Time `json:"modified"`
	LastRead time.Time `json:"lastRead,omitzero"`
}

func (o *recentOut) units() int { return len(o.Memories) }

func (o *recentOut) keep(n int) {
	if n >= len(o.Memories) {
		return
	}
	o.Note = fmt.Sprintf("response cut to %d of %d memories to stay under the response size limit; ask for a smaller limit", n, len(o.Memories))
	o.Memories, o.Truncated = o.Memories[:n], true
}

func (s *server) recentTool() tool[recentIn, recentOut] {
	return tool[recentIn, recentOut]{
		name:       "RecentActivity",
		title:      "Recent activity",
		desc:       "List the memories modified or read most recently, newest first, optionally only within a timespan (24h, 7d, …).",
		readOnly:   true,
		idempotent: true,
		schema: func(in *jsonschema.Schema) {
			l := property(in, "limit")
			l.Default, l.Minimum, l.Maximum = json.RawMessage("20"), ptr(1.0), ptr(float64(maxPageSize))
			property(in, "timespan").MaxLength = ptr(32)
		},
		run: func(ctx context.Context, in *recentIn) (*recentOut, error) {
			if in.Limit < 1 || in.Limit > maxPageSize {
				return nil, fmt.Errorf("limit must be between 1 and %d (got %d)", maxPageSize, in.Limit)
			}
			span, err := parseSpan(in.Timespan)
			if err != nil {
				return nil, err
			}
			acts, err := s.eng.Recent(ctx, in.Limit, span)
			if err != nil {
				return nil, err
			}
			out := &recentOut{Memories: make([]recentItem, 0, len(acts))}
			for _, a := range acts {
				out.Memories = append(out.Memories, recentItem{URI: a.URI, Title: a.Title, Event: a.Event, At: a.At, Modified: a.Modified, LastRead: a.LastRead})
			}
			return out, nil
		},
		text: func(o *recentOut) string {
			if len(o.Memories) == 0 {
				return "No recent activity."
			}
			var b strings.Builder
			for _, m := range o.Memories {
				fmt.Fprintf(&b, "%s %s — %s (%s)\n", m.At.UTC().Format("2006-01-02 15:04"), m.Event, m.Title, m.URI)
			}
			if o.Note != "" {
				b.WriteString("(" + o.Note + ")")
			}
			return strings.TrimRight(b.String(), "\n")
		},
	}
}

// parseSpan reads a timespan: a Go duration ("90m", "36h") or a whole
// number of days or weeks ("7d", "2w"). "" is no bound.
func parseSpan(s string) (time.Duration, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return 0, nil
	}
	bad := fmt.Errorf("timespan %.32q: want a positive duration such as 30m, 24h, 7d or 2w", s)
	var d time.Duration
	if n, unit := strings.TrimRight(s, "dw"), s[len(strings.TrimRight(s, "dw")):]; unit == "d" || unit == "w" {
		k, err := strconv.Atoi(n)
		if err != nil || k <= 0 || k > 100*365 {
			return 0, bad
		}
		d = time.Duration(k) * 24 * time.Hour
		if unit == "w" {
			d *= 7
		}
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, bad
		}
	}
	if d <= 0 {
		return 0, bad
	}
	return d, nil
}
