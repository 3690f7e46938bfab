package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"mnemo/engine"
	"mnemo/engine/sessions"
)

// searchSessionsIn is SearchSessions' arguments. The snake_case and
// CodeArchitect spellings are aliases, so prompts written for pond
// (pond_search) and CodeArchitect (search_session) keep working.
type searchSessionsIn struct {
	Query       string `json:"query" jsonschema:"what to look for: words, a phrase or a question"`
	Mode        string `json:"mode,omitempty" jsonschema:"hybrid (words and meaning, the default), semantic or fulltext; pond's vector and fts are accepted"`
	Project     string `json:"project,omitempty" jsonschema:"only sessions whose working folder contains this"`
	SessionID   string `json:"sessionId,omitempty" jsonschema:"only this session"`
	SourceAgent string `json:"sourceAgent,omitempty" jsonschema:"only sessions of this agent: the source kind SessionsStatus lists (claude-code, codex, gemini, cursor, copilot-chat, …)"`
	Role        string `json:"role,omitempty" jsonschema:"only messages of this role: user or assistant"`
	Archived    *bool  `json:"archived,omitempty" jsonschema:"true: only archived sessions (transcript gone, kept by the index); false: only sessions whose transcript is there"`
	From        string `json:"from,omitempty" jsonschema:"only messages on or after this date: YYYY-MM-DD or RFC 3339"`
	To          string `json:"to,omitempty" jsonschema:"only messages on or before this date (a whole day if YYYY-MM-DD)"`
	Sort        string `json:"sort,omitempty" jsonschema:"relevance (the default) or recency (sessions by their latest matching message)"`
	Limit       int    `json:"limit,omitempty" jsonschema:"sessions to return, 1 to 200"`
	MaxHits     int    `json:"maxHits,omitempty" jsonschema:"matching messages per session, 1 to 20"`

	SessionIDAlias   string `json:"session_id,omitempty" jsonschema:"alias of sessionId (pond)"`
	SourceAgentAlias string `json:"source_agent,omitempty" jsonschema:"alias of sourceAgent (pond)"`
	FromDate         string `json:"from_date,omitempty" jsonschema:"alias of from (pond)"`
	ToDate           string `json:"to_date,omitempty" jsonschema:"alias of to (pond)"`
	SortBy           string `json:"sort_by,omitempty" jsonschema:"alias of sort (pond)"`
	Date             string `json:"date,omitempty" jsonschema:"only messages of this one day, YYYY-MM-DD (CodeArchitect)"`
	DateFrom         string `json:"dateFrom,omitempty" jsonschema:"alias of from (CodeArchitect)"`
	DateTo           string `json:"dateTo,omitempty" jsonschema:"alias of to (CodeArchitect)"`
}

func searchSessionsSchema(in *jsonschema.Schema) {
	property(in, "query").MaxLength = ptr(maxQueryChars)
	m := property(in, "mode")
	m.Default = json.RawMessage(`"hybrid"`)
	m.Examples = []any{"hybrid", "semantic", "fulltext"}
	l := property(in, "limit")
	l.Default, l.Minimum, l.Maximum = json.RawMessage("10"), ptr(1.0), ptr(float64(sessions.MaxLimit))
	h := property(in, "maxHits")
	h.Default, h.Minimum, h.Maximum = json.RawMessage("3"), ptr(1.0), ptr(float64(sessions.MaxHits))
	r := property(in, "role")
	r.Enum = []any{"user", "assistant"}
	for _, name := range []string{"project", "sessionId", "session_id", "sourceAgent", "source_agent"} {
		property(in, name).MaxLength = ptr(maxPathBytes)
	}
}

var searchSessionsSpec = func() *argSpec {
	s, err := jsonschema.For[searchSessionsIn](nil)
	if err != nil {
		panic(err)
	}
	searchSessionsSchema(s)
	return argSpecFor[searchSessionsIn](s)
}()

// ParseSearchSessions reads SearchSessions arguments (a JSON object, with
// the tool's aliases and defaults) into a query: what `mnemo sessions
// search --batch` does with each line, so the CLI and the tool agree.
func ParseSearchSessions(raw json.RawMessage) (sessions.Query, error) {
	var in searchSessionsIn
	if err := searchSessionsSpec.decode(raw, &in); err != nil {
		return sessions.Query{}, err
	}
	return in.query()
}

// pick merges a canonical argument with its aliases: any may be given, but
// two that disagree are an error.
func pick(vals map[string]string, order ...string) (string, error) {
	var got, from string
	for _, k := range order {
		v := strings.TrimSpace(vals[k])
		if v == "" {
			continue
		}
		if got != "" && v != got {
			return "", fmt.Errorf("%s %.40q and %s %.40q disagree; give one", from, got, k, v)
		}
		got, from = v, k
	}
	return got, nil
}

