package remote

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"mnemo/engine"
	"mnemo/engine/sessions"
)

var (
	_ engine.Searcher = (*Pool)(nil)
	_ sessions.Index  = poolSessions{}
)

// maxIdle is how many idle connections a Pool keeps: about as many calls
// as one person's page makes at once (a search, a memory, the status).
const maxIdle = 4

// Pool reaches the server of one index over as many connections as calls
// run at once. A Client runs one call at a time, and a call whose ctx ends
// mid-answer drops its connection, as a page does whenever a person types
// past the search it was running; so a Pool takes an idle Client for each
// call, or dials one, and keeps it afterwards unless it broke.
//
// A Pool serves one server's lifetime: once a connection breaks without
// its caller asking, or no server answers the socket, every call fails
// with ErrGone. Whoever made the Pool checks the next server (it may serve
// another memory folder) and makes a new one.
type Pool struct {
	indexDir string

	mu   sync.Mutex
	idle []*Client
	gone error // set once the server went away
}

// NewPool returns a Pool for the server of the index in indexDir. It
// dials nothing until the first call.
func NewPool(indexDir string) *Pool { return &Pool{indexDir: indexDir} }

// Close closes the idle connections and fails every later call.
func (p *Pool) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gone == nil {
		p.gone = fmt.Errorf("%w: the connection pool is closed", ErrGone)
	}
	for _, c := range p.idle {
		c.Close()
	}
	p.idle = nil
	return nil
}

// get takes an idle Client, or dials a new one.
func (p *Pool) get() (*Client, error) {
	p.mu.Lock()
	if p.gone != nil {
		defer p.mu.Unlock()
		return nil, p.gone
	}
	if n := len(p.idle); n > 0 {
		c := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return c, nil
	}
	p.mu.Unlock()
	c, err := Dial(p.indexDir)
	if err != nil {
		err = fmt.Errorf("%w: %w", ErrGone, err)
		p.mu.Lock()
		if p.gone == nil {
			p.gone = err
		}
		p.mu.Unlock()
		return nil, err
	}
	return c, nil
}

// put gives c back after a call: kept if it still works, closed if not.
func (p *Pool) put(c *Client) {
	c.mu.Lock()
	broken := c.broken
	c.mu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	if broken != nil && errors.Is(broken, ErrGone) && p.gone == nil {
		p.gone = broken
	}
	if broken != nil || p.gone != nil || len(p.idle) >= maxIdle {
		c.Close()
		return
	}
	p.idle = append(p.idle, c)
}

// use runs one call on a Client of p.
func use[T any](p *Pool, call func(*Client) (T, error)) (T, error) {
	c, err := p.get()
	if err != nil {
		var zero T
		return zero, err
	}
	defer p.put(c)
	return call(c)
}

// Search runs q on the server's engine.
func (p *Pool) Search(ctx context.Context, q engine.Query) (engine.Page, error) {
	return use(p, func(c *Client) (engine.Page, error) { return c.Search(ctx, q) })
}

// Read reads one memory through the server's engine, which records the read.
func (p *Pool) Read(ctx context.Context, id string) (engine.Memory, error) {
	return use(p, func(c *Client) (engine.Memory, error) { return c.Read(ctx, id) })
}

// Resolve turns a memory identifier into its path, as the server's engine does.
func (p *Pool) Resolve(id string) (string, error) {
	return use(p, func(c *Client) (string, error) { return c.Resolve(id) })
}

// List describes one folder of the server's memory folder.
func (p *Pool) List(ctx context.Context, folder string) (engine.Listing, error) {
	return use(p, func(c *Client) (engine.Listing, error) { return c.List(ctx, folder) })
}

// Backlinks lists the memories that link to the one id names.
func (p *Pool) Backlinks(ctx context.Context, id string) ([]string, error) {
	return use(p, func(c *Client) ([]string, error) { return c.Backlinks(ctx, id) })
}

