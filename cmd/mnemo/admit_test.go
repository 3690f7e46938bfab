package main

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"mnemo/cmd/mnemo/remote"
	"mnemo/engine"
	"mnemo/engine/admit"
	"mnemo/mcp"
)

// holdInProcess runs serve's roles in this process on a fresh root, with
// g as the process's gate, and returns the index folder once the socket
// answers and the first sync is done. The roles stop with the test.
func holdInProcess(t *testing.T, g *admit.Gate) string {
	t.Helper()
	dir := t.TempDir()
	memory, index := filepath.Join(dir, "memory"), filepath.Join(dir, "index")
	write(t, filepath.Join(memory, "decisions/use-bbolt.md"), "# Use bbolt\n\nState lives in bbolt, an embedded key value store.\n")
	var mu sync.Mutex
	var lines []string
	logf := func(s string) { mu.Lock(); lines = append(lines, s); mu.Unlock() }
	r := &roles{a: &app{stdout: io.Discard, stderr: io.Discard}, sf: serveFlags{},
		cfg: engine.Config{MemoryDir: memory, IndexDir: index, Admit: g}, logf: logf}
	r.proxy = mcp.NewProxy(mcp.ProxyOptions{Version: "test"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve's roles: %v", err)
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if c, err := remote.Dial(index); err == nil {
			p, err := c.Search(context.Background(), engine.Query{Text: "bbolt", Mode: engine.FullText})
			c.Close()
			if err == nil && len(p.Results) == 1 {
				return index
			}
		}
		if time.Now().After(deadline) {
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("serve's socket did not answer a search in 30 s; log:\n%s", strings.Join(lines, "\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestOneGateForEveryFrontEnd: a search over the CLI's socket passes the
// same gate as an MCP search. With the gate's only turn taken, both are
// refused busy with the same message; with a long queue timeout, a
// socket search waits in the queue and answers once the turn is free.
func TestOneGateForEveryFrontEnd(t *testing.T) {
	ctx := context.Background()
	t.Run("refused", func(t *testing.T) {
		g := admit.New(1, 20*time.Millisecond)
		index := holdInProcess(t, g)
		leave, err := g.Enter(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer leave()

		c, err := remote.Dial(index)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, err = c.Search(ctx, engine.Query{Text: "bbolt"})
		if !errors.Is(err, admit.ErrBusy) || !strings.HasPrefix(err.Error(), "server busy: 1 searches running") {
			t.Fatalf("socket search with the gate full: %v, want ErrBusy", err)
		}

		conn, err := remote.DialMCP(ctx, index)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(ctx, &sdk.IOTransport{Reader: conn, Writer: conn}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "SearchMemories", Arguments: map[string]any{"query": "bbolt"}})
		if err != nil {
			t.Fatal(err)
		}
		text := res.Content[0].(*sdk.TextContent).Text
		if !res.IsError || !strings.HasPrefix(text, "server busy: 1 searches running") {
			t.Fatalf("MCP search with the gate full: isError %v, %q; want server busy", res.IsError, text)
		}
	})
	t.Run("waits", func(t *testing.T) {
		g := admit.New(1, time.Hour)
		index := holdInProcess(t, g)
		leave, err := g.Enter(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c, err := remote.Dial(index)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		answered := make(chan error, 1)
		go func() {
			p, err := c.Search(ctx, engine.Query{Text: "bbolt"})
			if err == nil && len(p.Results) != 1 {
				err = errors.New("no result")
			}
			answered <- err
		}()
		deadline := time.Now().Add(30 * time.Second)
		for g.Queued() != 1 { // nothing signals a caller joining the queue
			if time.Now().After(deadline) {
				t.Fatal("the socket search did not join the gate's queue in 30 s")
			}
			time.Sleep(time.Millisecond)
		}
		select {
		case err := <-answered:
			t.Fatalf("the socket search answered (%v) while the gate was full", err)
		default:
		}
		leave()
		if err := <-answered; err != nil {
			t.Fatalf("the queued socket search, once the turn was free: %v", err)
		}
	})
}
