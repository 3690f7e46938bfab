// Package web is mnemo's page for people: search, read and browse the
// memories and agent sessions, and look at the concept graph, in a
// browser. It is one more front end over the same corpora the MCP tools
// and the CLI use: every answer comes from the engine's exported methods,
// reached through the small interfaces below, so a search on the page
// gives what SearchMemories gives and a memory opened on the page counts
// as read, as ReadMemory does. The same interfaces are met by the client
// of another serve's socket, so the page of a serve that fronts the
// holder answers as the holder's would.
//
// The page itself (HTML, script, style, the vendored graph library) is
// embedded in the binary and served to anyone on the loopback address;
// it holds nothing. Its data comes from a JSON API under /api/ that asks
// for the same bearer token as /mcp, which the page takes once from the
// URL fragment "#token=…" (a fragment is never sent to a server, so it
// lands in no log) and keeps in sessionStorage. Memories and transcripts
// are untrusted content: markdown is rendered server-side without raw
// HTML, the page inserts no HTML of its own making from them, and a strict
// Content-Security-Policy forbids inline script and style.
package web

import (
	"context"
	"net/http"
	"sync/atomic"

	"mnemo/engine"
	"mnemo/engine/sessions"
)

// Memories is what the page asks of the memory corpus (*engine.Engine).
type Memories interface {
	Search(ctx context.Context, q engine.Query) (engine.Page, error)
	// Read returns a memory and records the read, as ReadMemory does.
	Read(ctx context.Context, id string) (engine.Memory, error)
	// Resolve finds the memory a link or identifier names.
	Resolve(id string) (string, error)
	Backlinks(ctx context.Context, id string) ([]string, error)
	List(ctx context.Context, folder string) (engine.Listing, error)
	BuildContext(ctx context.Context, q engine.ContextQuery) (engine.ConceptContext, error)
	Concepts(ctx context.Context) ([]engine.ConceptInfo, error)
	FileConcepts(ctx context.Context, id string) (engine.FileConcepts, error)
	FindSimilarConcepts(ctx context.Context, concept string, maxResults int) (engine.Similar, error)
	Status(ctx context.Context) (engine.Status, error)
}

// Sessions is what the page asks of the agent-sessions corpus
// (*sessions.Corpus).
type Sessions interface {
	Search(ctx context.Context, q sessions.Query) (sessions.Page, error)
	List(ctx context.Context, q sessions.ListQuery) (sessions.Listing, error)
	GetSession(ctx context.Context, id string, offset, limit int) (sessions.View, error)
	GetMessage(ctx context.Context, id, messageID string, n int) (sessions.View, error)
	Status(ctx context.Context) (sessions.Status, error)
}

// Corpora are the two corpora a serve holds; Sessions is nil when serve
// runs without the sessions index.
type Corpora struct {
	Memories Memories
	Sessions Sessions
}

// Options configure a Server.
type Options struct {
	// Token is the bearer token every /api/ request must carry (the one
	// /mcp asks for). Required.
	Token string
	// Version is shown in the page's footer.
	Version string
}

// Server serves the page and its API. The corpora come and go as the serve
// holding the index changes: the engine itself while this serve holds the
// index, the holder's over its socket (cmd/mnemo/remote) while this serve
// is the front end of another; until SetCorpora gives some, and while a
// handover is under way, the API answers 503 and the page says to retry.
type Server struct {
	opts    Options
	corpora atomic.Pointer[Corpora]
	mux     *http.ServeMux
}

// New returns a Server with no corpora yet.
func New(opts Options) *Server {
	s := &Server{opts: opts, mux: http.NewServeMux()}
	s.routes()
	return s
}

// SetCorpora gives the server the corpora to answer from; nil takes them
// away (the index was handed over or closed).
func (s *Server) SetCorpora(c *Corpora) { s.corpora.Store(c) }

// ServeHTTP serves the page at / and the API at /api/.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	s.mux.ServeHTTP(w, r)
}

// csp allows only the page's own script, style, images and API: no
// inline script or style attribute, no frame, no form posting elsewhere.
// Rendered memories may link anywhere (a click leaves the page) but load
// nothing: render turns images into links, and should one slip through,
// an image from elsewhere is refused, so a hostile memory cannot beacon out.
const csp = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