// sessionModes maps every accepted spelling of a mode, pond's included.
var sessionModes = map[string]engine.Mode{
	"": engine.Hybrid, "hybrid": engine.Hybrid,
	"semantic": engine.Semantic, "vector": engine.Semantic,
	"fulltext": engine.FullText, "full-text": engine.FullText, "fts": engine.FullText, "text": engine.FullText,
}

func (in *searchSessionsIn) query() (sessions.Query, error) {
	switch {
	case strings.TrimSpace(in.Query) == "":
		return sessions.Query{}, errors.New("query is required")
	case utf8.RuneCountInString(in.Query) > maxQueryChars:
		return sessions.Query{}, fmt.Errorf("query is %d characters, over the limit of %d", utf8.RuneCountInString(in.Query), maxQueryChars)
	case in.Limit < 1 || in.Limit > sessions.MaxLimit:
		return sessions.Query{}, fmt.Errorf("limit must be between 1 and %d (got %d)", sessions.MaxLimit, in.Limit)
	case in.MaxHits < 1 || in.MaxHits > sessions.MaxHits:
		return sessions.Query{}, fmt.Errorf("maxHits must be between 1 and %d (got %d)", sessions.MaxHits, in.MaxHits)
	}
	for _, v := range []string{in.Project, in.SessionID, in.SessionIDAlias, in.SourceAgent, in.SourceAgentAlias} {
		if len(v) > maxPathBytes {
			return sessions.Query{}, fmt.Errorf("a filter is %d bytes, over the %d-byte limit", len(v), maxPathBytes)
		}
	}
	mode, ok := sessionModes[strings.ToLower(strings.TrimSpace(in.Mode))]
	if !ok {
		return sessions.Query{}, fmt.Errorf("mode %.40q: want hybrid, semantic or fulltext (or vector, fts)", in.Mode)
	}
	v := map[string]string{
		"sessionId": in.SessionID, "session_id": in.SessionIDAlias,
		"sourceAgent": in.SourceAgent, "source_agent": in.SourceAgentAlias,
		"from": in.From, "from_date": in.FromDate, "dateFrom": in.DateFrom,
		"to": in.To, "to_date": in.ToDate, "dateTo": in.DateTo,
		"sort": in.Sort, "sort_by": in.SortBy,
	}
	q := sessions.Query{Text: in.Query, Mode: mode, Project: in.Project, Role: in.Role, Archived: in.Archived, Limit: in.Limit, MaxHits: in.MaxHits}
	var err error
	if q.SessionID, err = pick(v, "sessionId", "session_id"); err != nil {
		return q, err
	}
	if q.Agent, err = pick(v, "sourceAgent", "source_agent"); err != nil {
		return q, err
	}
	sort, err := pick(v, "sort", "sort_by")
	if err != nil {
		return q, err
	}
	q.Sort = engine.Sort(sort)
	from, err := pick(v, "from", "from_date", "dateFrom")
	if err != nil {
		return q, err
	}
	to, err := pick(v, "to", "to_date", "dateTo")
	if err != nil {
		return q, err
	}
	if d := strings.TrimSpace(in.Date); d != "" {
		if from != "" || to != "" {
			return q, errors.New("date is one day; give it or from/to, not both")
		}
		from, to = d, d
	}
	if q.From, err = engine.ParseDate("from", from, false); err != nil {
		return q, err
	}
	if q.To, err = engine.ParseDate("to", to, true); err != nil {
		return q, err
	}
	return q.Validate()
}

// searchSessionsOut is sessions.Page, cut to fit when it must be.
type searchSessionsOut struct {
	Query         string            `json:"query"`
	Mode          string            `json:"mode" jsonschema:"hybrid, semantic or fulltext"`
	Sort          string            `json:"sort" jsonschema:"relevance, or recency: sessions ordered by their latest matching message"`
	Indexing      bool              `json:"indexing" jsonschema:"the index is being built; results may be incomplete"`
	TotalSessions int               `json:"totalSessions" jsonschema:"sessions with a matching message"`
	Sessions      []sessions.Result `json:"sessions" jsonschema:"best first; a session's score is its best hit's"`
	Truncated     bool              `json:"truncated,omitempty" jsonschema:"sessions were cut to fit the response limit"`
	Note          string            `json:"note,omitempty"`
}

func (o *searchSessionsOut) units() int { return len(o.Sessions) }

