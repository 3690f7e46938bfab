package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"mnemo/engine"
)

func TestServeOptions(t *testing.T) {
	ms := func(n int) *int { return &n }
	tests := []struct {
		name    string
		flagMs  *int
		noWatch bool
		env     map[string]string
		want    serveFlags
		wantErr string
	}{
		{"defaults", nil, false, nil, serveFlags{watch: true}, ""},
		{"env debounce", nil, false, map[string]string{EnvDebounce: "300"}, serveFlags{watch: true, debounce: 300 * time.Millisecond}, ""},
		{"flag beats env", ms(40), false, map[string]string{EnvDebounce: "300"}, serveFlags{watch: true, debounce: 40 * time.Millisecond}, ""},
		{"auto sync off", nil, false, map[string]string{EnvAutoSync: "false"}, serveFlags{watch: false}, ""},
		{"auto sync on", nil, false, map[string]string{EnvAutoSync: "TRUE"}, serveFlags{watch: true}, ""},
		{"no-watch beats env", nil, true, map[string]string{EnvAutoSync: "true"}, serveFlags{watch: false}, ""},
		{"bad auto sync", nil, false, map[string]string{EnvAutoSync: "maybe"}, serveFlags{}, EnvAutoSync},
		{"bad env debounce", nil, false, map[string]string{EnvDebounce: "fast"}, serveFlags{}, EnvDebounce},
		{"zero flag", ms(0), false, nil, serveFlags{}, "--debounce-ms 0"},
		{"huge env", nil, false, map[string]string{EnvDebounce: "99999999"}, serveFlags{}, EnvDebounce},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := serveOptions(tt.flagMs, tt.noWatch, env(tt.env))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !isUsage(err) {
					t.Fatalf("err = %v, want a usage error naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// server is a `mnemo serve` child process whose stderr lines are collected.
type server struct {
	t    *testing.T
	cmd  *exec.Cmd
	out  *childLog // its stderr
	exit chan error
}

func startServer(t *testing.T, bin string, env []string, args ...string) *server {
	t.Helper()
	s := &server{t: t, cmd: exec.Command(bin, args...), out: newChildLog(), exit: make(chan error, 1)}
	s.cmd.Env = append(os.Environ(), env...)
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		s.out.collect(stderr)
		s.exit <- s.cmd.Wait()
	}()
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			s.cmd.Process.Kill()
		}
	})
	return s
}

// waitLog waits, up to 30 s, until a stderr line matches re and returns it.
func (s *server) waitLog(re string) string {
	s.t.Helper()
	rx := regexp.MustCompile(re)
	var line string
	found := s.out.waitFor(30*time.Second, func(lines []string) bool {
		for _, l := range lines {
			if rx.MatchString(l) {
				line = l
				return true
			}
		}
		return false
	})
	if !found {
		s.t.Fatalf("no log line matching %s in:\n%s", re, s.log())
	}
	return line
}

func (s *server) log() string { return s.out.String() }

