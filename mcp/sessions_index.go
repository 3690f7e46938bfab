package mcp

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"mnemo/engine"
)

// The sessions index's own tools: SessionsStatus here, ListSessions and
// ForgetSessions beside it. SessionsStatus is a tool of its own rather than
// more fields of MemoryStatus: MemoryStatus keeps maenifold's shape, which
// describes the memory folder, while the sessions index has its own sources,
// each with its own accounting of every line it read.

type sessionsStatusIn struct{}

// sessionsStatusOut is engine.SessionsStatus, its skip lists cut to fit
// when they must be.
type sessionsStatusOut struct {
	engine.SessionsStatus
	Truncated bool   `json:"truncated,omitempty" jsonschema:"skip lists were cut to fit the response limit; skippedByReason still counts every file"`
	Note      string `json:"note,omitempty"`
}

func (o *sessionsStatusOut) units() int {
	n := 0
	for _, s := range o.Sources {
		n += len(s.Skipped)
	}
	return n
}

func (o *sessionsStatusOut) keep(n int) {
	total := o.units()
	if n >= total {
		return
	}
	for i := range o.Sources {
		k := min(n, len(o.Sources[i].Skipped))
		o.Sources[i].Skipped = o.Sources[i].Skipped[:k]
		n -= k
	}
	o.Truncated = true
	o.Note = fmt.Sprintf("skip lists cut to %d of %d entries to stay under the response size limit; skippedByReason counts them all", o.units(), total)
}

func (s *server) sessionsStatusTool() tool[sessionsStatusIn, sessionsStatusOut] {
	return tool[sessionsStatusIn, sessionsStatusOut]{
		name:  "SessionsStatus",
		title: "Sessions index status",
		desc: "Describe the agent-sessions index: sessions and messages (archived ones: their transcript is gone, kept until forgotten), each source's root, " +
			"and for every source an account of every transcript line read: indexed, or left out by reason (tool calls, thinking, injected content, malformed lines, …), " +
			"broken parent links repaired, and files not read by reason. Indexing true means a first or full sync is running or was cut short.",
		readOnly:   true,
		idempotent: true,
		run: func(ctx context.Context, _ *sessionsStatusIn) (*sessionsStatusOut, error) {
			st, err := s.sess.Status(ctx)
			if err != nil {
				return nil, err
			}
			return &sessionsStatusOut{SessionsStatus: st}, nil
		},
		text: func(o *sessionsStatusOut) string {
			var b strings.Builder
			fmt.Fprintf(&b, "%d sessions (%d archived), %d messages; %d lines read, %d indexed.", o.Sessions, o.Archived, o.Messages, o.Coverage.Lines, o.Coverage.Indexed)
			switch {
			case o.Unfinished != "":
				b.WriteString(" Indexing: a " + o.Unfinished + "; the index holds part of the transcripts.")
			case o.Indexing:
				b.WriteString(" A sync is running.")
			}
			if o.Damaged != "" {
				b.WriteString(" Damaged: " + o.Damaged + ".")
			}
			for _, src := range o.Sources {
				fmt.Fprintf(&b, "\n%s %s: %d sessions (%d archived), %d messages; %d lines read, %d indexed", src.Kind, src.Root, src.Sessions, src.Archived, src.Messages, src.Coverage.Lines, src.Coverage.Indexed)
				if len(src.Coverage.LeftOut) > 0 {
					b.WriteString(", left out:")
					for _, k := range sortedKeys(src.Coverage.LeftOut) {
						fmt.Fprintf(&b, " %s %d", k, src.Coverage.LeftOut[k])
					}
				}
				if src.Coverage.Repaired > 0 {
					fmt.Fprintf(&b, "; %d parent links repaired", src.Coverage.Repaired)
				}
				for _, k := range sortedKeys(src.SkippedBy) {
					fmt.Fprintf(&b, "; not read: %s %d", k, src.SkippedBy[k])
				}
				if src.Error != "" {
					b.WriteString("; error: " + src.Error)
				}
			}
			if o.Note != "" {
				b.WriteString("\n(" + o.Note + ")")
			}
			return b.String()
		},
	}
}

func sortedKeys[K ~string, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	return keys
}
