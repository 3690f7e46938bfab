package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"sync"
	"time"

	"mnemo/engine"
)

var _ engine.Memories = (*Client)(nil)

// Client sends requests to the server of one index over one connection.
// Its methods match *engine.Engine's, writes included (it is an
// engine.Memories, so mcp.NewServer can serve it); they are safe for
// concurrent use and run one at a time. An error the server answers with
// is an *Error that wraps the engine's sentinel error; a broken connection
// fails this call and every later one (with ErrGone, unless the call's ctx
// broke it).
type Client struct {
	mu     sync.Mutex
	conn   net.Conn
	enc    *json.Encoder
	dec    *json.Decoder
	broken error
}

// Dial connects to the server of the index in indexDir (see Listen for
// where its socket is). It fails if no server answers there, and refuses
// a socket, or a server, of another user (ErrForeignPeer).
func Dial(indexDir string) (*Client, error) {
	conn, err := dial(indexDir)
	if err != nil {
		return nil, err
	}
	enc := json.NewEncoder(conn)
	enc.SetEscapeHTML(false)
	return &Client{conn: conn, enc: enc, dec: json.NewDecoder(conn)}, nil
}

// dial connects to the socket of the index in indexDir, if it is this
// user's and so is the process serving it.
func dial(indexDir string) (net.Conn, error) {
	path, err := socketPath(indexDir)
	if err != nil {
		return nil, err
	}
	if err := checkSocketFile(path); err != nil {
		return nil, fmt.Errorf("connect to mnemo serve: %w", err)
	}
	conn, err := net.DialTimeout("unix", path, dialTimeout)
	if err != nil {
		return nil, fmt.Errorf("connect to mnemo serve: %w", err)
	}
	if err := checkPeer(conn); err != nil {
		conn.Close()
		return nil, fmt.Errorf("connect to mnemo serve on %s: %w", path, err)
	}
	return conn, nil
}

// DialMCP connects to the server of the index in indexDir and switches the
// connection to MCP (Options.MCP): what is returned carries JSON-RPC lines
// to and from the server's MCP tools.
func DialMCP(ctx context.Context, indexDir string) (net.Conn, error) {
	conn, err := dial(indexDir)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	conn.SetDeadline(time.Now().Add(dialTimeout))
	if _, err := io.WriteString(conn, `{"op":"mcp"}`+"\n"); err != nil {
		conn.Close()
		return nil, fmt.Errorf("mnemo serve: ask for MCP: %w", err)
	}
	// Byte by byte: what follows the answer is the MCP stream's.
	var line []byte
	for b := make([]byte, 1); len(line) < 4096; {
		if _, err := conn.Read(b); err != nil {
			conn.Close()
			return nil, fmt.Errorf("mnemo serve: ask for MCP: %w", err)
		}
		if b[0] == '\n' {
			break
		}
		line = append(line, b[0])
	}
	var resp response
	if err := json.Unmarshal(line, &resp); err != nil || resp.Result != opMCP {
		conn.Close()
		if resp.Error != "" {
			return nil, &Error{Msg: resp.Error, Kind: resp.Kind}
		}
		return nil, fmt.Errorf("mnemo serve does not serve MCP on its socket (answered %q)", line)
	}
	conn.SetDeadline(time.Time{})
	return conn, nil
}

// Close closes the connection.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken == nil {
		c.broken = errors.New("client is closed")
	}
	return c.conn.Close()
}

// Search runs q on the server's engine.
func (c *Client) Search(ctx context.Context, q engine.Query) (engine.Page, error) {
	var p engine.Page
	err := c.call(ctx, request{Op: opSearch, Query: (*query)(&q)}, &p)
	return p, err
}

// Read reads one memory through the server's engine, which records the read.
func (c *Client) Read(ctx context.Context, id string) (engine.Memory, error) {
	var m engine.Memory
	err := c.call(ctx, request{Op: opRead, ID: id}, &m)
	return m, err
}

// Peek returns one memory as Read does, without the server recording the read.
func (c *Client) Peek(ctx context.Context, id string) (engine.Memory, error) {
	var m engine.Memory
	err := c.call(ctx, request{Op: opPeek, ID: id}, &m)
	return m, err
}

// RecentWhere lists the memories the server's engine has seen modified or
// read most recently, as engine.Engine.RecentWhere does. keep runs here,
// not on the server, so the list is asked for in growing prefixes until
// limit of them pass keep or the server has no more.
func (c *Client) RecentWhere(ctx context.Context, limit int, since time.Duration, keep func(path string) bool) ([]engine.Activity, error) {
	want := limit
	if want == 0 {
		want = engine.DefaultRecentLimit
	}
	for n := want; ; n = int(min(4*int64(n), math.MaxInt32)) {
		var acts []engine.Activity
		if err := c.call(ctx, request{Op: opRecent, Limit: n, Since: since}, &acts); err != nil || keep == nil {
			return acts, err
		}
		kept := acts[:0]
		for _, a := range acts {
			if keep(a.Path) {
				kept = append(kept, a)
			}
		}
		if len(kept) >= want || len(acts) < n || n == math.MaxInt32 {
			return kept[:min(len(kept), want)], nil
		}
	}
}