// stop sends SIGTERM and waits for a clean exit.
func (s *server) stop() {
	s.t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		s.t.Fatal(err)
	}
	select {
	case err := <-s.exit:
		if err != nil {
			s.t.Fatalf("serve exited with %v; log:\n%s", err, s.log())
		}
	case <-time.After(30 * time.Second):
		s.t.Fatalf("serve did not stop on SIGTERM; log:\n%s", s.log())
	}
	lines := strings.Split(s.log(), "\n")
	if last := lines[len(lines)-1]; !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ stopped: index closed$`).MatchString(last) {
		s.t.Errorf("last log line = %q, want a clean shutdown line", last)
	}
}

// stopFrontEnd sends SIGTERM to a serve that fronts another and waits for
// its clean exit; it never held the index, so there is nothing to close.
func (s *server) stopFrontEnd() {
	s.t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		s.t.Fatal(err)
	}
	select {
	case err := <-s.exit:
		if err != nil {
			s.t.Fatalf("serve exited with %v; log:\n%s", err, s.log())
		}
	case <-time.After(30 * time.Second):
		s.t.Fatalf("serve did not stop on SIGTERM; log:\n%s", s.log())
	}
	if strings.Contains(s.log(), "holding the index") {
		s.t.Errorf("a front end took the index:\n%s", s.log())
	}
}

// TestServe runs `mnemo serve` on a temporary vault:
// a file written while it runs is indexed, a second writer is refused, and
// SIGTERM stops it cleanly with the state flushed.
func TestServe(t *testing.T) {
	t.Parallel() // waits on mnemo processes
	if testing.Short() {
		t.Skip("runs the mnemo binary; skipped with -short")
	}
	dir := t.TempDir()
	bin := mnemoBinary(t)
	root := filepath.Join(dir, "root")
	memory := filepath.Join(root, "memory")
	os.MkdirAll(memory, 0o755)
	os.WriteFile(filepath.Join(memory, "first.md"), []byte("# First\n\nthe first memory\n"), 0o644)
	mnemo := func(args ...string) (int, string, string) {
		t.Helper()
		return runBinary(t, bin, "", append([]string{"--root", root}, args...)...)
	}
	status := func() engine.Status {
		t.Helper()
		code, out, errs := mnemo("status", "--json")
		if code != 0 {
			t.Fatalf("status: exit %d: %s", code, errs)
		}
		var s engine.Status
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatalf("status json: %v\n%s", err, out)
		}
		return s
	}

	t.Run("no-watch", func(t *testing.T) {
		s := startServer(t, bin, nil, "--root", root, "serve", "--no-watch")
		s.waitLog(`^\S+Z serve pid=\d+ .* watch=false`)
		s.waitLog(`^\S+Z sync added=1 updated=0 removed=0 unchanged=0 skipped=0 in \d+ms$`)
		s.stop()
		if st := status(); st.Files != 1 {
			t.Errorf("files = %d, want 1", st.Files)
		}
	})

	t.Run("auto sync off", func(t *testing.T) {
		s := startServer(t, bin, []string{EnvAutoSync + "=false"}, "--root", root, "serve")
		s.waitLog(`watch=false`)
		s.waitLog(`^\S+Z sync added=0 `)
		s.stop()
	})

	t.Run("watch", func(t *testing.T) {
		s := startServer(t, bin, []string{EnvDebounce + "=50"}, "--root", root, "serve")
		s.waitLog(`^\S+Z serve pid=\d+ .* watch=true debounce=50ms$`)
		s.waitLog(`^\S+Z start-up sync added=0 updated=0 removed=0 skipped=0 in \d+ms$`)

		os.WriteFile(filepath.Join(memory, "second.md"), []byte("# Second\n\nwritten while serving\n"), 0o644)
		s.waitLog(`^\S+Z sync added=1 updated=0 removed=0 skipped=0 in \d+ms$`)

		// A second serve on the root becomes the first one's front end.
		second := startServer(t, bin, nil, "--root", root, "serve")
		second.waitLog(fmt.Sprintf(`front end of the serve that holds the index \(PID %d\)`, s.cmd.Process.Pid))
		second.stopFrontEnd()
		// A read-only open cannot share bbolt's lock with the writer yet,
		// so the index is checked once serve has stopped.
		s.stop()
		if st := status(); st.Files != 2 {
			t.Errorf("files = %d, want 2", st.Files)
		}
		if _, err := os.Stat(filepath.Join(root, "index", "writer.pid")); !os.IsNotExist(err) {
			t.Errorf("writer.pid left behind after a clean stop (%v)", err)
		}
	})

	t.Run("http", func(t *testing.T) {
		s := startServer(t, bin, nil, "--root", root, "serve", "--no-watch", "--http", "127.0.0.1:0")
		line := s.waitLog(`add it to Claude Code with: claude mcp add --transport http mnemo http://127\.0\.0\.1:\d+/mcp --header "Authorization: Bearer \$\(cat .*http\.token\)"$`)
		url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/mcp`).FindString(line)
		token, err := os.ReadFile(filepath.Join(root, "index", tokenName))
		if err != nil {
			t.Fatal(err)
		}
		tok := strings.TrimSpace(string(token))
		initialize := func(auth string) int {
			req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		if code := initialize(""); code != 401 {
			t.Errorf("no token: %d, want 401", code)
		}
		if code := initialize("Bearer " + tok); code != 200 {
			t.Errorf("the token: %d, want 200", code)
		}
		s.stop()
		if strings.Contains(s.log(), tok) {
			t.Errorf("the token is in the log:\n%s", s.log())
		}
	})

	t.Run("debug-addr", func(t *testing.T) {
		s := startServer(t, bin, nil, "--root", root, "serve", "--no-watch", "--debug-addr", "127.0.0.1:0")
		line := s.waitLog(`profiler listening on http://127\.0\.0\.1:\d+/debug/pprof/$`)
		// Hold the index before the stop below: a serve stopped while it
		// still opens the index never held it, and logs no "index closed".
		s.waitLog(`^\S+Z sync added=`)
		url := line[strings.Index(line, "http://"):]
		token, err := os.ReadFile(filepath.Join(root, "index", tokenName))
		if err != nil {
			t.Fatal(err)
		}
		get := func(host, auth string) (int, string) {
			t.Helper()
			req, _ := http.NewRequest("GET", url+"cmdline", nil)
			if host != "" {
				req.Host = host
			}
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			return resp.StatusCode, string(body)
		}
		bearer := "Bearer " + strings.TrimSpace(string(token))
		if code, body := get("", bearer); code != 200 || !strings.Contains(body, "--debug-addr") {
			t.Errorf("GET %scmdline: %d %q, want 200 and the command line", url, code, body)
		}
		// A page on a rebound DNS name, and a request without the token.
		if code, body := get("attacker.example:80", bearer); code != 403 || strings.Contains(body, "--debug-addr") {
			t.Errorf("Host attacker.example: %d %q, want 403", code, body)
		}
		for _, auth := range []string{"", "Bearer wrong", bearer + "x"} {
			if code, body := get("", auth); code != 401 || strings.Contains(body, "--debug-addr") {
				t.Errorf("Authorization %q: %d %q, want 401", auth, code, body)
			}
		}
		s.stop()
		code, _, errs := mnemo("serve", "--debug-addr", "0.0.0.0:6060")
		if code != 2 || !strings.Contains(errs, "non-loopback") {
			t.Errorf("serve --debug-addr 0.0.0.0:6060: exit %d, %q; want a usage error refusing it", code, errs)
		}
	})
}

