// Package mcp serves a mnemo engine to AI agents over the Model Context
// Protocol, with the official Go SDK: over stdio (what Claude Code, Claude
// Desktop and Codex start) or streamable HTTP on a loopback address.
//
// Fifteen tools, each in the file that bears its name's subject:
// SearchMemories (search.go), ReadMemory (read.go), WriteMemory,
// EditMemory, DeleteMemory and MoveMemory (write.go), ListMemories and
// RecentActivity (list.go), Sync, MemoryStatus and GetConfig (status.go),
// and the concept graph's BuildContext, Visualize, FindSimilarConcepts and
// ExtractConceptsFromFile (graph.go); and, with a sessions index
// (Options.Sessions), SearchSessions, GetSession and GetMessage (sessions.go).
//
// Every tool declares an input and an output schema, returns its result as
// structured content plus a short plain-text rendering, and answers a bad
// argument with a one-line error result (isError), never a crash. Paths and
// identifiers are checked by the engine, which keeps them inside the memory
// folder. Responses are capped (Options.MaxResponseBytes); a result cut to
// fit says so with truncated and a note.
package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"mnemo/decay"
	"mnemo/engine"
	"mnemo/engine/sessions"
)

// Defaults for Options.
const (
	DefaultMaxResponseBytes = 256 << 10
	DefaultMaxSnippetBytes  = 400
)

// Options configure the server. The zero value serves stdio with the defaults.
type Options struct {
	// Version is reported to clients as the server's version; "" means "dev".
	Version string

	// HTTPAddr, if set, serves streamable HTTP at http://HTTPAddr/mcp
	// instead of stdio. It must be a loopback address (127.0.0.1:8765,
	// [::1]:8765, localhost:8765). HTTP holds the HTTP server's settings
	// (http.go); its Token is required.
	HTTPAddr string
	HTTP     HTTPOptions
	// Listening, if set, is called with the URL once the HTTP server listens.
	Listening func(url string)

	// MaxResponseBytes caps one tool result, structured content and text
	// together; 0 means DefaultMaxResponseBytes. Results are cut to fit and
	// say so; ReadMemory cuts the content.
	MaxResponseBytes int
	// MaxSnippetBytes caps each search snippet; 0 means DefaultMaxSnippetBytes.
	MaxSnippetBytes int

	// Lookup and Environ read the environment for GetConfig; nil means
	// os.LookupEnv and os.Environ. Only GetConfig reads them.
	Lookup  func(string) (string, bool)
	Environ func() []string
	// Settings are the edge's own configuration for GetConfig: the
	// MAENIFOLD_* variables the command reads (MAENIFOLD_ROOT, …) and flags
	// that override a variable ("flag --decay-function"), each with its
	// effective value and source. One replaces the entry of the same name.
	Settings []decay.Setting

	// Sessions, if set, serves the agent-session tools SearchSessions,
	// GetSession and GetMessage (sessions.go), and Sync syncs it too.
	Sessions sessions.Index

	// Logger receives the server's log; nil discards it. Over stdio it must
	// not write to stdout.
	Logger *slog.Logger
}

// server is what the tool handlers share. Searches are bounded by the
// process's gate, which the corpora pass (engine.Config.Admit): a search
// that finds it full past its queue timeout fails with admit.ErrBusy, a
// tool error that says "busy, retry".
type server struct {
	eng  engine.Memories
	sess sessions.Index // nil: no sessions index
	opts Options
}

func (s *server) logf(format string, args ...any) {
	if s.opts.Logger != nil {
		s.opts.Logger.Error(fmt.Sprintf(format, args...))
	}
}

const instructions = `mnemo is a memory of markdown files. Search it with SearchMemories before answering questions about past work, decisions or people; open a result with ReadMemory (by its uri) before relying on it. Concepts linked as [[WikiLinks]] form a graph: BuildContext shows what surrounds one. Record what is worth keeping with WriteMemory; change a memory with EditMemory, passing the checksum ReadMemory returned so a concurrent change is not overwritten.`

// NewServer returns an MCP server with mnemo's tools, serving eng: an
// open *engine.Engine, or anything else that answers as the memory corpus.
func NewServer(eng engine.Memories, opts Options) *sdk.Server {
	if opts.MaxResponseBytes <= 0 {
		opts.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if opts.MaxSnippetBytes <= 0 {
		opts.MaxSnippetBytes = DefaultMaxSnippetBytes
	}
	if opts.Lookup == nil {
		opts.Lookup = os.LookupEnv
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ
	}
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "mnemo", Title: "mnemo memory", Version: version},
		&sdk.ServerOptions{Instructions: instructions, Logger: opts.Logger})
	srv := &server{eng: eng, sess: opts.Sessions, opts: opts}
	add(s, srv, srv.searchTool())
	add(s, srv, srv.readTool())
	add(s, srv, srv.writeTool())
	add(s, srv, srv.editTool())
	add(s, srv, srv.deleteTool())
	add(s, srv, srv.moveTool())
	add(s, srv, srv.listTool())
	add(s, srv, srv.recentTool())
	add(s, srv, srv.syncTool())
	add(s, srv, srv.statusTool())
	add(s, srv, srv.configTool())
	add(s, srv, srv.contextTool())
	add(s, srv, srv.visualizeTool())
	add(s, srv, srv.similarTool())
	add(s, srv, srv.extractTool())
	if srv.sess != nil {
		add(s, srv, srv.searchSessionsTool())
		add(s, srv, srv.getSessionTool())
		add(s, srv, srv.getMessageTool())
		add(s, srv, srv.sessionsStatusTool())
		add(s, srv, srv.listSessionsTool())
		add(s, srv, srv.forgetSessionsTool())
	}
	return s
}

// Serve serves eng until ctx is done or, over stdio, the client hangs up:
// over stdio by default, over streamable HTTP if opts.HTTPAddr is set.
func Serve(ctx context.Context, eng engine.Memories, opts Options) error {
	return ServeServer(ctx, NewServer(eng, opts), opts)
}

// ServeServer serves s (NewServer's, or a Proxy's) as Serve does, with the
// transport options of opts.
func ServeServer(ctx context.Context, s *sdk.Server, opts Options) error {
	if opts.HTTPAddr != "" {
		return serveHTTP(ctx, s, opts)
	}
	err := s.Run(ctx, newStdioTransport(os.Stdin, os.Stdout))
	if ctx.Err() != nil {
		return nil // asked to stop
	}
	return err
}

// CheckHTTPAddr refuses an HTTP address Serve would not listen on: not
// HOST:PORT, or not a loopback host. Front ends call it to reject a bad flag
// before they open the index.
func CheckHTTPAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--http %q: want HOST:PORT, e.g. 127.0.0.1:8765", addr)
	}
	if !isLoopback(host) {
		return fmt.Errorf("--http %q: refusing a non-loopback address; the MCP server listens on 127.0.0.1, ::1 or localhost only", addr)
	}
	return nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