// Status describes the server's engine.
func (p *Pool) Status(ctx context.Context) (engine.Status, error) {
	return use(p, func(c *Client) (engine.Status, error) { return c.Status(ctx) })
}

// Sync has the server's engine sync (incrementally unless full).
func (p *Pool) Sync(ctx context.Context, full bool) (engine.Report, error) {
	return use(p, func(c *Client) (engine.Report, error) { return c.Sync(ctx, full) })
}

// BuildContext asks the server's concept graph what surrounds a concept.
func (p *Pool) BuildContext(ctx context.Context, q engine.ContextQuery) (engine.ConceptContext, error) {
	return use(p, func(c *Client) (engine.ConceptContext, error) { return c.BuildContext(ctx, q) })
}

// Visualize has the server draw a concept's neighbourhood in Mermaid.
func (p *Pool) Visualize(ctx context.Context, concept string, depth, maxNodes int) (engine.Diagram, error) {
	return use(p, func(c *Client) (engine.Diagram, error) { return c.Visualize(ctx, concept, depth, maxNodes) })
}

// FindSimilarConcepts ranks concepts by meaning on the server.
func (p *Pool) FindSimilarConcepts(ctx context.Context, concept string, maxResults int) (engine.Similar, error) {
	return use(p, func(c *Client) (engine.Similar, error) { return c.FindSimilarConcepts(ctx, concept, maxResults) })
}

// Concepts lists the server's concepts.
func (p *Pool) Concepts(ctx context.Context) ([]engine.ConceptInfo, error) {
	return use(p, func(c *Client) ([]engine.ConceptInfo, error) { return c.Concepts(ctx) })
}

// FileConcepts lists the concepts one memory links to, as the server indexed it.
func (p *Pool) FileConcepts(ctx context.Context, id string) (engine.FileConcepts, error) {
	return use(p, func(c *Client) (engine.FileConcepts, error) { return c.FileConcepts(ctx, id) })
}

// Sessions is the server's sessions index over p's connections. Its calls
// fail with ErrNoSessions when the server has none.
func (p *Pool) Sessions() sessions.Index { return poolSessions{p} }

type poolSessions struct{ p *Pool }

func sessionsCall[T any](p *Pool, call func(*SessionsClient) (T, error)) (T, error) {
	return use(p, func(c *Client) (T, error) { return call(&SessionsClient{c: c}) })
}

func (s poolSessions) Search(ctx context.Context, q sessions.Query) (sessions.Page, error) {
	return sessionsCall(s.p, func(c *SessionsClient) (sessions.Page, error) { return c.Search(ctx, q) })
}

func (s poolSessions) GetSession(ctx context.Context, id string, offset, limit int) (sessions.View, error) {
	return sessionsCall(s.p, func(c *SessionsClient) (sessions.View, error) { return c.GetSession(ctx, id, offset, limit) })
}

func (s poolSessions) GetMessage(ctx context.Context, id, messageID string, n int) (sessions.View, error) {
	return sessionsCall(s.p, func(c *SessionsClient) (sessions.View, error) { return c.GetMessage(ctx, id, messageID, n) })
}

func (s poolSessions) Sync(ctx context.Context, full bool) (sessions.Report, error) {
	return sessionsCall(s.p, func(c *SessionsClient) (sessions.Report, error) { return c.Sync(ctx, full) })
}

func (s poolSessions) Status(ctx context.Context) (sessions.Status, error) {
	return sessionsCall(s.p, func(c *SessionsClient) (sessions.Status, error) { return c.Status(ctx) })
}

func (s poolSessions) List(ctx context.Context, q sessions.ListQuery) (sessions.Listing, error) {
	return sessionsCall(s.p, func(c *SessionsClient) (sessions.Listing, error) { return c.List(ctx, q) })
}

func (s poolSessions) Forget(ctx context.Context, q sessions.ForgetQuery) (sessions.ForgetReport, error) {
	return sessionsCall(s.p, func(c *SessionsClient) (sessions.ForgetReport, error) { return c.Forget(ctx, q) })
}
