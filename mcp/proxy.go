package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// RetryMessage begins the tool error a Proxy answers with when no backend
// could finish the call: the serve holding the index went away mid-call,
// or none took over in time. The call may or may not have taken effect (a
// write may have been made before the answer was lost); the client should
// retry it, and a WriteMemory retried that way may find its note made.
const RetryMessage = "mnemo: retry: the serve holding the index is handing it over"

// DefaultAttachWait is how long a call waits for a backend when none is
// attached, before it fails with RetryMessage.
const DefaultAttachWait = 10 * time.Second

// Proxy is the MCP server a client talks to when the tools run elsewhere:
// in this process's own server (an in-memory session), or in another
// mnemo serve that holds the index (a session over its socket). It offers
// whatever tools its backend lists and forwards every call unchanged, so
// results and errors are the backend's own, and a tool added to the
// backend needs no code here. The backend may change while clients stay
// connected: Attach replaces it and updates the tool list.
type Proxy struct {
	srv  *sdk.Server
	wait time.Duration

	mu    sync.Mutex
	cs    *sdk.ClientSession // nil: none attached
	ready chan struct{}      // closed while cs is set
	tools []string           // names registered on srv
	defs  map[string]string  // their definitions as registered (JSON)
}

// ProxyOptions configure a Proxy.
type ProxyOptions struct {
	Version string // reported to clients; "" means "dev"
	// AttachWait bounds a call's wait for a backend; 0 means DefaultAttachWait.
	AttachWait time.Duration
	Logger     *slog.Logger
}

// NewProxy returns a Proxy with no backend: calls wait for one.
func NewProxy(opts ProxyOptions) *Proxy {
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	if opts.AttachWait <= 0 {
		opts.AttachWait = DefaultAttachWait
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "mnemo", Title: "mnemo memory", Version: version},
		&sdk.ServerOptions{Instructions: instructions, Logger: opts.Logger})
	p := &Proxy{srv: srv, wait: opts.AttachWait, ready: make(chan struct{}), defs: map[string]string{}}
	srv.AddReceivingMiddleware(p.waitForTools)
	return p
}

// waitForTools holds a tools/list or tools/call until a backend has been
// attached once (for at most the attach wait): before that the proxy knows
// no tools, and a client that lists them at start-up would see none, or
// have its call refused as one of an unknown tool.
func (p *Proxy) waitForTools(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method == "tools/list" || method == "tools/call" {
			p.mu.Lock()
			known := p.tools != nil
			p.mu.Unlock()
			if !known {
				p.backend(ctx)
			}
		}
		return next(ctx, method, req)
	}
}

// Server is the MCP server clients connect to.
func (p *Proxy) Server() *sdk.Server { return p.srv }

// Attach makes cs the backend: it lists cs's tools, offers exactly those,
// and releases the calls waiting for a backend.
func (p *Proxy) Attach(ctx context.Context, cs *sdk.ClientSession) error {
	var tools []*sdk.Tool
	var cursor string
	for {
		res, err := cs.ListTools(ctx, &sdk.ListToolsParams{Cursor: cursor})
		if err != nil {
			return fmt.Errorf("list the backend's tools: %w", err)
		}
		tools = append(tools, res.Tools...)
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var names []string
	for _, t := range tools {
		names = append(names, t.Name)
		def, _ := json.Marshal(t)
		if string(def) == p.defs[t.Name] {
			continue // unchanged: no list_changed notification for a handover
		}
		p.defs[t.Name] = string(def)
		p.srv.AddTool(t, p.forward)
	}
	var gone []string
	for _, n := range p.tools {
		if !slices.Contains(names, n) {
			gone = append(gone, n)
		}
	}
	if len(gone) > 0 {
		p.srv.RemoveTools(gone...)
		for _, n := range gone {
			delete(p.defs, n)
		}
	}
	p.tools = names
	if p.cs == nil {
		close(p.ready)
	}
	p.cs = cs
	return nil
}

// Detach drops cs as the backend, if it still is one: calls from now on
// wait for the next Attach. Calls in flight on cs fail with RetryMessage
// once its connection closes.
func (p *Proxy) Detach(cs *sdk.ClientSession) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cs == cs && cs != nil {
		p.cs = nil
		p.ready = make(chan struct{})
	}
}

// backend waits for an attached session, at most p.wait.
func (p *Proxy) backend(ctx context.Context) (*sdk.ClientSession, error) {
	p.mu.Lock()
	cs, ready := p.cs, p.ready
	p.mu.Unlock()
	if cs != nil {
		return cs, nil
	}
	t := time.NewTimer(p.wait)
	defer t.Stop()
	select {
	case <-ready:
		p.mu.Lock()
		cs = p.cs
		p.mu.Unlock()
		if cs == nil {
			return nil, errNoBackend
		}
		return cs, nil
	case <-t.C:
		return nil, errNoBackend
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

var errNoBackend = errors.New("no serve took the index over in time")

// forward sends one call to the backend. A connection that breaks under it
// (the holder exited or was killed) is a retry error, never a silent loss;
// a protocol error the backend answers with goes back as it came.
func (p *Proxy) forward(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	cs, err := p.backend(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return errorResult(fmt.Errorf("%s (%v)", RetryMessage, err)), nil
	}
	params := &sdk.CallToolParams{Meta: req.Params.Meta, Name: req.Params.Name, Arguments: req.Params.Arguments}
	if len(req.Params.Arguments) == 0 {
		params.Arguments = nil // the client sends {}
	}
	res, err := cs.CallTool(ctx, params)
	switch {
	case err == nil:
		return res, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(err, sdk.ErrConnectionClosed) || !isWireError(err):
		p.Detach(cs)
		return errorResult(fmt.Errorf("%s (the call was cut: %v); it may or may not have taken effect", RetryMessage, err)), nil
	}
	return nil, err
}

// isWireError reports whether err is an error the backend answered with
// (unknown tool, bad params), as opposed to a broken connection.
func isWireError(err error) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we)
}
