// Package remote lets other processes use an engine that one process holds.
//
// An index has one writer at a time, and its file locks keep even readers
// out while the writer has it open. So `mnemo serve`, which holds the index
// for as long as it runs, also listens on a unix socket beside the index
// (INDEX/serve.sock, mode 0600), and a command that finds the index in use
// sends its requests there instead: it sees the server's latest state, and
// a read it makes is recorded by the server's engine like any other.
//
// The protocol is JSON lines over one connection, one response per request,
// in order:
//
//	→ {"op": "search", "query": {"query": "bbolt", "mode": "fulltext", …}}
//	← {"result": {…engine.Page…}}
//	→ {"op": "read", "id": "decisions/use-bbolt"}
//	← {"error": "\"use-bbolt\": no memory has this path or title: memory not found", "kind": "not-found"}
//
// Ops are search (query: an engine.Query, in the wire form of type query),
// read, peek, resolve and backlinks (id), list (id: the folder), recent
// (limit, since), status, sync (full); the writes: write (write: an
// engine.WriteRequest), edit (edit: an engine.EditRequest), delete (id)
// and move (id, to); the concept graph's graph-context (context: an
// engine.ContextQuery), graph-show (concept, depth, max), graph-similar
// (concept, max), graph-concepts and graph-file (id); and, when the server
// holds a sessions index, the sessions.* ops of sessions.go. These are the
// methods of engine.Memories, so a Client can stand wherever the engine
// does, behind the MCP tools included. An error's kind names the engine
// sentinel it wraps, so the client's error still matches it with
// errors.Is. A request line may be up to MaxRequest bytes.
package remote

import (
	"context"
	"errors"
	"time"

	"mnemo/engine"
	"mnemo/engine/admit"
	"mnemo/engine/sessions"
)

// MaxRequest bounds one request line. Queries are short; the bound keeps a
// confused client from making the server buffer without end.
const MaxRequest = 1 << 20

// The ops.
const (
	opSearch    = "search"
	opRead      = "read"
	opPeek      = "peek"
	opRecent    = "recent"
	opResolve   = "resolve"
	opBacklinks = "backlinks"
	opList      = "list"
	opStatus    = "status"
	opSync      = "sync"

	opWrite  = "write"
	opEdit   = "edit"
	opDelete = "delete"
	opMove   = "move"

	opGraphContext  = "graph-context"
	opGraphShow     = "graph-show"
	opGraphSimilar  = "graph-similar"
	opGraphConcepts = "graph-concepts"
	opGraphFile     = "graph-file"

	opMCP = "mcp" // switches the connection to MCP (Options.MCP)
)

// request is one line from the client. Only the fields its op uses are set.
type request struct {
	Op    string `json:"op"`
	Query *query `json:"query,omitempty"`
	ID    string `json:"id,omitempty"`
	Full  bool   `json:"full,omitempty"`

	Write *engine.WriteRequest `json:"write,omitempty"`
	Edit  *engine.EditRequest  `json:"edit,omitempty"`
	To    string               `json:"to,omitempty"`    // move's destination
	Since time.Duration        `json:"since,omitempty"` // recent's span; its limit is Limit below

	Context *engine.ContextQuery `json:"context,omitempty"`
	Concept string               `json:"concept,omitempty"`
	Depth   int                  `json:"depth,omitempty"`
	Max     int                  `json:"max,omitempty"`
	// The sessions ops' fields (sessions.go).
	Sessions *sessions.Query       `json:"sessions,omitempty"`
	List     *sessions.ListQuery   `json:"list,omitempty"`
	Forget   *sessions.ForgetQuery `json:"forget,omitempty"`
	Message  string                `json:"message,omitempty"`
	Offset   int                   `json:"offset,omitempty"`
	Limit    int                   `json:"limit,omitempty"`
	Around   int                   `json:"around,omitempty"`
}

