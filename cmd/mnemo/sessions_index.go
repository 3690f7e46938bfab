package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"mnemo/engine"
	"mnemo/engine/sessions"
	"mnemo/engine/transcript"
	"mnemo/mcp"
)

// archivedNote marks an archived session in listings.
func archivedNote(archived bool) string {
	if archived {
		return ", archived (transcript gone)"
	}
	return ""
}

func (a *app) sessionsListCmd(sf *sessionsFlags) *cobra.Command {
	var (
		project, agent, from, to string
		archived                 bool
		page, pageSize           int
	)
	cmd := &cobra.Command{
		Use:   "list [flags]",
		Short: "List the sessions, newest first, without a query",
		Long: `List the indexed sessions, newest first (by their last message): id, agent,
project, first and last time, message count and the first user message as a
title. The same arguments as the MCP ListSessions tool; --archived lists only
sessions whose transcript is gone (kept by the index), --archived=false only
those whose transcript is there.`,
		Example: `  mnemo sessions list
  mnemo sessions list --project myapp --from 2025-06-01 --page-size 50
  mnemo sessions list --archived --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			m := map[string]any{}
			fl := cmd.Flags()
			for _, x := range []struct {
				flag, arg string
				v         any
			}{{"project", "project", project}, {"agent", "sourceAgent", agent}, {"from", "from", from}, {"to", "to", to},
				{"archived", "archived", archived}, {"page", "page", page}, {"page-size", "pageSize", pageSize}} {
				if fl.Changed(x.flag) {
					m[x.arg] = x.v
				}
			}
			raw, _ := json.Marshal(m)
			q, err := mcp.ParseListSessions(raw)
			if err != nil {
				return usageError{err}
			}
			return a.withSessions(cmd.Context(), sf, true, nil, func(s sessionsBackend) error {
				l, err := s.List(cmd.Context(), q)
				if err != nil {
					return err
				}
				if a.g.json {
					return writeJSON(a.stdout, l)
				}
				return writeSessionList(a.stdout, l)
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&project, "project", "", "only sessions whose working folder contains this")
	fl.StringVar(&agent, "agent", "", "only sessions of this source: "+transcript.KindList())
	fl.StringVar(&from, "from", "", "only sessions active on or after this date (YYYY-MM-DD or RFC3339)")
	fl.StringVar(&to, "to", "", "only sessions active on or before this date (a whole day if YYYY-MM-DD)")
	fl.BoolVar(&archived, "archived", false, "only archived sessions (--archived=false: only those whose transcript is there)")
	fl.IntVarP(&page, "page", "p", 1, "page number, from 1")
	fl.IntVarP(&pageSize, "page-size", "n", 10, "sessions per page, 1 to 200")
	return cmd
}

func writeSessionList(w io.Writer, l sessions.Listing) error {
	b := bufio.NewWriter(w)
	pages := max(1, (l.TotalCount+l.PageSize-1)/l.PageSize)
	fmt.Fprintf(b, "%d sessions, newest first (page %d of %d):\n", l.TotalCount, l.Page, pages)
	for _, s := range l.Sessions {
		fmt.Fprintf(b, "\n%s  %s  %s\n   %s … %s, %d messages%s\n   %s\n", s.SourceAgent, s.SessionID, s.Project,
			formatTime(s.Started), formatTime(s.Ended), s.MessageCount, archivedNote(s.Archived), s.Title)
	}
	if l.Indexing {
		fmt.Fprintln(b, "\n(The sessions index is still being built; the list may be incomplete.)")
	}
	return b.Flush()
}

func (a *app) sessionsForgetCmd(sf *sessionsFlags) *cobra.Command {
	var (
		project, agent, before string
		archived               bool
	)
	cmd := &cobra.Command{
		Use:   "forget [SESSION_ID...] [--project P] [--agent A] [--before DATE] [--archived]",
		Short: "Forget sessions for good: every trace leaves the index",
		Long: `Forget the sessions named (by id or transcript path), or, without ids, every
session matching all the filters given. Their messages leave the sessions
index with every trace of them: the full-text index is rebuilt and the state
store compacted, so no word of them remains in any file under the index
folder. A forgotten session whose transcript is still there is left out of
later syncs. The transcripts themselves are never touched.`,
		Example: `  mnemo sessions forget 5f0c1d2e-3b4a-4c5d-8e9f-0a1b2c3d4e5f
  mnemo sessions forget --project secret-client
  mnemo sessions forget --archived --before 2025-01-01`,
		RunE: func(cmd *cobra.Command, args []string) error {
			fl := cmd.Flags()
			q := sessions.ForgetQuery{IDs: args, Project: project, Agent: agent}
			if fl.Changed("archived") {
				q.Archived = &archived
			}
			var err error
			if q.Before, err = engine.ParseDate("--before", before, false); err != nil {
				return usageError{err}
			}
			filters := q.Project != "" || q.Agent != "" || !q.Before.IsZero() || q.Archived != nil
			switch {
			case len(args) > 0 && filters:
				return usagef("give session ids or filters (--project, --agent, --before, --archived), not both")
			case len(args) == 0 && !filters:
				return usagef("name the sessions to forget: session ids, or --project, --agent, --before or --archived")
			}
			return a.withSessions(cmd.Context(), sf, false, nil, func(s sessionsBackend) error {
				r, err := s.Forget(cmd.Context(), q)
				if err != nil {
					return err
				}
				if a.g.json {
					return writeJSON(a.stdout, r)
				}
				return writeForgetReport(a.stdout, r)
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&project, "project", "", "forget the sessions whose working folder contains this")
	fl.StringVar(&agent, "agent", "", "forget the sessions of this source")
	fl.StringVar(&before, "before", "", "forget the sessions whose last message is before this date (YYYY-MM-DD or RFC3339)")
	fl.BoolVar(&archived, "archived", false, "forget only archived sessions (--archived=false: only those whose transcript is there)")
	return cmd
}

func writeForgetReport(w io.Writer, r sessions.ForgetReport) error {
	b := bufio.NewWriter(w)
	if len(r.Sessions) == 0 {
		fmt.Fprintln(b, "No session matched; nothing forgotten.")
		return b.Flush()
	}
	fmt.Fprintf(b, "Forgot %d sessions (%d messages); the index's files were rewritten without them:\n", len(r.Sessions), r.Messages)
	for _, f := range r.Sessions {
		var notes []string
		if f.Archived {
			notes = append(notes, "archived")
		}
		if f.TranscriptKept {
			notes = append(notes, "its transcript is still there and is left out of later syncs")
		}
		note := ""
		if len(notes) > 0 {
			note = "; " + strings.Join(notes, "; ")
		}
		fmt.Fprintf(b, "  %s %s — %s (%d messages%s)\n", f.SourceAgent, f.SessionID, f.Project, f.Messages, note)
	}
	for _, p := range r.Removed {
		fmt.Fprintf(b, "  removed %s (a set-aside copy of a damaged store, which may have held them)\n", p)
	}
	return b.Flush()
}
