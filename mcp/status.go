package mcp

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"mnemo/decay"
	"mnemo/engine"
	"mnemo/engine/sessions"
)

type syncIn struct {
	Full bool `json:"full,omitempty" jsonschema:"rebuild both indexes from scratch instead of indexing only what changed"`
}

type skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

type warning struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

type syncOut struct {
	Full       bool      `json:"full"`
	Added      []string  `json:"added"`
	Updated    []string  `json:"updated"`
	Removed    []string  `json:"removed"`
	Unchanged  int       `json:"unchanged"`
	Skipped    []skipped `json:"skipped" jsonschema:"files not indexed, and why"`
	Warnings   []warning `json:"warnings" jsonschema:"problems in files indexed anyway"`
	Chunks     int       `json:"chunks" jsonschema:"chunks embedded by this sync"`
	DurationMs float64   `json:"durationMs"`
	// Sessions is what the sync did to the agent-sessions index, if there is one.
	Sessions  *sessions.Report `json:"sessions,omitempty"`
	Truncated bool             `json:"truncated,omitempty" jsonschema:"lists were cut to fit the response limit"`
	Note      string           `json:"note,omitempty"`
	counts    [5]int
}

func (o *syncOut) units() int {
	return len(o.Added) + len(o.Updated) + len(o.Removed) + len(o.Skipped) + len(o.Warnings)
}

func (o *syncOut) keep(n int) {
	if n >= o.units() {
		return
	}
	take := func(l int) int { k := min(n, l); n -= k; return k }
	o.Added = o.Added[:take(len(o.Added))]
	o.Updated = o.Updated[:take(len(o.Updated))]
	o.Removed = o.Removed[:take(len(o.Removed))]
	o.Skipped = o.Skipped[:take(len(o.Skipped))]
	o.Warnings = o.Warnings[:take(len(o.Warnings))]
	o.Truncated = true
	c := o.counts
	o.Note = fmt.Sprintf("lists cut to stay under the response size limit; in all %d added, %d updated, %d removed, %d skipped, %d warnings (MemoryStatus lists skips and warnings)", c[0], c[1], c[2], c[3], c[4])
}

func (s *server) syncTool() tool[syncIn, syncOut] {
	return tool[syncIn, syncOut]{
		name:       "Sync",
		title:      "Sync the index",
		desc:       "Bring the index in step with the memory folder: index new and changed files, drop deleted ones. full: true rebuilds everything (read times are kept). Returns what changed.",
		idempotent: true,
		run: func(ctx context.Context, in *syncIn) (*syncOut, error) {
			r, err := s.eng.Sync(ctx, in.Full)
			if err != nil {
				return nil, err
			}
			out := &syncOut{
				Full: r.Full, Added: nonNil(r.Added), Updated: nonNil(r.Updated), Removed: nonNil(r.Removed), Unchanged: r.Unchanged,
				Skipped: skips(r.Skipped), Warnings: warnings(r.Warnings), Chunks: r.Chunks, DurationMs: ms(r.Total),
			}
			out.counts = [5]int{len(out.Added), len(out.Updated), len(out.Removed), len(out.Skipped), len(out.Warnings)}
			if s.sess != nil {
				sr, err := s.sess.Sync(ctx, in.Full)
				if err != nil {
					return nil, fmt.Errorf("memories synced; sessions: %w", err)
				}
				if len(sr.Skipped) > 20 {
					sr.Skipped = sr.Skipped[:20] // the full list is in sessions status
				}
				out.Sessions = &sr
			}
			return out, nil
		},
		text: func(o *syncOut) string {
			c := o.counts
			t := fmt.Sprintf("Synced in %.0f ms%s: %d added, %d updated, %d removed, %d unchanged, %d skipped, %d warnings.",
				o.DurationMs, map[bool]string{true: " (full rebuild)"}[o.Full], c[0], c[1], c[2], o.Unchanged, c[3], c[4])
			if r := o.Sessions; r != nil {
				t += fmt.Sprintf(" Sessions: %d added, %d updated, %d re-read, %d removed, %d unchanged, %d messages indexed.",
					r.Added, r.Updated, r.Reset, r.Removed, r.Unchanged, r.Messages)
			}
			if o.Note != "" {
				t += " (" + o.Note + ")"
			}
			return t
		},
	}
}

type statusIn struct{}