func TestSearchLimits(t *testing.T) {
	n := func(v int) *int { return &v }
	tests := []struct {
		name           string
		flagMax, flagQ *int
		env            map[string]string
		wantMax        int
		wantQueue      time.Duration
		wantErr        string
	}{
		{"defaults", nil, nil, nil, 0, 0, ""},
		{"env", nil, nil, map[string]string{EnvMaxSearches: "4", EnvSearchQueue: "250"}, 4, 250 * time.Millisecond, ""},
		{"flags beat env", n(8), n(1000), map[string]string{EnvMaxSearches: "4", EnvSearchQueue: "250"}, 8, time.Second, ""},
		{"zero searches", n(0), nil, nil, 0, 0, "--max-searches 0"},
		{"bad env", nil, nil, map[string]string{EnvSearchQueue: "soon"}, 0, 0, EnvSearchQueue},
		{"huge queue", nil, n(10_000_000), nil, 0, 0, "--search-queue-ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			max, q, err := searchLimits(tt.flagMax, tt.flagQ, env(tt.env))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !isUsage(err) {
					t.Fatalf("err = %v, want a usage error naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil || max != tt.wantMax || q != tt.wantQueue {
				t.Errorf("got %d, %s, %v; want %d, %s", max, q, err, tt.wantMax, tt.wantQueue)
			}
		})
	}
}

func TestCheckDebugAddr(t *testing.T) {
	for addr, ok := range map[string]bool{
		"": true, "127.0.0.1:6060": true, "[::1]:6060": true, "localhost:0": true,
		"0.0.0.0:6060": false, "192.168.1.2:6060": false, ":6060": false, "6060": false, "example.com:80": false,
	} {
		if err := checkDebugAddr(addr); (err == nil) != ok {
			t.Errorf("checkDebugAddr(%q) = %v, want ok %t", addr, err, ok)
		}
	}
}