// query is engine.Query on the wire. Both ends are mnemo, so it is plain
// encoding/json, not the lenient reading of the front ends that take a
// query typed by hand (mcp/args): no aliases, dates as encoding/json writes
// them. Its names are the SearchMemories argument names the socket has
// always used, so a command and a serve a version apart still agree on
// them. It converts to and from engine.Query, whose fields it repeats.
type query struct {
	Text       string      `json:"query"`
	Mode       engine.Mode `json:"mode,omitempty"`
	Page       int         `json:"page,omitempty"`
	PageSize   int         `json:"pageSize,omitempty"`
	Folder     string      `json:"folder,omitempty"`
	Tags       []string    `json:"tags,omitempty"`
	From       time.Time   `json:"from,omitzero"`
	To         time.Time   `json:"to,omitzero"`
	MinScore   float64     `json:"minScore,omitempty"`
	Sort       engine.Sort `json:"sort,omitempty"`
	Now        time.Time   `json:"now,omitzero"`
	NoSnippets bool        `json:"noSnippets,omitempty"`
}

// response is one line from the server: a result or an error.
type response struct {
	Result any    `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`
	Kind   string `json:"kind,omitempty"`
}

// Kinds of error that are not an engine sentinel.
const (
	kindBadRequest = "bad-request" // the line was not a request this server understands
	kindOther      = "other"
	kindForeign    = "foreign-peer" // the connecting process is another user's
)

// sentinels are the errors that keep their identity across the socket, by
// the name the protocol gives each.
var sentinels = []struct {
	kind string
	err  error
}{
	{"empty-query", engine.ErrEmptyQuery},
	{"no-terms", engine.ErrNoTerms},
	{"bad-page", engine.ErrBadPage},
	{"bad-page-size", engine.ErrBadPageSize},
	{"bad-mode", engine.ErrBadMode},
	{"bad-sort", engine.ErrBadSort},
	{"bad-range", engine.ErrBadRange},
	{"bad-min-score", engine.ErrBadMinScore},
	{"outside-root", engine.ErrOutsideRoot},
	{"not-regular", engine.ErrNotRegular},
	{"not-found", engine.ErrNotFound},
	{"exists", engine.ErrExists},
	{"conflict", engine.ErrConflict},
	{"no-match", engine.ErrNoMatch},
	{"invalid", engine.ErrInvalid},
	{"closed", engine.ErrClosed},
	{"bad-role", sessions.ErrBadRole},
	{"bad-limit", sessions.ErrBadLimit},
	{"bad-max-hits", sessions.ErrBadMaxHits},
	{"bad-offset", sessions.ErrBadOffset},
	{"bad-context", sessions.ErrBadContext},
	{"no-session", sessions.ErrNoSession},
	{"no-message", sessions.ErrNoMessage},
	{"nothing-to-forget", sessions.ErrNothingToForget},
	{"read-only", engine.ErrReadOnly},
	{"not-ready", engine.ErrIndexNotReady},
	{"incompatible", engine.ErrIndexIncompatible},
	{"damaged", engine.ErrIndexDamaged},
	{"in-use", engine.ErrInUse},
	{"unknown-concept", engine.ErrUnknownConcept},
	{"bad-graph-arg", engine.ErrBadGraphArg},
	{"busy", admit.ErrBusy},
	{kindForeign, ErrForeignPeer},
	{"no-sessions", ErrNoSessions},
	{"canceled", context.Canceled},
	{"deadline", context.DeadlineExceeded},
}

// kindOf names the sentinel err wraps, or "other".
func kindOf(err error) string {
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			return s.kind
		}
	}
	return kindOther
}

// sentinel is the error a kind names, or nil.
func sentinel(kind string) error {
	for _, s := range sentinels {
		if s.kind == kind {
			return s.err
		}
	}
	return nil
}

// ErrGone is what a call fails with when its connection broke without
// the caller asking (the server stopped, was killed, or is handing the
// index over to another serve): the call may or may not have run, and a
// Client fails every later call with it too.
var ErrGone = errors.New("mnemo serve went away")

// Error is an error the server answered with. Its message is the server's;
// it wraps the engine error its kind names, if any, for errors.Is.
type Error struct {
	Msg  string
	Kind string
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return sentinel(e.Kind) }