type statusOut struct {
	MemoryDir     string    `json:"memoryDir"`
	IndexDir      string    `json:"indexDir"`
	Memories      int       `json:"memories" jsonschema:"memories in the index"`
	Chunks        int       `json:"chunks" jsonschema:"embedded chunks in the vector index"`
	Embedder      string    `json:"embedder"`
	Dimensions    int       `json:"dimensions"`
	FullTextBytes int64     `json:"fullTextBytes"`
	StateBytes    int64     `json:"stateBytes"`
	LastSync      time.Time `json:"lastSync,omitzero"`
	Indexing      bool      `json:"indexing" jsonschema:"a sync is running, or a first or full sync was cut short: the index holds part of the folder"`
	Unfinished    string    `json:"unfinished,omitempty" jsonschema:"the first or full sync that was cut short; a completed Sync clears it"`
	Damaged       string    `json:"damaged,omitempty" jsonschema:"what is wrong with a damaged full-text index; the next Sync rebuilds it"`
	ReadOnly      bool      `json:"readOnly"`
	Concepts      int       `json:"concepts" jsonschema:"concepts in the graph: distinct [[WikiLink]] targets"`
	Mentions      int       `json:"mentions" jsonschema:"WikiLinks over all memories"`
	Communities   int       `json:"communities" jsonschema:"Louvain communities of concepts; -1 until computed"`
	Skipped       []skipped `json:"skipped" jsonschema:"files not indexed, and why"`
	Warnings      []warning `json:"warnings" jsonschema:"problems in files indexed anyway"`
	Truncated     bool      `json:"truncated,omitempty" jsonschema:"lists were cut to fit the response limit"`
	Note          string    `json:"note,omitempty"`
}

func (o *statusOut) units() int { return len(o.Skipped) + len(o.Warnings) }

func (o *statusOut) keep(n int) {
	if n >= o.units() {
		return
	}
	ns, nw := len(o.Skipped), len(o.Warnings)
	k := min(n, ns)
	o.Skipped, o.Warnings = o.Skipped[:k], o.Warnings[:n-k]
	o.Truncated = true
	o.Note = fmt.Sprintf("lists cut to %d of %d skipped files and %d of %d warnings to stay under the response size limit", len(o.Skipped), ns, len(o.Warnings), nw)
}

func (s *server) statusTool() tool[statusIn, statusOut] {
	return tool[statusIn, statusOut]{
		name:       "MemoryStatus",
		title:      "Index status",
		desc:       "Describe the memory index: folders, how many memories and chunks, the embedder, index sizes, the last sync, whether a sync is running, and files skipped or indexed with warnings.",
		readOnly:   true,
		idempotent: true,
		run: func(ctx context.Context, _ *statusIn) (*statusOut, error) {
			st, err := s.eng.Status(ctx)
			if err != nil {
				return nil, err
			}
			return &statusOut{
				MemoryDir: st.MemoryDir, IndexDir: st.IndexDir, Memories: st.Files, Chunks: st.Chunks,
				Embedder: st.Embedder, Dimensions: st.Dimensions, FullTextBytes: st.FullTextSize, StateBytes: st.StateSize,
				LastSync: st.LastSync, Indexing: st.Indexing, Unfinished: st.Unfinished, Damaged: st.Damaged, ReadOnly: st.ReadOnly,
				Concepts: st.Graph.Concepts, Mentions: st.Graph.Mentions, Communities: st.Graph.Communities,
				Skipped: skips(st.Skipped), Warnings: warnings(st.Warnings),
			}, nil
		},
		text: func(o *statusOut) string {
			last := "never"
			if !o.LastSync.IsZero() {
				last = o.LastSync.UTC().Format(time.RFC3339)
			}
			comm := fmt.Sprintf("%d communities", o.Communities)
			if o.Communities < 0 {
				comm = "communities not computed yet"
			}
			t := fmt.Sprintf("%d memories, %d chunks in %s (index %s); embedder %s (%d dimensions); %d concepts, %d links, %s; last sync %s; %d skipped, %d warnings.",
				o.Memories, o.Chunks, o.MemoryDir, o.IndexDir, o.Embedder, o.Dimensions, o.Concepts, o.Mentions, comm, last, len(o.Skipped), len(o.Warnings))
			if o.Damaged != "" {
				t += " Damaged: " + o.Damaged + "."
			}
			switch {
			case o.Unfinished != "":
				t += " Indexing: a " + o.Unfinished + "; the index holds part of the folder."
			case o.Indexing:
				t += " A sync is running."
			}
			if o.ReadOnly {
				t += " Read-only."
			}
			if o.Note != "" {
				t += " (" + o.Note + ")"
			}
			return t
		},
	}
}

type configIn struct{}

type configOut struct {
	MemoryDir  string      `json:"memoryDir"`
	IndexDir   string      `json:"indexDir"`
	Embedder   string      `json:"embedder"`
	Dimensions int         `json:"dimensions"`
	ReadOnly   bool        `json:"readOnly"`
	Variables  []variable  `json:"variables" jsonschema:"every MAENIFOLD_* variable mnemo reads or finds set, with its effective value; secrets hidden"`
	Limits     configLimit `json:"limits"`
}

