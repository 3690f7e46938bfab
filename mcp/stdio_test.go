package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

// TestLineTransportAnswersBadLines runs the server on the guarded transport
// over pipes: each bad line gets a JSON-RPC error with id null, and the
// session answers the good ones that follow. (cmd/mnemo's
// TestServeSurvivesMalformedLines does the same through a real child.)
func TestLineTransportAnswersBadLines(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	tr := newStdioTransport(inR, outW)
	tr.maxLine = 1 << 10
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- NewServer(nil, Options{}).Run(ctx, tr) }()

	replies := bufio.NewScanner(outR)
	next := func() map[string]any {
		t.Helper()
		got := make(chan map[string]any, 1)
		go func() {
			var m map[string]any
			if replies.Scan() {
				json.Unmarshal(replies.Bytes(), &m)
			}
			got <- m
		}()
		select {
		case m := <-got:
			return m
		case <-time.After(10 * time.Second):
			t.Fatal("no reply")
		}
		return nil
	}
	for _, c := range []struct {
		line string
		code float64 // 0: a result with id
	}{
		{"{not json", -32700},
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`, 0},
		{strings.Repeat("z", 5000), -32700}, // over the 1 KiB limit
		{`{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\r", 0},
		{`{"a":`, -32700},
		{`17`, -32600},
		{`[]`, -32600},
		{`{"jsonrpc":"2.0","id":3,"method":"ping"}`, 0},
	} {
		io.WriteString(inW, c.line+"\n")
		m := next()
		if c.code != 0 {
			e, _ := m["error"].(map[string]any)
			if e == nil || e["code"] != c.code || m["id"] != nil {
				t.Errorf("%.30q: got %v, want error %v with id null", c.line, m, c.code)
			}
		} else if m["result"] == nil {
			t.Errorf("%.30q: got %v, want a result", c.line, m)
		}
	}
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run after the client hung up: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after the client hung up")
	}
}
