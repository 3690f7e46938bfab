package mcp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"mnemo/mcp"
)

func TestStreamableHTTP(t *testing.T) {
	e := newEnv(t, true, nil, mcp.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- mcp.Serve(ctx, e.eng, mcp.Options{HTTPAddr: "127.0.0.1:0", HTTP: mcp.HTTPOptions{Token: testToken}, Listening: func(u string) { urls <- u }})
	}()
	var url string
	select {
	case url = <-urls:
	case err := <-done:
		t.Fatalf("Serve: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the HTTP server did not start")
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/mcp") {
		t.Fatalf("url %q", url)
	}

	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).
		Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: bearerClient(testToken)}, nil)
	must(t, err)
	h := &env{t: t, dir: e.dir, eng: e.eng, cs: cs}
	tools, err := cs.ListTools(ctx, nil)
	must(t, err)
	if len(tools.Tools) != len(allTools) {
		t.Errorf("%d tools over HTTP", len(tools.Tools))
	}
	w := ok[ref](h, "WriteMemory", map[string]any{"title": "Over HTTP", "content": "pangolin"})
	if p := ok[searchPage](h, "SearchMemories", map[string]any{"query": "pangolin"}); len(p.Results) != 1 || p.Results[0].URI != w.URI {
		t.Errorf("search over HTTP: %v", uris(p))
	}
	if r := ok[readResult](h, "ReadMemory", map[string]any{"identifier": w.URI}); !strings.Contains(r.Content, "pangolin") {
		t.Errorf("read over HTTP: %+v", r)
	}
	h.fails("ReadMemory", map[string]any{"identifier": "../../etc/passwd"})
	cs.Close()

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve after cancel: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not stop")
	}
}

func TestHTTPRefusesNonLoopback(t *testing.T) {
	e := newEnv(t, false, nil, mcp.Options{})
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.168.1.10:8765", "example.com:80", "127.0.0.1"} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := mcp.Serve(ctx, e.eng, mcp.Options{HTTPAddr: addr, HTTP: mcp.HTTPOptions{Token: testToken}})
		cancel()
		if err == nil || !strings.Contains(err.Error(), addr) {
			t.Errorf("Serve on %q: %v", addr, err)
		}
	}
}