type variable struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Source string `json:"source" jsonschema:"env, default, or the flag that set it"`
	Help   string `json:"help"`
}

type configLimit struct {
	MaxResponseBytes int `json:"maxResponseBytes"`
	MaxSnippetBytes  int `json:"maxSnippetBytes"`
	MaxPageSize      int `json:"engine.MaxPageSize"`
}

func (s *server) configTool() tool[configIn, configOut] {
	return tool[configIn, configOut]{
		name:       "GetConfig",
		title:      "Effective configuration",
		desc:       "Show the effective configuration: the memory and index folders, the embedder, response limits, and every MAENIFOLD_* variable with its value and where it came from (environment, flag or default).",
		readOnly:   true,
		idempotent: true,
		run: func(ctx context.Context, _ *configIn) (*configOut, error) {
			st, err := s.eng.Status(ctx)
			if err != nil {
				return nil, err
			}
			return &configOut{
				MemoryDir: st.MemoryDir, IndexDir: st.IndexDir, Embedder: st.Embedder, Dimensions: st.Dimensions, ReadOnly: st.ReadOnly,
				Variables: s.variables(),
				Limits:    configLimit{MaxResponseBytes: s.opts.MaxResponseBytes, MaxSnippetBytes: s.opts.MaxSnippetBytes, MaxPageSize: engine.MaxPageSize},
			}, nil
		},
		text: func(o *configOut) string {
			var b strings.Builder
			fmt.Fprintf(&b, "memory %s, index %s, embedder %s\n", o.MemoryDir, o.IndexDir, o.Embedder)
			for _, v := range o.Variables {
				fmt.Fprintf(&b, "%s=%s (%s)\n", v.Name, v.Value, v.Source)
			}
			return strings.TrimRight(b.String(), "\n")
		},
	}
}

// variables lists the decay variables, the edge's Settings and any other
// MAENIFOLD_* variable set, secrets hidden.
func (s *server) variables() []variable {
	var vs []variable
	for _, st := range decay.Settings(s.opts.Lookup) {
		vs = append(vs, variable{Name: st.Name, Value: st.Value, Source: st.Source, Help: st.Help})
	}
	for _, o := range s.opts.Settings {
		v := variable{Name: o.Name, Value: o.Value, Source: o.Source, Help: o.Help}
		if i := slices.IndexFunc(vs, func(x variable) bool { return x.Name == o.Name }); i >= 0 {
			if v.Help == "" {
				v.Help = vs[i].Help
			}
			vs[i] = v
		} else {
			vs = append(vs, v)
		}
	}
	var extra []variable
	for _, kv := range s.opts.Environ() {
		name, val, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "MAENIFOLD_") && !slices.ContainsFunc(vs, func(v variable) bool { return v.Name == name }) {
			extra = append(extra, variable{Name: name, Value: val, Source: "env"})
		}
	}
	slices.SortFunc(extra, func(a, b variable) int { return strings.Compare(a.Name, b.Name) })
	vs = append(vs, extra...)
	for i := range vs {
		switch {
		case secret(vs[i].Name) && vs[i].Value != "":
			vs[i].Value = "(set, hidden)"
		default:
			vs[i].Value = hideUserInfo(vs[i].Value)
		}
	}
	return vs
}

// secretWords are the parts of a variable's name that say its value is a
// credential; such a value must not reach a model's context.
var secretWords = []string{"KEY", "TOKEN", "SECRET", "PASS", "PWD", "CREDENTIAL", "AUTH", "COOKIE", "SESSION_ID", "PRIVATE", "CERT"}

// secret reports variables whose values must not reach a model's context.
func secret(name string) bool {
	up := strings.ToUpper(name)
	for _, w := range secretWords {
		if strings.Contains(up, w) {
			return true
		}
	}
	return false
}

// hideUserInfo replaces the user and password of every URL in v
// (https://user:password@host/…) with "(hidden)": an embedder's or a
// proxy's URL often carries its credentials.
func hideUserInfo(v string) string {
	fields := strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == ',' || r == ';' })
	for _, f := range fields {
		u, err := url.Parse(f)
		if err != nil || u.User == nil || u.Host == "" {
			continue
		}
		u.User = nil
		v = strings.Replace(v, f, strings.Replace(u.String(), "://", "://(hidden)@", 1), 1)
	}
	return v
}

func skips(in []engine.Skip) []skipped {
	out := make([]skipped, 0, len(in))
	for _, s := range in {
		out = append(out, skipped{Path: s.Path, Reason: s.Reason})
	}
	return out
}

func warnings(in []engine.Warning) []warning {
	out := make([]warning, 0, len(in))
	for _, w := range in {
		out = append(out, warning{Path: w.Path, Message: w.Message})
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
