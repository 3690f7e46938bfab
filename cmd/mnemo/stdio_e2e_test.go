package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeSurvivesMalformedLines writes what a broken or hostile client
// might to `mnemo serve`'s stdin — text that is not JSON before and after
// initialize, a 10 MB line of garbage, a line over the length limit, JSON
// that is not a request, a batch — and expects a JSON-RPC error for each
// (id null) and the session to go on answering real requests.
func TestServeSurvivesMalformedLines(t *testing.T) {
	t.Parallel() // waits on mnemo processes
	if testing.Short() {
		t.Skip("runs the mnemo binary; skipped with -short")
	}
	bin := mnemoBinary(t)
	root := filepath.Join(t.TempDir(), "root")
	copyTree(t, "../../testdata/vault", filepath.Join(root, "memory"))
	cmd := exec.Command(bin, "--root", root, "serve", "--no-watch")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})

	type reply struct {
		ID    any `json:"id"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
		Result json.RawMessage `json:"result"`
		Method string          `json:"method"` // set on a notification, which is no reply
	}
	replies := make(chan reply)
	go func() {
		defer close(replies)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var r reply
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Errorf("serve wrote a line that is not JSON: %q", sc.Text())
				continue
			}
			if r.Method != "" {
				continue // a notification (the tool list arriving from the holder), not a reply
			}
			replies <- r
		}
	}()
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatalf("write to serve: %v\n%s", err, stderr)
		}
	}
	next := func(what string) reply {
		t.Helper()
		select {
		case r, ok := <-replies:
			if !ok {
				t.Fatalf("%s: serve closed stdout; state %v; log:\n%s", what, cmd.ProcessState, stderr)
			}
			return r
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no answer in 30 s; log:\n%s", what, stderr)
		}
		return reply{}
	}
	wantError := func(what string, code int) {
		t.Helper()
		r := next(what)
		if r.Error == nil || r.Error.Code != code || r.ID != nil {
			t.Fatalf("%s: got %+v, want error %d with id null", what, r, code)
		}
	}

	garbage := strings.Repeat("x{]", 10<<20/3)
	send("{not json")
	wantError("malformed line before initialize", -32700)
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	if r := next("initialize"); r.Error != nil || r.ID != float64(1) {
		t.Fatalf("initialize: %+v", r)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send("{not json")
	wantError("malformed line after initialize", -32700)
	send(garbage)
	wantError("10 MB of garbage", -32700)
	send(`"` + strings.Repeat("a", 17<<20) + `"`)
	wantError("a line over the limit", -32700)
	send(`{"foo":1}`)
	wantError("JSON that is not a request", -32600)
	send(`[{"jsonrpc":"2.0","id":9,"method":"tools/list"}]`)
	wantError("a batch", -32600)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	r := next("tools/list")
	if r.Error != nil || r.ID != float64(2) || !strings.Contains(string(r.Result), "SearchMemories") {
		t.Fatalf("tools/list after the bad lines: %+v", r)
	}

	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve exited with %v after the client hung up; log:\n%s", err, stderr)
	}
}