func (o *searchSessionsOut) keep(n int) {
	if n >= len(o.Sessions) {
		return
	}
	o.Note = fmt.Sprintf("response cut to %d of %d sessions to stay under the response size limit; ask for a smaller limit or maxHits", n, len(o.Sessions))
	o.Sessions, o.Truncated = o.Sessions[:n], true
}

func (s *server) searchSessionsTool() tool[searchSessionsIn, searchSessionsOut] {
	return tool[searchSessionsIn, searchSessionsOut]{
		name:  "SearchSessions",
		title: "Search agent sessions",
		desc: "Search past AI-agent sessions (Claude Code, Codex, Gemini CLI, OpenClaw, CodeArchitect transcripts) by words and meaning: what a user or an assistant said. " +
			"Returns sessions best first, each with its best matching messages (excerpts, matches in **bold**). Filter by project folder, session, agent, role and dates. " +
			"Open a hit with GetMessage (sessionId, messageId) or a whole session with GetSession.",
		readOnly:   true,
		idempotent: true,
		schema:     searchSessionsSchema,
		run: func(ctx context.Context, in *searchSessionsIn) (*searchSessionsOut, error) {
			q, err := in.query()
			if err != nil {
				return nil, err
			}
			p, err := s.sess.Search(ctx, q)
			if errors.Is(err, engine.ErrNoTerms) {
				return nil, fmt.Errorf("%w; to list sessions without a query, use ListSessions", err)
			}
			if err != nil {
				return nil, err
			}
			for i := range p.Sessions {
				for j := range p.Sessions[i].Hits {
					h := &p.Sessions[i].Hits[j]
					h.Excerpt = clip(h.Excerpt, s.opts.MaxSnippetBytes)
				}
			}
			return &searchSessionsOut{Query: p.Query, Mode: string(p.Mode), Sort: string(p.Sort), Indexing: p.Indexing,
				TotalSessions: p.TotalSessions, Sessions: p.Sessions}, nil
		},
		text: func(o *searchSessionsOut) string {
			var b strings.Builder
			if len(o.Sessions) == 0 {
				fmt.Fprintf(&b, "No sessions match %q (%s).", o.Query, o.Mode)
			} else {
				fmt.Fprintf(&b, "%s %q (%s, by %s):\n", plural(o.TotalSessions, "session matches", "sessions match"), o.Query, o.Mode, o.Sort)
				for i, r := range o.Sessions {
					arch := ""
					if r.Archived {
						arch = ", archived"
					}
					fmt.Fprintf(&b, "%d. %s %s — %s (score %.2f, %s%s)\n", i+1, r.SourceAgent, r.SessionID, r.Project, r.Score, day(r.Ended), arch)
					for _, h := range r.Hits {
						fmt.Fprintf(&b, "   [%s %s] %s\n", h.Role, h.MessageID, clip(h.Excerpt, 200))
					}
				}
			}
			if o.Indexing {
				b.WriteString("\n(The sessions index is still being built; results may be incomplete.)")
			}
			if o.Note != "" {
				b.WriteString("\n(" + o.Note + ")")
			}
			return strings.TrimRight(b.String(), "\n")
		},
	}
}

func day(t time.Time) string {
	if t.IsZero() {
		return "undated"
	}
	return t.UTC().Format(time.DateOnly)
}

type getSessionIn struct {
	SessionID      string `json:"sessionId,omitempty" jsonschema:"the session, as SearchSessions returned it"`
	SessionIDAlias string `json:"session_id,omitempty" jsonschema:"alias of sessionId (pond)"`
	Offset         int    `json:"offset,omitempty" jsonschema:"first message to return, from 0"`
	Limit          int    `json:"limit,omitempty" jsonschema:"messages to return (the schema gives the bound)"`
}

// sessionViewOut is sessions.View, cut to fit when it must be.
type sessionViewOut struct {
	sessions.View
	Truncated bool   `json:"truncated,omitempty" jsonschema:"messages were cut to fit the response limit"`
	Note      string `json:"note,omitempty"`
}

func (o *sessionViewOut) units() int { return len(o.Messages) }

func (o *sessionViewOut) keep(n int) {
	if n >= len(o.Messages) {
		return
	}
	o.Note = fmt.Sprintf("response cut to %d of %d messages to stay under the response size limit; page with offset and a smaller limit", n, len(o.Messages))
	o.Messages, o.Truncated = o.Messages[:n], true
	if o.Focus >= n {
		o.Focus = -1
	}
}

