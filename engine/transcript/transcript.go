// Package transcript reads AI-agent session transcripts in place — Claude Code,
// Codex, Gemini CLI, OpenClaw, CodeArchitect and a generic JSONL form — and turns
// each into the same record: a Session and its user and assistant Messages, with
// secrets already redacted. Everything after this package is format-blind.
//
// Reading is incremental and streaming: Read resumes from a Cursor the caller
// stored, never loads a whole file into memory, and tells the caller (through
// Handler.Reset) when a file was rewritten, truncated or rewound so that what it
// indexed before is no longer true.
//
// By default only the prose of the active branch is kept: no tool calls or
// results, thinking or reasoning, system or developer prompts, injected
// environment or instructions, subagent or sidechain transcripts, abandoned
// branches, or duplicate copies; images become "[image]".
package transcript

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Kind names a transcript format (and the agent that writes it).
type Kind string

// The formats this package reads.
const (
	ClaudeCode    Kind = "claude-code"
	Codex         Kind = "codex"
	Gemini        Kind = "gemini"
	OpenClaw      Kind = "openclaw"
	Pi            Kind = "pi"
	CodeArchitect Kind = "codearchitect"
	JSONL         Kind = "jsonl"
)

// Kinds lists every format, in the order sources are listed by default.
var Kinds = append([]Kind{ClaudeCode, Codex, Gemini, OpenClaw, Pi, CodeArchitect, JSONL}, moreKinds...)

// Session describes one transcript.
type Session struct {
	ID    string // the format's session id
	Agent Kind
	// Project is the working folder (cwd), or the best-known project name
	// (Gemini: the path in .project_root, else the folder's hash).
	Project string
	// ProjectHash is, for Gemini, the SHA-256 (hex) of the project path when
	// known, so that a full-path filter also matches a session known only by hash.
	ProjectHash string
	Path        string // the transcript file (CodeArchitect: the topic folder)
	Summary     string // redacted; may be empty
	Started     time.Time
	Ended       time.Time
}

// Message is one user or assistant turn of prose.
type Message struct {
	// ID is stable within the session: the format's id where it has one, else
	// one derived from the message's place in the file. A Message may repeat an
	// ID that an earlier Read delivered (a Claude Code reply written as several
	// lines that straddled two reads, a Gemini message recorded again): the
	// later Message replaces the earlier.
	ID        string
	Role      string // RoleUser or RoleAssistant
	Timestamp time.Time
	Text      string // prose only, already redacted
}

// The two roles a Message can have.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Options widens what Read keeps beyond the defaults.
type Options struct {
	// IncludeTools keeps tool calls and tool results as assistant and user
	// messages (still redacted).
	IncludeTools bool
	// IncludeSubagents makes Discover and Owns accept subagent / sidechain
	// transcripts (Claude Code's <session>/subagents/agent-*.jsonl).
	IncludeSubagents bool
	// MaxLineBytes bounds one JSONL line; 0 means DefaultMaxLineBytes. A
	// longer line (a huge pasted image, say) is skipped without being loaded,
	// and counted in Result.TooLong.
	MaxLineBytes int
	// Scratch is a private folder where sources that keep many sessions in
	// one file (a database, an export) hold their snapshots and listings;
	// "" means a folder in the system's temp folder.
	Scratch string
}

// Cursor is what the caller stores per transcript between reads. It is opaque
// to the caller and JSON-serialisable; the zero Cursor means "from the start".
type Cursor struct {
	Size    int64     `json:"size"`
	ModTime time.Time `json:"modTime"`
	Offset  int64     `json:"offset"`
	State   []byte    `json:"state,omitempty"`
}

// Handler receives what Read finds. Reset, if called, comes once and before
// any Message: the caller must drop every message it holds for this
// transcript, because the whole active branch follows.
type Handler struct {
	Reset   func() error
	Message func(Message) error
}

// Result is what one Read saw.
type Result struct {
	Session  Session
	Cursor   Cursor // store it and pass it to the next Read of this path
	Messages int    // messages delivered by this Read
	Reset    bool   // Handler.Reset was called
	// Malformed, TooLong and Ignored repeat Coverage's Malformed, TooLong
	// and Unknown + Foreign counts, for callers that predate it.
	Malformed int
	TooLong   int
	Ignored   int
	// Coverage accounts for every line this Read consumed (coverage.go).
	Coverage Coverage
}

// DefaultMaxLineBytes is the default bound on one JSONL line.
const DefaultMaxLineBytes = 32 << 20

