package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"mnemo/engine"
	"mnemo/engine/sessions"
)

// The sessions index's own tools: SessionsStatus here, ListSessions and
// ForgetSessions beside it. SessionsStatus is a tool of its own rather than
// more fields of MemoryStatus: MemoryStatus keeps maenifold's shape, which
// describes the memory folder, while the sessions index has its own sources,
// each with its own accounting of every line it read.

type sessionsStatusIn struct{}

// sessionsStatusOut is sessions.Status, its skip lists cut to fit
// when they must be.
type sessionsStatusOut struct {
	sessions.Status
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
			return &sessionsStatusOut{Status: st}, nil
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
			if o.ForgetUnfinished != "" {
				b.WriteString(" Forget unfinished: a " + o.ForgetUnfinished + " was cut short; its sessions are in no answer, and the next writer rewrites the index files without them.")
			}
			for _, r := range o.Recovery {
				b.WriteString(" State store found damaged and set aside: " + r.Summary() + ".")
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
				if src.Forgotten > 0 {
					fmt.Fprintf(&b, "; %d forgotten transcripts left out", src.Forgotten)
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

// listSessionsIn is ListSessions' arguments: SearchSessions' filters
// without a query, and SearchMemories' paging.
type listSessionsIn struct {
	Project          string `json:"project,omitempty" jsonschema:"only sessions whose working folder contains this"`
	SourceAgent      string `json:"sourceAgent,omitempty" jsonschema:"only sessions of this agent: the source kind SessionsStatus lists (claude-code, codex, gemini, cursor, copilot-chat, …)"`
	From             string `json:"from,omitempty" jsonschema:"only sessions active on or after this date (their last message is not before it): YYYY-MM-DD or RFC 3339"`
	To               string `json:"to,omitempty" jsonschema:"only sessions active on or before this date (a whole day if YYYY-MM-DD)"`
	Archived         *bool  `json:"archived,omitempty" jsonschema:"true: only archived sessions (transcript gone, kept by the index); false: only sessions whose transcript is there"`
	Page             int    `json:"page,omitempty" jsonschema:"which page, from 1"`
	PageSize         int    `json:"pageSize,omitempty" jsonschema:"sessions per page, 1 to 200"`
	SourceAgentAlias string `json:"source_agent,omitempty" jsonschema:"alias of sourceAgent (pond)"`
}

// listSessionsOut is sessions.Listing, cut to fit when it must be.
type listSessionsOut struct {
	sessions.Listing
	Truncated bool   `json:"truncated,omitempty" jsonschema:"sessions were cut to fit the response limit"`
	Note      string `json:"note,omitempty"`
}

func (o *listSessionsOut) units() int { return len(o.Sessions) }

func (o *listSessionsOut) keep(n int) {
	if n >= len(o.Sessions) {
		return
	}
	o.Note = fmt.Sprintf("response cut to %d of %d sessions to stay under the response size limit; ask for a smaller pageSize", n, len(o.Sessions))
	o.Sessions, o.Truncated = o.Sessions[:n], true
}

func (s *server) listSessionsTool() tool[listSessionsIn, listSessionsOut] {
	return tool[listSessionsIn, listSessionsOut]{
		name:  "ListSessions",
		title: "List agent sessions",
		desc: "List past AI-agent sessions without a query, newest first (by their last message): id, agent, project, first and last time, message count, " +
			"and the first user message as a title. Filter by project folder, agent, dates and archived; page through them. Open one with GetSession.",
		readOnly:   true,
		idempotent: true,
		schema: func(in *jsonschema.Schema) {
			ps := property(in, "pageSize")
			ps.Default, ps.Minimum, ps.Maximum = json.RawMessage("10"), ptr(1.0), ptr(float64(sessions.MaxLimit))
			p := property(in, "page")
			p.Default, p.Minimum, p.Maximum = json.RawMessage("1"), ptr(1.0), ptr(float64(engine.MaxPage))
			for _, name := range []string{"project", "sourceAgent", "source_agent"} {
				property(in, name).MaxLength = ptr(maxPathBytes)
			}
		},
		run: func(ctx context.Context, in *listSessionsIn) (*listSessionsOut, error) {
			q, err := in.query()
			if err != nil {
				return nil, err
			}
			l, err := s.sess.List(ctx, q)
			if err != nil {
				return nil, err
			}
			return &listSessionsOut{Listing: l}, nil
		},
		text: func(o *listSessionsOut) string {
			var b strings.Builder
			fmt.Fprintf(&b, "%d sessions (page %d of %d, newest first):", o.TotalCount, o.Page, max(1, (o.TotalCount+o.PageSize-1)/o.PageSize))
			for _, x := range o.Sessions {
				arch := ""
				if x.Archived {
					arch = ", archived"
				}
				fmt.Fprintf(&b, "\n%s %s — %s (%d messages, %s to %s%s): %s", x.SourceAgent, x.SessionID, x.Project, x.MessageCount, day(x.Started), day(x.Ended), arch, x.Title)
			}
			if o.Indexing {
				b.WriteString("\n(The sessions index is still being built; the list may be incomplete.)")
			}
			if o.Note != "" {
				b.WriteString("\n(" + o.Note + ")")
			}
			return b.String()
		},
	}
}

func (in *listSessionsIn) query() (sessions.ListQuery, error) {
	switch {
	case in.Page < 1 || in.Page > engine.MaxPage:
		return sessions.ListQuery{}, fmt.Errorf("page must be between 1 and %d (got %d)", engine.MaxPage, in.Page)
	case in.PageSize < 1 || in.PageSize > sessions.MaxLimit:
		return sessions.ListQuery{}, fmt.Errorf("pageSize must be between 1 and %d (got %d)", sessions.MaxLimit, in.PageSize)
	}
	for _, v := range []string{in.Project, in.SourceAgent, in.SourceAgentAlias} {
		if len(v) > maxPathBytes {
			return sessions.ListQuery{}, fmt.Errorf("a filter is %d bytes, over the %d-byte limit", len(v), maxPathBytes)
		}
	}
	q := sessions.ListQuery{Project: in.Project, Archived: in.Archived, Page: in.Page, PageSize: in.PageSize}
	var err error
	if q.Agent, err = pick(map[string]string{"sourceAgent": in.SourceAgent, "source_agent": in.SourceAgentAlias}, "sourceAgent", "source_agent"); err != nil {
		return q, err
	}
	if q.From, err = engine.ParseDate("from", in.From, false); err != nil {
		return q, err
	}
	if q.To, err = engine.ParseDate("to", in.To, true); err != nil {
		return q, err
	}
	return q, nil
}

// ParseListSessions reads ListSessions arguments (a JSON object, with the
// tool's defaults) into a query, so `mnemo sessions list` and the tool agree.
func ParseListSessions(raw json.RawMessage) (sessions.ListQuery, error) {
	var in listSessionsIn
	if err := listSessionsSpec.decode(raw, &in); err != nil {
		return sessions.ListQuery{}, err
	}
	return in.query()
}

var listSessionsSpec = func() *argSpec {
	s, err := jsonschema.For[listSessionsIn](nil)
	if err != nil {
		panic(err)
	}
	ps := property(s, "pageSize")
	ps.Default = json.RawMessage("10")
	p := property(s, "page")
	p.Default = json.RawMessage("1")
	return argSpecFor[listSessionsIn](s)
}()

// forgetSessionsIn is ForgetSessions' arguments.
type forgetSessionsIn struct {
	SessionIDs  []string `json:"sessionIds,omitempty" jsonschema:"the sessions to forget, as SearchSessions or ListSessions return them"`
	Project     string   `json:"project,omitempty" jsonschema:"without sessionIds: forget the sessions whose working folder contains this"`
	SourceAgent string   `json:"sourceAgent,omitempty" jsonschema:"without sessionIds: forget the sessions of this agent"`
	Before      string   `json:"before,omitempty" jsonschema:"without sessionIds: forget the sessions whose last message is before this date: YYYY-MM-DD or RFC 3339"`
	Archived    *bool    `json:"archived,omitempty" jsonschema:"without sessionIds: true forgets only archived sessions, false only those whose transcript is there"`
}

// maxForgetIDs bounds one ForgetSessions call's ids.
const maxForgetIDs = 1000

func (s *server) forgetSessionsTool() tool[forgetSessionsIn, sessions.ForgetReport] {
	return tool[forgetSessionsIn, sessions.ForgetReport]{
		name:  "ForgetSessions",
		title: "Forget agent sessions",
		desc: "Forget agent sessions for good: remove them from the sessions index with every trace of them in the index's files (rewritten, not just marked deleted), " +
			"and leave their transcripts, where still there, out of later syncs. Give sessionIds, or filters (project, sourceAgent, before, archived) that all must match. " +
			"The transcripts themselves are not touched.",
		destructive: true,
		schema: func(in *jsonschema.Schema) {
			property(in, "sessionIds").MaxItems = ptr(maxForgetIDs)
			for _, name := range []string{"project", "sourceAgent"} {
				property(in, name).MaxLength = ptr(maxPathBytes)
			}
		},
		run: func(ctx context.Context, in *forgetSessionsIn) (*sessions.ForgetReport, error) {
			if len(in.SessionIDs) > maxForgetIDs {
				return nil, fmt.Errorf("%d sessionIds, over the limit of %d", len(in.SessionIDs), maxForgetIDs)
			}
			for _, v := range append([]string{in.Project, in.SourceAgent}, in.SessionIDs...) {
				if len(v) > maxPathBytes {
					return nil, fmt.Errorf("an argument is %d bytes, over the %d-byte limit", len(v), maxPathBytes)
				}
			}
			q := sessions.ForgetQuery{IDs: in.SessionIDs, Project: in.Project, Agent: in.SourceAgent, Archived: in.Archived}
			var err error
			if q.Before, err = engine.ParseDate("before", in.Before, false); err != nil {
				return nil, err
			}
			if len(q.IDs) > 0 && (q.Project != "" || q.Agent != "" || !q.Before.IsZero() || q.Archived != nil) {
				return nil, errors.New("give sessionIds or filters, not both")
			}
			r, err := s.sess.Forget(ctx, q)
			if err != nil {
				return nil, err
			}
			return &r, nil
		},
		text: func(r *sessions.ForgetReport) string {
			if len(r.Sessions) == 0 {
				return "No session matched; nothing forgotten."
			}
			var b strings.Builder
			fmt.Fprintf(&b, "Forgot %d sessions (%d messages), every trace removed from the index:", len(r.Sessions), r.Messages)
			for _, f := range r.Sessions {
				kept := ""
				if f.TranscriptKept {
					kept = "; its transcript is still there and is left out of later syncs"
				}
				fmt.Fprintf(&b, "\n%s %s — %s (%d messages%s)", f.SourceAgent, f.SessionID, f.Project, f.Messages, kept)
			}
			return b.String()
		},
	}
}
