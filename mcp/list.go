package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"mnemo/engine"
)

type listIn struct {
	Folder string `json:"folder,omitempty" jsonschema:"folder relative to the memory folder; default the memory folder itself; maenifold's path is accepted too"`
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
		aliases:    map[string]string{"path": "folder"},
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
			fmt.Fprintf(&b, "%s: %s, %s\n", name, plural(len(o.Folders), "folder", "folders"), plural(len(o.Files), "memory", "memories"))
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
	Limit          int    `json:"limit,omitempty" jsonschema:"at most this many memories, 1 to 200"`
	Timespan       string `json:"timespan,omitempty" jsonschema:"only memories modified or read within this long ago: 30m, 24h, 7d, 2w, or maenifold's d.hh:mm:ss (1.00:00:00 is a day); default no bound"`
	Filter         string `json:"filter,omitempty" jsonschema:"all (the default), thinking (memories under thinking/), assumptions (under assumptions/) or memory (all the others)"`
	IncludeContent bool   `json:"includeContent,omitempty" jsonschema:"add each memory's markdown body (listing does not count as reading it)"`
}

// maxRecentContent caps each memory's content in RecentActivity, so that
// one long memory does not push the others out of the response.
const maxRecentContent = 16 << 10

// recentFilters are RecentActivity's filters, maenifold's: its thinking
// sessions live under thinking/ and its assumption ledger under
// assumptions/; "memory" is everything else.
var recentFilters = map[string]func(path string) bool{
	"all":         nil,
	"thinking":    func(p string) bool { return strings.HasPrefix(p, "thinking/") },
	"assumptions": func(p string) bool { return strings.HasPrefix(p, "assumptions/") },
	"memory": func(p string) bool {
		return !strings.HasPrefix(p, "thinking/") && !strings.HasPrefix(p, "assumptions/")
	},
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
	Content  string    `json:"content,omitempty" jsonschema:"the markdown body, with includeContent"`
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
		desc:       "List the memories modified or read most recently, newest first, optionally only within a timespan (24h, 7d, …) or one kind (filter), with their content if asked.",
		readOnly:   true,
		idempotent: true,
		schema: func(in *jsonschema.Schema) {
			l := property(in, "limit")
			l.Default, l.Minimum, l.Maximum = json.RawMessage("20"), ptr(1.0), ptr(float64(engine.MaxPageSize))
			property(in, "timespan").MaxLength = ptr(32)
			f := property(in, "filter")
			f.Default, f.Enum = json.RawMessage(`"all"`), []any{"all", "thinking", "assumptions", "memory"}
			property(in, "includeContent").Default = json.RawMessage("false")
		},
		run: func(ctx context.Context, in *recentIn) (*recentOut, error) {
			if in.Limit < 1 || in.Limit > engine.MaxPageSize {
				return nil, fmt.Errorf("limit must be between 1 and %d (got %d)", engine.MaxPageSize, in.Limit)
			}
			span, err := parseSpan(in.Timespan)
			if err != nil {
				return nil, err
			}
			keep, ok := recentFilters[strings.ToLower(strings.TrimSpace(in.Filter))]
			if !ok {
				return nil, fmt.Errorf("filter %.40q: want all, thinking, assumptions or memory", in.Filter)
			}
			acts, err := s.eng.RecentWhere(ctx, in.Limit, span, keep)
			if err != nil {
				return nil, err
			}
			out := &recentOut{Memories: make([]recentItem, 0, len(acts))}
			for _, a := range acts {
				it := recentItem{URI: a.URI, Title: a.Title, Event: a.Event, At: a.At, Modified: a.Modified, LastRead: a.LastRead}
				if in.IncludeContent {
					m, err := s.eng.Peek(ctx, a.Path)
					if err != nil {
						return nil, fmt.Errorf("content of %s: %w", a.URI, err)
					}
					it.Content = m.Content
					if len(it.Content) > maxRecentContent {
						it.Content = clip(it.Content, maxRecentContent) +
							fmt.Sprintf("\n(cut to %d of %d bytes; ReadMemory returns it whole)", maxRecentContent, len(m.Content))
					}
				}
				out.Memories = append(out.Memories, it)
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
				if m.Content != "" {
					b.WriteString(m.Content + "\n\n")
				}
			}
			if o.Note != "" {
				b.WriteString("(" + o.Note + ")")
			}
			return strings.TrimRight(b.String(), "\n")
		},
	}
}

// parseSpan reads a timespan: a Go duration ("90m", "36h"), a whole
// number of days or weeks ("7d", "2w"), or .NET's TimeSpan form, which
// maenifold takes: [d.]hh:mm[:ss[.fffffff]] ("1.00:00:00" is a day,
// "12:30:00" twelve and a half hours). "" is no bound.
func parseSpan(s string) (time.Duration, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return 0, nil
	}
	bad := fmt.Errorf("timespan %.32q: want a positive duration such as 30m, 24h, 7d, 2w or 1.00:00:00", s)
	var d time.Duration
	if strings.Contains(s, ":") {
		var ok bool
		if d, ok = parseDotNetSpan(s); !ok || d <= 0 {
			return 0, bad
		}
		return d, nil
	}
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

// dotNetSpan is .NET's invariant TimeSpan format without a sign:
// [d.]hh:mm[:ss[.fffffff]].
var dotNetSpan = regexp.MustCompile(`^(?:(\d{1,8})\.)?(\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,7}))?)?$`)

// parseDotNetSpan reads a TimeSpan as .NET's TimeSpan.Parse does: hours
// below 24, minutes and seconds below 60, the fraction in seconds.
func parseDotNetSpan(s string) (time.Duration, bool) {
	m := dotNetSpan.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	num := func(v string) int {
		n, _ := strconv.Atoi(v) // the pattern allows only digits; "" is 0
		return n
	}
	days, h, mi, sec := num(m[1]), num(m[2]), num(m[3]), num(m[4])
	if h > 23 || mi > 59 || sec > 59 || days > 100*365 {
		return 0, false
	}
	d := time.Duration(days)*24*time.Hour + time.Duration(h)*time.Hour + time.Duration(mi)*time.Minute + time.Duration(sec)*time.Second
	if f := m[5]; f != "" {
		d += time.Duration(num(f+strings.Repeat("0", 7-len(f)))) * 100 // 100 ns ticks
	}
	return d, true
}