// Write creates a memory through the server's engine (engine.Engine.Write).
func (c *Client) Write(ctx context.Context, req engine.WriteRequest) (engine.Memory, error) {
	var m engine.Memory
	err := c.call(ctx, request{Op: opWrite, Write: &req}, &m)
	return m, err
}

// Edit changes a memory through the server's engine (engine.Engine.Edit).
func (c *Client) Edit(ctx context.Context, req engine.EditRequest) (engine.Memory, error) {
	var m engine.Memory
	err := c.call(ctx, request{Op: opEdit, Edit: &req}, &m)
	return m, err
}

// Delete removes a memory through the server's engine.
func (c *Client) Delete(ctx context.Context, id string) error {
	return c.call(ctx, request{Op: opDelete, ID: id}, nil)
}

// Move renames a memory through the server's engine (engine.Engine.Move).
func (c *Client) Move(ctx context.Context, id, newPath string) (engine.Memory, error) {
	var m engine.Memory
	err := c.call(ctx, request{Op: opMove, ID: id, To: newPath}, &m)
	return m, err
}

// Resolve turns a memory identifier into its path, as the server's engine does.
func (c *Client) Resolve(id string) (string, error) {
	var p string
	err := c.call(context.Background(), request{Op: opResolve, ID: id}, &p)
	return p, err
}

// List describes one folder of the server's memory folder.
func (c *Client) List(ctx context.Context, folder string) (engine.Listing, error) {
	var l engine.Listing
	err := c.call(ctx, request{Op: opList, ID: folder}, &l)
	return l, err
}

// Backlinks lists the memories that link to the one id names, as the
// server's concept graph has them.
func (c *Client) Backlinks(ctx context.Context, id string) ([]string, error) {
	var r []string
	err := c.call(ctx, request{Op: opBacklinks, ID: id}, &r)
	return r, err
}

// Status describes the server's engine.
func (c *Client) Status(ctx context.Context) (engine.Status, error) {
	var s engine.Status
	err := c.call(ctx, request{Op: opStatus}, &s)
	return s, err
}

// Sync has the server's engine sync (incrementally unless full).
func (c *Client) Sync(ctx context.Context, full bool) (engine.Report, error) {
	var r engine.Report
	err := c.call(ctx, request{Op: opSync, Full: full}, &r)
	return r, err
}

// BuildContext asks the server's concept graph what surrounds a concept.
func (c *Client) BuildContext(ctx context.Context, q engine.ContextQuery) (engine.ConceptContext, error) {
	var r engine.ConceptContext
	err := c.call(ctx, request{Op: opGraphContext, Context: &q}, &r)
	return r, err
}

// Visualize has the server draw a concept's neighbourhood in Mermaid.
func (c *Client) Visualize(ctx context.Context, concept string, depth, maxNodes int) (engine.Diagram, error) {
	var r engine.Diagram
	err := c.call(ctx, request{Op: opGraphShow, Concept: concept, Depth: depth, Max: maxNodes}, &r)
	return r, err
}

// FindSimilarConcepts ranks concepts by meaning on the server.
func (c *Client) FindSimilarConcepts(ctx context.Context, concept string, maxResults int) (engine.Similar, error) {
	var r engine.Similar
	err := c.call(ctx, request{Op: opGraphSimilar, Concept: concept, Max: maxResults}, &r)
	return r, err
}

// Concepts lists the server's concepts.
func (c *Client) Concepts(ctx context.Context) ([]engine.ConceptInfo, error) {
	var r []engine.ConceptInfo
	err := c.call(ctx, request{Op: opGraphConcepts}, &r)
	return r, err
}

// FileConcepts lists the concepts one memory links to, as the server indexed it.
func (c *Client) FileConcepts(ctx context.Context, id string) (engine.FileConcepts, error) {
	var r engine.FileConcepts
	err := c.call(ctx, request{Op: opGraphFile, ID: id}, &r)
	return r, err
}

// call sends req and decodes the result into out (nil: the result is not
// wanted). When ctx ends first the call fails with ctx's error and the
// connection, mid-answer, is dropped; a write may then have been made or
// not.
func (c *Client) call(ctx context.Context, req request, out any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken != nil {
		return c.broken
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { c.conn.SetDeadline(time.Unix(1, 0)) })
	var resp struct {
		Result json.RawMessage `json:"result"`
		Error  string          `json:"error"`
		Kind   string          `json:"kind"`
	}
	err := c.enc.Encode(req)
	if err == nil {
		err = c.dec.Decode(&resp)
	}
	if !stop() || err != nil {
		if ctx.Err() != nil {
			c.broken = fmt.Errorf("mnemo serve connection: %w", ctx.Err())
			c.conn.Close()
			return ctx.Err()
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = errors.New("it closed the connection (is it stopping?)")
		}
		c.broken = fmt.Errorf("%w: %w", ErrGone, err)
		c.conn.Close()
		return c.broken
	}
	if resp.Error != "" || resp.Kind != "" {
		return &Error{Msg: resp.Error, Kind: resp.Kind}
	}
	if out == nil {
		return nil // an op that answers nothing but success (delete)
	}
	if err := json.Unmarshal(resp.Result, out); err != nil {
		return fmt.Errorf("mnemo serve answered %s with %w", req.Op, err)
	}
	return nil
}
