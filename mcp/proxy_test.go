package mcp_test

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"mnemo/mcp"
)

// backend is an MCP server with the named tools, each answering its name,
// and "Hang", which answers when release is closed; it is reached over a
// net.Pipe that cut closes, as a holder's death closes its socket.
type backend struct {
	cs      *sdk.ClientSession
	cut     func()
	entered chan struct{}
}

func newBackend(t *testing.T, release chan struct{}, tools ...string) *backend {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "holder", Version: "v0"}, nil)
	b := &backend{entered: make(chan struct{}, 8)}
	schema := map[string]any{"type": "object"}
	for _, name := range tools {
		srv.AddTool(&sdk.Tool{Name: name, InputSchema: schema}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: req.Params.Name + " " + string(req.Params.Arguments)}}}, nil
		})
	}
	srv.AddTool(&sdk.Tool{Name: "Hang", InputSchema: schema}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		b.entered <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil
	})
	c1, c2 := net.Pipe()
	ctx := context.Background()
	if _, err := srv.Connect(ctx, &sdk.IOTransport{Reader: c2, Writer: c2}, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "proxy", Version: "v0"}, nil).Connect(ctx, &sdk.IOTransport{Reader: c1, Writer: c1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b.cs = cs
	b.cut = func() { c1.Close(); c2.Close() }
	t.Cleanup(b.cut)
	return b
}

// proxyClient connects a client to p's server.
func proxyClient(t *testing.T, p *mcp.Proxy) *sdk.ClientSession {
	t.Helper()
	ct, st := sdk.NewInMemoryTransports()
	ctx := context.Background()
	if _, err := p.Server().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func resultText(r *sdk.CallToolResult) string {
	if r == nil || len(r.Content) == 0 {
		return ""
	}
	tc, _ := r.Content[0].(*sdk.TextContent)
	if tc == nil {
		return ""
	}
	return tc.Text
}

// TestProxyForwards: the proxy lists exactly its backend's tools, passes
// arguments and answers through unchanged, and keeps a protocol error one.
func TestProxyForwards(t *testing.T) {
	ctx := context.Background()
	p := mcp.NewProxy(mcp.ProxyOptions{})
	b := newBackend(t, nil, "Alpha", "Beta")
	must(t, p.Attach(ctx, b.cs))
	cs := proxyClient(t, p)
	tools, err := cs.ListTools(ctx, nil)
	must(t, err)
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"Alpha", "Beta", "Hang"}) {
		t.Errorf("tools %v", names)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "Beta", Arguments: map[string]any{"x": 1}})
	if err != nil || resultText(res) != `Beta {"x":1}` {
		t.Errorf("Beta: %v %q", err, resultText(res))
	}
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "Gamma"}); err == nil {
		t.Error("an unknown tool was not a protocol error")
	}
	// A new backend with other tools: the list follows it.
	b2 := newBackend(t, nil, "Alpha", "Delta")
	must(t, p.Attach(ctx, b2.cs))
	tools, err = cs.ListTools(ctx, nil)
	must(t, err)
	names = names[:0]
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"Alpha", "Delta", "Hang"}) {
		t.Errorf("tools after the new backend %v", names)
	}
}

// TestProxyHandover: a call in flight when the backend's connection breaks
// fails with the retry message, never silently; a call made while no
// backend is attached waits for the next one and completes on it.
func TestProxyHandover(t *testing.T) {
	ctx := context.Background()
	p := mcp.NewProxy(mcp.ProxyOptions{AttachWait: 10 * time.Second})
	release := make(chan struct{})
	b := newBackend(t, release, "Alpha")
	must(t, p.Attach(ctx, b.cs))
	cs := proxyClient(t, p)

	cut := make(chan *sdk.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "Hang"})
		if err != nil {
			t.Errorf("Hang: %v", err)
		}
		cut <- res
	}()
	<-b.entered
	b.cut()
	res := <-cut
	if !res.IsError || !strings.HasPrefix(resultText(res), mcp.RetryMessage) {
		t.Fatalf("a call cut by the handover: %+v %q, want a retry error", res, resultText(res))
	}
	p.Detach(b.cs)

	waited := make(chan *sdk.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "Alpha"})
		if err != nil {
			t.Errorf("Alpha: %v", err)
		}
		waited <- res
	}()
	select {
	case res := <-waited:
		t.Fatalf("a call answered with no backend attached: %q", resultText(res))
	case <-time.After(100 * time.Millisecond): // it must still be waiting; the event is the attach below
	}
	b2 := newBackend(t, nil, "Alpha")
	must(t, p.Attach(ctx, b2.cs))
	if res := <-waited; res.IsError || !strings.HasPrefix(resultText(res), "Alpha") {
		t.Errorf("the waiting call: %q", resultText(res))
	}
}

// TestProxyNoBackend: with no backend within the wait, a call fails with
// the retry message.
func TestProxyNoBackend(t *testing.T) {
	p := mcp.NewProxy(mcp.ProxyOptions{AttachWait: 50 * time.Millisecond})
	b := newBackend(t, nil, "Alpha")
	must(t, p.Attach(context.Background(), b.cs))
	p.Detach(b.cs)
	cs := proxyClient(t, p)
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "Alpha"})
	if err != nil || !res.IsError || !strings.HasPrefix(resultText(res), mcp.RetryMessage) {
		t.Errorf("no backend: %v %q", err, resultText(res))
	}
}