// Read reads one transcript of src incrementally from prev (the zero Cursor
// reads from the start), streaming: it never loads the whole file (a
// CodeArchitect session, written once as a small markdown file, is read
// whole, up to 64 MiB). For CodeArchitect, path is the topic folder. If the
// file was rewritten, truncated or rewound so that messages delivered before
// changed, it calls h.Reset once before any h.Message and delivers the whole
// active branch again; otherwise it delivers only new messages. Malformed
// lines are skipped and counted, never fatal; unknown record types are
// ignored. An error from a Handler function stops the read and is returned.
func Read(ctx context.Context, src Source, path string, prev Cursor, opt Options, h Handler) (Result, error) {
	return readWith(ctx, src, path, prev, opt, h, Redact)
}

// readWith is Read with the redactor as a parameter, so that the parsers can be
// fuzzed without the rule set in the loop.
func readWith(ctx context.Context, src Source, path string, prev Cursor, opt Options, h Handler, redact func(string) string) (Result, error) {
	if f, ok := formats[src.Kind]; ok && f.container != nil && isContained(path) {
		return readContained(ctx, src, path, prev, opt, h, redact)
	}
	fi, err := statRule(src, path)
	if err != nil {
		return Result{}, fmt.Errorf("transcript %s: %w", path, err)
	}
	if opt.MaxLineBytes <= 0 {
		opt.MaxLineBytes = DefaultMaxLineBytes
	}
	r := &run{ctx: ctx, src: src, path: path, opt: opt, h: h, fi: fi, redact: redact}
	if len(prev.State) > 0 {
		if err := json.Unmarshal(prev.State, &r.prev); err != nil {
			// A cursor we cannot read is a cursor we cannot trust: start over.
			prev = Cursor{}
			r.prev = state{}
		}
	}
	r.cur = prev
	var read func(*run) error
	switch src.Kind {
	case ClaudeCode:
		read = readClaude
	case Codex:
		read = readCodex
	case Gemini:
		read = readGemini
	case OpenClaw, Pi:
		read = readOpenClaw
	case CodeArchitect:
		read = readCodeArchitect
	case JSONL:
		read = readJSONL
	default:
		if f, ok := formats[src.Kind]; ok && f.read != nil {
			read = f.read
			break
		}
		return Result{}, fmt.Errorf("transcript %s: unknown source kind %q", path, src.Kind)
	}
	if err := read(r); err != nil {
		return r.res, fmt.Errorf("transcript %s: %w", path, err)
	}
	return r.finish()
}

// run is the state of one Read.
type run struct {
	ctx  context.Context
	src  Source
	path string
	opt  Options
	h    Handler
	fi   os.FileInfo
	// redact is Redact, except under fuzzing.
	redact func(string) string

	prev state  // the state the caller's cursor carried
	next state  // the state to hand back
	cur  Cursor // the cursor to hand back (State is filled by finish)
	res  Result
	// tooLong holds the offsets of lines skipped for length (Result.TooLong).
	tooLong map[int64]bool
	// lineBuf is the buffer lines assembles long lines in, kept across passes.
	lineBuf []byte
	// cov counts the lines of the counting pass (see startCount); countFrom
	// is where that pass began, counting whether it did.
	cov       Coverage
	countFrom int64
	counting  bool
	// queue is Claude Code's queue of typed messages (claudequeue.go).
	queue *claudeQueue
	// intern holds the strings the lines repeat (jsonscan.go).
	intern strIntern
	// sub: whether a Claude Code transcript is a subagent's.
	sub claudeSubagent
}

// startCount begins the pass that accounts for every line from `from`
// (coverage.go); each reader has exactly one such pass per Read, whose
// callback calls count or countIndexed once for every line it is given. A
// pass from the start counts the whole transcript again.
func (r *run) startCount(from int64) {
	r.cov = Coverage{Whole: from == 0}
	r.countFrom, r.counting = from, true
}

// count records the current line as left out for why.
func (r *run) count(why Reason) { r.cov.Count(why) }

// countIndexed records the current line as indexed.
func (r *run) countIndexed() { r.cov.CountIndexed() }

// countMessage records the current line as indexed if m has text, else as
// left out for why (Empty if why is unset), and delivers m.
func (r *run) countMessage(m Message, why Reason) error {
	if m.Text == "" {
		if why == "" {
			why = Empty
		}
		r.count(why)
		return nil
	}
	r.countIndexed()
	return r.emit(m)
}

// settleCoverage adds the lines skipped for length within the counting pass
// and derives the older per-reason fields from the counts.
func (r *run) settleCoverage() {
	if !r.counting {
		return
	}
	for off := range r.tooLong {
		if off >= r.countFrom {
			r.cov.Count(TooLong)
		}
	}
	r.res.Coverage = r.cov
	r.res.Malformed = r.cov.LeftOut[Malformed]
	r.res.TooLong = r.cov.LeftOut[TooLong]
	r.res.Ignored = r.cov.LeftOut[Unknown] + r.cov.LeftOut[Foreign]
}