func sessionID(canonical, alias string) (string, error) {
	id, err := pick(map[string]string{"sessionId": canonical, "session_id": alias}, "sessionId", "session_id")
	if err != nil {
		return "", err
	}
	switch {
	case id == "":
		return "", errors.New("sessionId is required")
	case len(id) > maxPathBytes:
		return "", fmt.Errorf("sessionId is %d bytes, over the %d-byte limit", len(id), maxPathBytes)
	}
	return id, nil
}

func (s *server) getSessionTool() tool[getSessionIn, sessionViewOut] {
	return tool[getSessionIn, sessionViewOut]{
		name:       "GetSession",
		title:      "Read an agent session",
		desc:       "Read the messages of one agent session in order (user and assistant prose, secrets redacted), limit at a time from offset.",
		readOnly:   true,
		idempotent: true,
		schema: func(in *jsonschema.Schema) {
			o := property(in, "offset")
			o.Default, o.Minimum = json.RawMessage("0"), ptr(0.0)
			l := property(in, "limit")
			l.Default, l.Minimum, l.Maximum = json.RawMessage("50"), ptr(1.0), ptr(float64(sessions.MaxMessages))
			l.Description = fmt.Sprintf("messages to return, 1 to %d", sessions.MaxMessages)
		},
		run: func(ctx context.Context, in *getSessionIn) (*sessionViewOut, error) {
			id, err := sessionID(in.SessionID, in.SessionIDAlias)
			if err != nil {
				return nil, err
			}
			if in.Offset < 0 || in.Offset > 1<<31 {
				return nil, fmt.Errorf("offset must be 0 or more (got %d)", in.Offset)
			}
			if in.Limit < 1 || in.Limit > sessions.MaxMessages {
				return nil, fmt.Errorf("limit must be between 1 and %d (got %d)", sessions.MaxMessages, in.Limit)
			}
			v, err := s.sess.GetSession(ctx, id, in.Offset, in.Limit)
			if err != nil {
				return nil, err
			}
			return &sessionViewOut{View: v}, nil
		},
		text: viewText,
	}
}

type getMessageIn struct {
	SessionID      string `json:"sessionId,omitempty" jsonschema:"the session, as SearchSessions returned it"`
	SessionIDAlias string `json:"session_id,omitempty" jsonschema:"alias of sessionId (pond)"`
	MessageID      string `json:"messageId" jsonschema:"the message, as SearchSessions returned it"`
	Context        int    `json:"context,omitempty" jsonschema:"messages to include either side, 0 to 50"`
}

func (s *server) getMessageTool() tool[getMessageIn, sessionViewOut] {
	return tool[getMessageIn, sessionViewOut]{
		name:       "GetMessage",
		title:      "Read a message of an agent session",
		desc:       "Read one message of an agent session in full, with context messages either side (focus is its index in messages).",
		readOnly:   true,
		idempotent: true,
		schema: func(in *jsonschema.Schema) {
			property(in, "messageId").MaxLength = ptr(maxPathBytes)
			c := property(in, "context")
			c.Default, c.Minimum, c.Maximum = json.RawMessage("2"), ptr(0.0), ptr(float64(sessions.MaxContext))
		},
		run: func(ctx context.Context, in *getMessageIn) (*sessionViewOut, error) {
			id, err := sessionID(in.SessionID, in.SessionIDAlias)
			if err != nil {
				return nil, err
			}
			switch {
			case strings.TrimSpace(in.MessageID) == "":
				return nil, errors.New("messageId is required")
			case len(in.MessageID) > maxPathBytes:
				return nil, fmt.Errorf("messageId is %d bytes, over the %d-byte limit", len(in.MessageID), maxPathBytes)
			case in.Context < 0 || in.Context > sessions.MaxContext:
				return nil, fmt.Errorf("context must be between 0 and %d (got %d)", sessions.MaxContext, in.Context)
			}
			v, err := s.sess.GetMessage(ctx, id, in.MessageID, in.Context)
			if err != nil {
				return nil, err
			}
			return &sessionViewOut{View: v}, nil
		},
		text: viewText,
	}
}

func viewText(o *sessionViewOut) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s session %s — %s (%d messages, %s to %s)\n", o.SourceAgent, o.SessionID, o.Project, o.MessageCount, day(o.Started), day(o.Ended))
	for i, m := range o.Messages {
		mark := ""
		if i == o.Focus {
			mark = " ←"
		}
		fmt.Fprintf(&b, "\n[%d %s %s %s]%s\n%s\n", o.Offset+i, m.Role, m.MessageID, m.Timestamp.UTC().Format(time.RFC3339), mark, m.Text)
	}
	if o.Note != "" {
		b.WriteString("\n(" + o.Note + ")")
	}
	return strings.TrimRight(b.String(), "\n")
}
