package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"mnemo/cmd/mnemo/remote"
	"mnemo/engine"
	"mnemo/engine/sessions"
	"mnemo/engine/transcript"
	"mnemo/mcp"
)

// sessionsBackend is what the sessions commands need: the sessions index
// itself, or the running mnemo serve that holds it.
type sessionsBackend interface {
	sessions.Index
	Close() error
}

var (
	_ sessionsBackend = (*sessions.Corpus)(nil)
	_ sessionsBackend = (*remote.SessionsClient)(nil)
)

// EnvSessionsKeepDeleted is the variable that says whether a session whose
// transcript was deleted stays in the index, archived ("true", the
// default), or leaves it ("false": the index mirrors the transcripts).
const EnvSessionsKeepDeleted = "MAENIFOLD_SESSIONS_KEEP_DELETED"

// sessionsMirror reads EnvSessionsKeepDeleted: true means mirror.
func sessionsMirror(lookup func(string) (string, bool)) (bool, error) {
	v, ok := lookup(EnvSessionsKeepDeleted)
	if !ok || strings.TrimSpace(v) == "" {
		return false, nil
	}
	keep, err := parseSwitch(v)
	if err != nil {
		return false, usagef("$%s=%q: want true or false", EnvSessionsKeepDeleted, v)
	}
	return !keep, nil
}

// sessionsFlags are the flags every sessions command shares.
type sessionsFlags struct {
	sources          []string
	includeTools     bool
	includeSubagents bool
}