// state is what a Cursor's State holds, for every format.
type state struct {
	V       int     `json:"v"`
	Session Session `json:"session"`
	// Messages counts the messages delivered since the last Reset: a file
	// that changed before any was delivered needs no Reset.
	Messages int `json:"messages,omitempty"`
	// Head is the hex SHA-256 of the file's first HeadLen bytes (up to 4 KiB,
	// within Offset): an edit near the top changes it.
	Head    string `json:"head,omitempty"`
	HeadLen int    `json:"headLen,omitempty"`
	// Anchor is the hex SHA-256 of the AnchorLen bytes before Offset: if they
	// changed, the file was rewritten and an append-only read would be wrong.
	Anchor    string `json:"anchor,omitempty"`
	AnchorLen int    `json:"anchorLen,omitempty"`
	// Count and Prefix describe, for whole-file formats (Gemini JSON, CodeArchitect),
	// how many messages were delivered and a hash of them, to tell growth from rewrite.
	Count  int    `json:"count,omitempty"`
	Prefix string `json:"prefix,omitempty"`
	// Claude Code: the uuid the next lines must attach to, and the reply (message.id)
	// still open at Offset, re-read from GroupFrom when it grows.
	Leaf       string `json:"leaf,omitempty"`
	GroupFrom  int64  `json:"groupFrom,omitempty"`
	GroupMsgID string `json:"groupMsgId,omitempty"`
	GroupLeaf  string `json:"groupLeaf,omitempty"`
	// Generic JSONL / OpenClaw: per-format extras.
	Extra json.RawMessage `json:"extra,omitempty"`
}

const stateVersion = 2

// unchanged reports whether the file is exactly as the cursor left it.
func (r *run) unchanged() bool {
	return r.cur.State != nil && r.cur.Size == r.fi.Size() && r.cur.ModTime.Equal(r.fi.ModTime()) && r.prev.V == stateVersion
}

// reset calls Handler.Reset once and starts the session's bookkeeping over.
func (r *run) reset() error {
	if r.res.Reset {
		return nil
	}
	r.res.Reset = true
	r.res.Messages = 0
	if r.h.Reset != nil {
		if err := r.h.Reset(); err != nil {
			return err
		}
	}
	return nil
}

// emit redacts and delivers one message, keeping the session's time span.
func (r *run) emit(m Message) error {
	if m.Text == "" {
		return nil
	}
	m.Text = r.redact(m.Text)
	s := &r.next.Session
	if !m.Timestamp.IsZero() {
		if s.Started.IsZero() || m.Timestamp.Before(s.Started) {
			s.Started = m.Timestamp
		}
		if m.Timestamp.After(s.Ended) {
			s.Ended = m.Timestamp
		}
	}
	r.res.Messages++
	r.next.Messages++
	if r.h.Message != nil {
		return r.h.Message(m)
	}
	return nil
}

// finish fills the Result's session and cursor.
func (r *run) finish() (Result, error) {
	r.next.V = stateVersion
	s := &r.next.Session
	if s.Agent == "" {
		s.Agent = r.src.Kind // the generic JSONL source may name the agent
	}
	if s.Path == "" {
		s.Path = r.path
	}
	s.Summary = r.redact(s.Summary)
	st, err := json.Marshal(r.next)
	if err != nil {
		return r.res, fmt.Errorf("transcript %s: cursor: %w", r.path, err)
	}
	r.cur.State = st
	r.settleCoverage()
	r.res.Session = *s
	if s.ID == "" {
		// Not kept in the cursor: a later line may still name the session.
		r.res.Session.ID = strings.TrimSuffix(filepath.Base(r.path), filepath.Ext(r.path))
	}
	r.res.Cursor = r.cur
	return r.res, nil
}

// parseTime reads the timestamps the formats write (RFC 3339, with or without
// fractions, or Unix milliseconds). The zero time means "unknown".
func parseTime(v any) time.Time {
	switch t := v.(type) {
	case string:
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
			if ts, err := time.Parse(layout, t); err == nil {
				return ts.UTC()
			}
		}
	case float64:
		if t > 1e12 {
			return time.UnixMilli(int64(t)).UTC()
		}
		if t > 0 {
			return time.Unix(int64(t), 0).UTC()
		}
	case json.Number:
		if f, err := t.Float64(); err == nil {
			return parseTime(f)
		}
	}
	return time.Time{}
}
