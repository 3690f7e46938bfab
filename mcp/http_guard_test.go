package mcp_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"mnemo/mcp"
)

const testToken = "t0ken-for-tests"

// bearerClient sends the token with every request.
func bearerClient(token string) *http.Client {
	return &http.Client{Transport: bearer{token, http.DefaultTransport}}
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// startHTTP serves e over HTTP with ho (the test token unless set) and
// returns the /mcp URL; the server stops with the test.
func startHTTP(t *testing.T, e *env, ho mcp.HTTPOptions) string {
	t.Helper()
	if ho.Token == "" {
		ho.Token = testToken
	}
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- mcp.Serve(ctx, e.eng, mcp.Options{HTTPAddr: "127.0.0.1:0", HTTP: ho, Listening: func(u string) { urls <- u }})
	}()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case u := <-urls:
		return u
	case err := <-done:
		t.Fatalf("Serve: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the HTTP server did not start")
	}
	return ""
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`

func post(t *testing.T, url string, header map[string]string, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	return resp.StatusCode, string(b)
}

// TestHTTPNeedsToken: every request without the token, or with another,
// is refused with 401 (no tool ran: the vault is unchanged); a page of
// another origin gets 403; the token opens the door.
func TestHTTPNeedsToken(t *testing.T) {
	e := newEnv(t, true, nil, mcp.Options{})
	url := startHTTP(t, e, mcp.HTTPOptions{})
	for _, auth := range []string{"", "Bearer", "Bearer wrong", "Bearer " + testToken + "x", "Basic " + testToken, "bearer " + testToken} {
		h := map[string]string{}
		if auth != "" {
			h["Authorization"] = auth
		}
		if code, body := post(t, url, h, initBody); code != 401 || strings.Contains(body, testToken) {
			t.Errorf("Authorization %q: %d %q, want 401", auth, code, body)
		}
	}
	for _, m := range []string{"GET", "DELETE"} {
		req, _ := http.NewRequest(m, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Errorf("%s without a token: %d", m, resp.StatusCode)
		}
	}
	ok := map[string]string{"Authorization": "Bearer " + testToken}
	if code, body := post(t, url, map[string]string{"Authorization": ok["Authorization"], "Origin": "http://evil.example"}, initBody); code != 403 {
		t.Errorf("foreign Origin: %d %q, want 403", code, body)
	}
	if code, body := post(t, url, map[string]string{"Authorization": ok["Authorization"], "Origin": "http://127.0.0.1:1"}, initBody); code != 403 {
		t.Errorf("a loopback page's Origin, not allowed: %d %q, want 403", code, body)
	}
	if code, body := post(t, url, ok, initBody); code != 200 || !strings.Contains(body, `"serverInfo"`) {
		t.Errorf("with the token: %d %q, want 200", code, body)
	}
}

// TestHTTPAllowedOrigin: the hook for a page of mnemo's own.
func TestHTTPAllowedOrigin(t *testing.T) {
	e := newEnv(t, false, nil, mcp.Options{})
	url := startHTTP(t, e, mcp.HTTPOptions{AllowedOrigins: []string{"http://127.0.0.1:9"}})
	if code, body := post(t, url, map[string]string{"Authorization": "Bearer " + testToken, "Origin": "http://127.0.0.1:9"}, initBody); code != 200 {
		t.Errorf("allowed Origin: %d %q", code, body)
	}
}

// TestHTTPBodyCap: a body over the cap is refused with 413 before it is
// decoded; the default cap holds a memory of the engine's largest size.
func TestHTTPBodyCap(t *testing.T) {
	e := newEnv(t, false, nil, mcp.Options{})
	url := startHTTP(t, e, mcp.HTTPOptions{MaxBodyBytes: 64 << 10})
	big := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"pad":"` + strings.Repeat("a", 65<<10) + `"}}`
	if code, _ := post(t, url, map[string]string{"Authorization": "Bearer " + testToken}, big); code != 413 {
		t.Errorf("a 65 KiB body over a 64 KiB cap: %d, want 413", code)
	}
	if mcp.DefaultMaxBodyBytes >= 16<<20 || mcp.DefaultMaxBodyBytes < 10<<20+64<<10 {
		t.Errorf("DefaultMaxBodyBytes %d: want room for a 10 MiB memory, and under the old 16 MiB", mcp.DefaultMaxBodyBytes)
	}
}

// TestHTTPSlowClients: a connection that sends nothing, or a body that
// never ends, is closed by the server within its timeouts instead of
// being held open for ever.
func TestHTTPSlowClients(t *testing.T) {
	e := newEnv(t, false, nil, mcp.Options{})
	url := startHTTP(t, e, mcp.HTTPOptions{ReadHeaderTimeout: 300 * time.Millisecond, ReadTimeout: 300 * time.Millisecond, IdleTimeout: 300 * time.Millisecond})
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")
	closed := func(c net.Conn) bool {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err := io.Copy(io.Discard, c)
		return err == nil // EOF: the server hung up; a deadline error: it did not
	}
	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	if !closed(idle) {
		t.Error("an idle connection that sends no request was not closed")
	}
	slow, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	fmt.Fprintf(slow, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", addr, testToken)
	if !closed(slow) {
		t.Error("a body that never ends held its connection")
	}
	// After one answered request, a kept-alive connection that goes quiet.
	kept, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Close()
	fmt.Fprintf(kept, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s", addr, testToken, len(initBody), initBody)
	resp, err := http.ReadResponse(bufio.NewReader(kept), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("initialize on a raw connection: %v %v", resp, err)
	}
	resp.Body.Close()
	if !closed(kept) {
		t.Error("an idle kept-alive connection was not closed")
	}
}

// TestHTTPSessionExpiry: an MCP session left idle is closed after the
// session timeout, and its id is then unknown.
func TestHTTPSessionExpiry(t *testing.T) {
	e := newEnv(t, false, nil, mcp.Options{})
	url := startHTTP(t, e, mcp.HTTPOptions{SessionTimeout: 200 * time.Millisecond})
	ctx := context.Background()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).
		Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: bearerClient(testToken), DisableStandaloneSSE: true}, nil)
	must(t, err)
	defer cs.Close()
	id := cs.ID()
	if id == "" {
		t.Fatal("no session id")
	}
	// Wait for the server to end the session: a request on it then fails.
	deadline := time.Now().Add(10 * time.Second)
	for {
		req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Authorization", "Bearer "+testToken)
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the idle session is still open after 10 s (last answer %d)", resp.StatusCode)
		}
		time.Sleep(300 * time.Millisecond) // past the idle timeout; each ping itself resets it
	}
}

func TestHTTPRefusesNoToken(t *testing.T) {
	e := newEnv(t, false, nil, mcp.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := mcp.Serve(ctx, e.eng, mcp.Options{HTTPAddr: "127.0.0.1:0"}); err != mcp.ErrNoToken {
		t.Errorf("Serve without a token: %v", err)
	}
}
