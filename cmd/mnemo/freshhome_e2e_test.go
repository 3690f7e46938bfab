package main

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// freshHome is a HOME with nothing in it, and the environment that makes
// mnemo use it: no MAENIFOLD_ROOT, so the root is HOME/maenifold.
func freshHome(t *testing.T) (home string, env []string) {
	t.Helper()
	home = t.TempDir()
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "MAENIFOLD_ROOT=") {
			env = append(env, kv)
		}
	}
	return home, append(env, "HOME="+home)
}

func runIn(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, mnemoBinary(t), args...)
	cmd.Env = env
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run mnemo: %v", err)
	}
	return code, out.String(), errb.String()
}

const createdLine = "mnemo: created the memory folder "

// TestFreshHome: on a machine where mnemo never ran, the first command
// creates ~/maenifold/memory, says so once, and every command works; an
// explicit --memory that does not exist is still an error.
func TestFreshHome(t *testing.T) {
	t.Parallel() // waits on mnemo processes
	if testing.Short() {
		t.Skip("runs the mnemo binary; skipped with -short")
	}
	cases := []struct {
		name string
		args []string
		want string // in stdout
	}{
		{"search", []string{"search", "anything"}, "0 results"},
		{"status", []string{"status"}, "files:      0"},
		{"sync", []string{"sync"}, "synced 0 files"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			home, env := freshHome(t)
			code, out, errs := runIn(t, env, tc.args...)
			if code != 0 || !strings.Contains(out, tc.want) {
				t.Fatalf("mnemo %s in a fresh HOME: exit %d\nstdout: %s\nstderr: %s", tc.name, code, out, errs)
			}
			mem := filepath.Join(home, "maenifold", "memory")
			if got := strings.Count(errs, createdLine); got != 1 || !strings.Contains(errs, createdLine+mem+" ") {
				t.Errorf("stderr says %d times that it created the memory folder, want once naming %s:\n%s", got, mem, errs)
			}
			if fi, err := os.Stat(mem); err != nil || !fi.IsDir() {
				t.Fatalf("memory folder not created: %v", err)
			}
			// The second run finds it and says nothing.
			if code, _, errs := runIn(t, env, tc.args...); code != 0 || strings.Contains(errs, createdLine) {
				t.Errorf("second run: exit %d, stderr %q", code, errs)
			}
		})
	}
	t.Run("explicit --memory", func(t *testing.T) {
		home, env := freshHome(t)
		missing := filepath.Join(home, "no-such-folder")
		code, _, errs := runIn(t, env, "--memory", missing, "status")
		if code != 1 || !strings.Contains(errs, missing+" does not exist") {
			t.Errorf("status --memory MISSING: exit %d, stderr %q; want 1 and an error naming it", code, errs)
		}
		if _, err := os.Stat(missing); err == nil {
			t.Errorf("%s was created", missing)
		}
	})
	t.Run("serve stdio", func(t *testing.T) {
		_, env := freshHome(t)
		cmd := exec.Command(mnemoBinary(t), "serve")
		cmd.Env = env
		stderr := &syncBuffer{}
		cmd.Stderr = stderr
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "v0"}, nil).
			Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: hangUpGrace}, nil)
		if err != nil {
			t.Fatalf("connect to mnemo serve in a fresh HOME: %v\n%s", err, stderr)
		}
		defer cs.Close()
		freshSearch(ctx, t, cs, stderr)
	})
	t.Run("serve http", func(t *testing.T) {
		home, env := freshHome(t)
		s := startServer(t, mnemoBinary(t), env, "serve", "--http", "127.0.0.1:0")
		line := s.waitLog(`mcp listening on http://127\.0\.0\.1:\d+/mcp;`)
		url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/mcp`).FindString(line)
		token, err := os.ReadFile(filepath.Join(home, "maenifold", "index", tokenName))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		client := &http.Client{Transport: bearer{"Bearer " + strings.TrimSpace(string(token))}}
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "v0"}, nil).
			Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: client}, nil)
		if err != nil {
			t.Fatalf("connect to %s: %v\n%s", url, err, s.log())
		}
		freshSearch(ctx, t, cs, s.out)
		cs.Close()
		if n := s.out.count(createdLine); n != 1 {
			t.Errorf("serve's log says %d times that it created the memory folder, want once:\n%s", n, s.log())
		}
		s.stop()
	})
}

// bearer adds the HTTP token serve wrote to every request.
type bearer struct{ auth string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", b.auth)
	return http.DefaultTransport.RoundTrip(r)
}

// freshSearch writes a memory through the server and finds it.
func freshSearch(ctx context.Context, t *testing.T, cs *sdk.ClientSession, log interface{ String() string }) {
	t.Helper()
	call := func(name string, args map[string]any) string {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %s\n%s", name, err, resText(res), log)
		}
		return res.Content[0].(*sdk.TextContent).Text
	}
	if got := call("SearchMemories", map[string]any{"query": "first"}); !strings.Contains(got, "0 results") && !strings.Contains(got, "No ") {
		t.Logf("search on the empty memory: %s", got)
	}
	call("WriteMemory", map[string]any{"title": "First note", "content": "The first thing remembered on a new machine."})
	if got := call("SearchMemories", map[string]any{"query": "remembered new machine"}); !strings.Contains(got, "First note") {
		t.Errorf("search after a write does not find it:\n%s", got)
	}
}

func resText(res *sdk.CallToolResult) string {
	if res == nil || len(res.Content) == 0 {
		return "(no result)"
	}
	if tc, ok := res.Content[0].(*sdk.TextContent); ok {
		return tc.Text
	}
	return "(not text)"
}