func (a *app) sessionsCmd() *cobra.Command {
	var sf sessionsFlags
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "Search AI-agent session transcripts (Claude Code, Codex, Gemini CLI, …)",
		Long: `Index and search what you and your agents said in past sessions. Transcripts
are read in place, never modified; the index lives in INDEX/sessions.

Sources (defaults under your home folder; --source KIND=DIR, repeatable,
replaces them all):
  claude-code    ~/.claude/projects ($CLAUDE_CONFIG_DIR/projects)
  codex          ~/.codex/sessions ($CODEX_HOME/sessions)
  gemini         ~/.gemini/tmp
  openclaw       ~/.openclaw/agents ($OPENCLAW_STATE_DIR/agents)
  codearchitect  ~/.codearchitect/sessions
  jsonl          no default: any folder of {session_id, role, content, timestamp, project, agent} lines
  and, each found where the agent keeps its files on this OS: copilot-chat,
  cursor, cursor-cli, copilot-cli, cline, roo-code, kilo-code, opencode,
  aider, continue, amp, goose, factory, qwen, kimi, crush, kiro, zed,
  openhands, claude-export, chatgpt-export (antigravity and windsurf are
  reported: their stores are encrypted). See docs/transcripts.md.

Only user and assistant prose of the active branch is indexed: no tool
calls or results, thinking, system or developer prompts, subagent
transcripts, abandoned branches or duplicate copies (--include-tools and
--include-subagents widen this). Secrets are redacted before anything is
stored or shown.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return usagef("missing sessions command (sync, search, list, show, status or forget); see mnemo sessions --help")
		},
	}
	f := cmd.PersistentFlags()
	f.StringArrayVar(&sf.sources, "source", nil, "KIND=DIR: index this folder of this format (repeatable; replaces the defaults)")
	f.BoolVar(&sf.includeTools, "include-tools", false, "also index tool calls and results (re-index with sessions sync --full after changing)")
	f.BoolVar(&sf.includeSubagents, "include-subagents", false, "also index subagent transcripts")
	cmd.AddCommand(a.sessionsSyncCmd(&sf), a.sessionsSearchCmd(&sf), a.sessionsShowCmd(&sf), a.sessionsStatusCmd(&sf),
		a.sessionsListCmd(&sf), a.sessionsForgetCmd(&sf))
	return cmd
}

// sessionSources turns the flags (or the defaults under home) into sources.
// Sources that keep many sessions in one file (databases, exports) keep
// their snapshots and listings in scratch, inside the index folder.
func sessionSources(sf *sessionsFlags, home, scratch string, getenv func(string) string) ([]sessions.Source, error) {
	opt := transcript.Options{IncludeTools: sf.includeTools, IncludeSubagents: sf.includeSubagents, Scratch: scratch}
	var srcs []transcript.Source
	if len(sf.sources) == 0 {
		srcs = transcript.DefaultSources(home, getenv)
	}
	for _, s := range sf.sources {
		src, err := transcript.ParseSourceFlag(s)
		if err != nil {
			return nil, usagef("--source: %v", err)
		}
		srcs = append(srcs, src)
	}
	out := make([]sessions.Source, 0, len(srcs))
	for _, s := range srcs {
		out = append(out, sessions.TranscriptSource(s, opt))
	}
	return out, nil
}

// withSessions opens the sessions index (or reaches the serve that holds
// it), runs fn and closes it.
func (a *app) withSessions(ctx context.Context, sf *sessionsFlags, readOnly bool, progress func(done, total int), fn func(sessionsBackend) error) (err error) {
	cfg, err := buildConfig(a.g, os.LookupEnv)
	if err != nil {
		return err
	}
	if c, derr := remote.DialSessions(cfg.IndexDir); derr == nil {
		if len(sf.sources) > 0 || sf.includeTools || sf.includeSubagents {
			fmt.Fprintln(a.stderr, "mnemo: note: mnemo serve holds the index and reads its own sources; --source and --include-* are ignored")
		}
		defer c.Close()
		return fn(c)
	}
	home, herr := os.UserHomeDir()
	if herr != nil && len(sf.sources) == 0 {
		return usagef("no home folder to find transcripts in (%v); give --source KIND=DIR", herr)
	}
	srcs, err := sessionSources(sf, home, sessions.Scratch(cfg.IndexDir), os.Getenv)
	if err != nil {
		return err
	}
	emb, err := newEmbedder(ctx, a.g, os.LookupEnv)
	if err != nil {
		return err
	}
	mirror, err := sessionsMirror(os.LookupEnv)
	if err != nil {
		return err
	}
	s, err := sessions.Open(ctx, sessions.Config{
		IndexDir: cfg.IndexDir, Sources: srcs, Embedder: emb, Fusion: cfg.Fusion, ReadOnly: readOnly, Progress: progress,
		MirrorDeleted: mirror,
	})
	if errors.Is(err, engine.ErrInUse) {
		if c, derr := remote.DialSessions(cfg.IndexDir); derr == nil {
			defer c.Close()
			return fn(c)
		}
	}
	if err != nil {
		return err
	}
	defer func() {
		if cerr := s.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close sessions index: %w", cerr)
		}
	}()
	return fn(s)
}

func (a *app) sessionsSyncCmd(sf *sessionsFlags) *cobra.Command {
	var full bool
	cmd := &cobra.Command{
		Use:   "sync [--full]",
		Short: "Bring the sessions index in step with the transcripts",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			bar := newProgress(a.stderr, "reading transcripts")
			return a.withSessions(cmd.Context(), sf, false, bar.update, func(s sessionsBackend) error {
				r, err := s.Sync(cmd.Context(), full)
				bar.done()
				if err != nil {
					return err
				}
				if a.g.json {
					return writeJSON(a.stdout, r)
				}
				_, err = fmt.Fprintln(a.stdout, sessionsSyncSummary(r))
				return err
			})
		},
	}
	cmd.Flags().BoolVar(&full, "full", false, "rebuild the sessions index from scratch")
	return cmd
}

func sessionsSyncSummary(r sessions.Report) string {
	s := fmt.Sprintf("Synced sessions in %s: %d added, %d updated, %d re-read, %d archived (transcript gone), %d restored, %d removed, %d unchanged; %d messages indexed, %d malformed lines, %d skipped.",
		r.Total.Round(time.Millisecond), r.Added, r.Updated, r.Reset, r.Archived, r.Restored, r.Removed, r.Unchanged, r.Messages, r.Malformed, len(r.Skipped))
	if r.Rebuilt != "" {
		s += " Rebuilt: " + r.Rebuilt + "."
	}
	return s
}

// sessionsSearchFlags are SearchSessions' arguments as flags.
type sessionsSearchFlags struct {
	mode, project, session, agent, role, from, to, sort string
	limit, hits                                         int
}

// args are the flags given, as SearchSessions arguments.
func (f sessionsSearchFlags) args(cmd *cobra.Command) map[string]any {
	m := map[string]any{}
	for _, x := range []struct {
		flag, arg string
		v         any
	}{
		{"mode", "mode", f.mode}, {"project", "project", f.project}, {"session", "sessionId", f.session},
		{"agent", "sourceAgent", f.agent}, {"role", "role", f.role}, {"from", "from", f.from}, {"to", "to", f.to},
		{"sort", "sort", f.sort}, {"limit", "limit", f.limit}, {"hits", "maxHits", f.hits},
	} {
		if cmd.Flags().Changed(x.flag) {
			m[x.arg] = x.v
		}
	}
	return m
}

func (a *app) sessionsSearchCmd(sf *sessionsFlags) *cobra.Command {
	var (
		f      sessionsSearchFlags
		batch  string
		noSync bool
	)
	cmd := &cobra.Command{
		Use:   "search [flags] QUERY...",
		Short: "Search the sessions",
		Long: `Search the sessions for QUERY (the arguments joined with spaces): sessions best
first, each with its best matching messages.

An incremental sync runs first; --no-sync searches the index as it is.

--batch FILE reads one JSON object per line holding SearchSessions' arguments
(query, mode, project, sessionId, sourceAgent, role, from, to, sort, limit,
maxHits, and the aliases the MCP tool accepts) and prints one result object per
line, in order; flags given are the defaults for fields a line leaves out. A
line that fails prints {"query", "error"} and the batch goes on.`,
		Example: `  mnemo sessions search retry budget
  mnemo sessions search --project myapp --from 2025-06-01 --role user "why postgres"
  mnemo sessions search --no-sync --batch queries.jsonl --json > run.jsonl`,
		RunE: func(cmd *cobra.Command, args []string) error {
			defaults := f.args(cmd)
			if batch != "" {
				if len(args) > 0 {
					return usagef("--batch takes its queries from the file, not from arguments (got %q)", strings.Join(args, " "))
				}
				return a.sessionsBatch(cmd.Context(), sf, batch, defaults, noSync)
			}
			if len(args) == 0 {
				return usagef("sessions search needs a query (or --batch FILE)")
			}
			defaults["query"] = strings.Join(args, " ")
			raw, _ := json.Marshal(defaults)
			q, err := mcp.ParseSearchSessions(raw)
			if err != nil {
				return usageError{err}
			}
			return a.withSessions(cmd.Context(), sf, noSync, nil, func(s sessionsBackend) error {
				if !noSync {
					if _, err := s.Sync(cmd.Context(), false); err != nil {
						return fmt.Errorf("sync before search: %w", err)
					}
				}
				p, err := s.Search(cmd.Context(), q)
				if errors.Is(err, engine.ErrNoTerms) {
					return fmt.Errorf("%w; to list sessions without a query, run mnemo sessions list", err)
				}
				if err != nil {
					return err
				}
				if a.g.json {
					return writeJSON(a.stdout, p)
				}
				return writeSessionPage(a.stdout, p)
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.mode, "mode", "m", "", "hybrid, semantic or fulltext (default hybrid)")
	fl.StringVar(&f.project, "project", "", "only sessions whose working folder contains this")
	fl.StringVar(&f.session, "session", "", "only this session id")
	fl.StringVar(&f.agent, "agent", "", "only sessions of this source: "+transcript.KindList())
	fl.StringVar(&f.role, "role", "", "only messages of this role: user or assistant")
	fl.StringVar(&f.from, "from", "", "only messages on or after this date (YYYY-MM-DD or RFC3339)")
	fl.StringVar(&f.to, "to", "", "only messages on or before this date (a whole day if YYYY-MM-DD)")
	fl.StringVar(&f.sort, "sort", "", "relevance or recency (sessions by their latest hit)")
	fl.IntVarP(&f.limit, "limit", "n", 10, "sessions to show, 1 to 200")
	fl.IntVar(&f.hits, "hits", 3, "matching messages per session, 1 to 20")
	fl.StringVar(&batch, "batch", "", "run the JSONL argument objects in FILE (\"-\" for stdin); see above")
	fl.BoolVar(&noSync, "no-sync", false, "search the index as it is, without syncing first")
	return cmd
}

// sessionsBatch runs one search per line of path with one open index.
func (a *app) sessionsBatch(ctx context.Context, sf *sessionsFlags, path string, defaults map[string]any, noSync bool) error {
	in, closeIn, err := openBatch(path)
	if err != nil {
		return err
	}
	defer closeIn()
	return a.withSessions(ctx, sf, noSync, nil, func(s sessionsBackend) error {
		if !noSync {
			if _, err := s.Sync(ctx, false); err != nil {
				return fmt.Errorf("sync before search: %w", err)
			}
		}
		w := bufio.NewWriter(a.stdout)
		defer w.Flush()
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		failed, n := 0, 0
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" {
				continue
			}
			n++
			p, query, err := batchSearch(ctx, s, []byte(line), defaults)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				failed++
				enc.Encode(map[string]any{"query": query, "error": err.Error(), "totalSessions": 0, "sessions": []any{}})
				continue
			}
			if err := enc.Encode(p); err != nil {
				return err
			}
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("batch: line %d: %w", n+1, err)
		}
		if failed > 0 {
			fmt.Fprintf(a.stderr, "mnemo: %d of %d batch queries failed\n", failed, n)
		}
		return nil
	})
}

func batchSearch(ctx context.Context, s sessionsBackend, line []byte, defaults map[string]any) (sessions.Page, string, error) {
	var obj map[string]any
	if err := json.Unmarshal(line, &obj); err != nil {
		return sessions.Page{}, "", fmt.Errorf("line is not a JSON object: %v", err)
	}
	query, _ := obj["query"].(string)
	for k, v := range defaults {
		if _, ok := obj[k]; !ok {
			obj[k] = v
		}
	}
	delete(obj, "id") // benchmark lines may carry their own id
	raw, _ := json.Marshal(obj)
	q, err := mcp.ParseSearchSessions(raw)
	if err != nil {
		return sessions.Page{}, query, err
	}
	p, err := s.Search(ctx, q)
	return p, query, err
}

func writeSessionPage(w io.Writer, p sessions.Page) error {
	b := bufio.NewWriter(w)
	if len(p.Sessions) == 0 {
		fmt.Fprintf(b, "No sessions match %q (%s).\n", p.Query, p.Mode)
	} else {
		fmt.Fprintf(b, "%s %q (%s, by %s):\n", plural(p.TotalSessions, "session matches", "sessions match"), p.Query, p.Mode, p.Sort)
	}
	for i, s := range p.Sessions {
		fmt.Fprintf(b, "\n%d. %s  %s  %s  (%.3f)\n   %s … %s, %d messages%s\n", i+1, s.SourceAgent, s.SessionID, s.Project, s.Score,
			formatTime(s.Started), formatTime(s.Ended), s.MessageCount, archivedNote(s.Archived))
		for _, h := range s.Hits {
			fmt.Fprintf(b, "   - [%s %s %s] (%.3f) %s\n", h.Role, h.MessageID, formatTime(h.Timestamp), h.Score, h.Excerpt)
		}
	}
	if p.Indexing {
		fmt.Fprintln(b, "\n(The sessions index is still being built; results may be incomplete.)")
	}
	return b.Flush()
}

func (a *app) sessionsShowCmd(sf *sessionsFlags) *cobra.Command {
	var (
		message string
		context int
	)
	cmd := &cobra.Command{
		Use:   "show SESSION_ID [--message ID [--context N]]",
		Short: "Print a session's messages, or one message with context",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withSessions(cmd.Context(), sf, true, nil, func(s sessionsBackend) error {
				var v sessions.View
				var err error
				if message != "" {
					v, err = messageByIDOrNumber(cmd.Context(), s, args[0], message, context)
				} else {
					v, err = allMessages(cmd.Context(), s, args[0])
				}
				if err != nil {
					return err
				}
				if a.g.json {
					return writeJSON(a.stdout, v)
				}
				return writeSessionView(a.stdout, v)
			})
		},
	}
	cmd.Flags().StringVar(&message, "message", "", "show this message, by its id or by the [N] show prints before it (with --context messages either side)")
	cmd.Flags().IntVar(&context, "context", 2, "messages either side of --message, 0 to 50")
	return cmd
}

// messageByIDOrNumber is --message: a message id, or the number show
// prints before each message ([0], [1], …) — an id wins, since some
// sources number their ids.
func messageByIDOrNumber(ctx context.Context, s sessionsBackend, id, message string, n int) (sessions.View, error) {
	v, err := s.GetMessage(ctx, id, message, n)
	at, aerr := strconv.Atoi(strings.TrimSpace(message))
	if !errors.Is(err, sessions.ErrNoMessage) || aerr != nil || at < 0 {
		return v, err
	}
	if n < 0 || n > 50 {
		return sessions.View{}, usagef("--context %d: want 0 to 50", n)
	}
	lo := max(at-n, 0)
	v, err = s.GetSession(ctx, id, lo, at-lo+n+1)
	if err != nil {
		return v, err
	}
	if at >= v.MessageCount {
		return sessions.View{}, fmt.Errorf("message %d: session %s has %d messages, numbered from 0: %w", at, v.SessionID, v.MessageCount, sessions.ErrNoMessage)
	}
	v.Focus = at - lo
	return v, nil
}

// allMessages reads every message of a session, a page at a time.
func allMessages(ctx context.Context, s sessionsBackend, id string) (sessions.View, error) {
	const page = sessions.MaxMessages
	v, err := s.GetSession(ctx, id, 0, page)
	for err == nil && len(v.Messages) < v.MessageCount {
		var more sessions.View
		more, err = s.GetSession(ctx, id, len(v.Messages), page)
		if len(more.Messages) == 0 {
			break
		}
		v.Messages = append(v.Messages, more.Messages...)
	}
	return v, err
}

func writeSessionView(w io.Writer, v sessions.View) error {
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "%s session %s\nproject %s\nfile    %s\n%s … %s, %d messages\n", v.SourceAgent, v.SessionID, v.Project, v.Path,
		formatTime(v.Started), formatTime(v.Ended), v.MessageCount)
	if v.Archived {
		fmt.Fprintf(b, "archived: the transcript was gone at %s; these messages are what the index kept\n", formatTime(v.ArchivedAt))
	}
	if v.Summary != "" {
		fmt.Fprintf(b, "summary %s\n", v.Summary)
	}
	for i, m := range v.Messages {
		mark := ""
		if i == v.Focus {
			mark = "  <<<"
		}
		fmt.Fprintf(b, "\n[%d] %s %s %s%s\n%s\n", v.Offset+i, m.Role, m.MessageID, formatTime(m.Timestamp), mark, m.Text)
	}
	return b.Flush()
}

// coverageLine says what became of every line read: indexed, or left out
// and why.
func coverageLine(c transcript.Coverage) string {
	t := fmt.Sprintf("%d lines read: %d indexed", c.Lines, c.Indexed)
	if len(c.LeftOut) > 0 {
		m := map[string]int{}
		for k, v := range c.LeftOut {
			m[string(k)] = v
		}
		t += ", left out: " + countsText(m)
	}
	if c.Repaired > 0 {
		t += fmt.Sprintf("; %d broken parent links repaired", c.Repaired)
	}
	return t
}

// countsText lists counts by name, largest first: "tool-call 12, thinking 3".
func countsText(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func (a *app) sessionsStatusCmd(sf *sessionsFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "List every source: what it holds, every line read (indexed or left out, and why) and every file skipped",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withSessions(cmd.Context(), sf, true, nil, func(s sessionsBackend) error {
				st, err := s.Status(cmd.Context())
				if err != nil {
					return err
				}
				if a.g.json {
					return writeJSON(a.stdout, st)
				}
				return writeSessionsStatus(a.stdout, st)
			})
		},
	}
}

func writeSessionsStatus(w io.Writer, st sessions.Status) error {
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "sessions index %s: %d sessions (%d archived: transcript gone, kept), %d messages, %d vectors (%s); full-text %s, state %s; last sync %s\n",
		st.IndexDir, st.Sessions, st.Archived, st.Messages, st.Vectors, st.Embedder, formatBytes(st.FullText), formatBytes(st.State), formatTime(st.LastSync))
	switch {
	case st.Unfinished != "":
		fmt.Fprintf(b, "indexing: a %s, so the index holds part of the transcripts; run mnemo sessions sync\n", st.Unfinished)
	case st.Indexing:
		fmt.Fprintln(b, "a sync is running")
	}
	if st.LastError != "" {
		fmt.Fprintf(b, "last sync failed: %s\n", st.LastError)
	}
	if st.ForgetUnfinished != "" {
		fmt.Fprintf(b, "forget unfinished: a %s was cut short; its sessions are in no answer, and the next writer (mnemo sessions sync, serve) rewrites the index files without them\n", st.ForgetUnfinished)
	}
	for _, r := range st.Recovery {
		fmt.Fprintf(b, "state store found damaged and set aside (%s): %s\n", formatTime(r.At), r.Summary())
	}
	var absent []sessions.SourceStatus
	for _, s := range st.Sources {
		if !s.Exists && s.Sessions == 0 && len(s.Skipped) == 0 && s.Error == "" {
			absent = append(absent, s) // listed together below
			continue
		}
		exists := ""
		if !s.Exists {
			exists = " (folder absent)"
		}
		fmt.Fprintf(b, "\n%-14s %s%s\n  %d sessions (%d archived), %d messages, %d malformed lines, %d skipped\n", s.Kind, s.Root, exists, s.Sessions, s.Archived, s.Messages, s.Malformed, len(s.Skipped))
		fmt.Fprintf(b, "  %s\n", coverageLine(s.Coverage))
		if len(s.SkippedBy) > 0 {
			fmt.Fprintf(b, "  files not read: %s\n", countsText(s.SkippedBy))
		}
		if s.Forgotten > 0 {
			fmt.Fprintf(b, "  %d transcripts left out: their sessions were forgotten (mnemo sessions forget)\n", s.Forgotten)
		}
		if s.Error != "" {
			fmt.Fprintf(b, "  error: %s\n", s.Error)
		}
		for _, k := range s.Skipped {
			fmt.Fprintf(b, "  skipped %s: %s\n", k.Path, k.Reason)
		}
	}
	if len(absent) > 0 {
		fmt.Fprintf(b, "\nnot found (agent not installed here, or --source KIND=DIR names its folder):\n")
		for _, s := range absent {
			fmt.Fprintf(b, "  %-14s %s\n", s.Kind, s.Root)
		}
	}
	for _, o := range st.Other {
		fmt.Fprintf(b, "\nno longer configured: %s, %d sessions, %d archived (a sync archives them; with %s=false it removes them)\n", o.Source, o.Sessions, o.Archived, EnvSessionsKeepDeleted)
	}
	return b.Flush()
}
