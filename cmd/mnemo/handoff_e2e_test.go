package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"mnemo/cmd/mnemo/remote"
	"mnemo/engine"
)

// TestHandoff runs `mnemo serve` and, from other processes, the commands
// that must work beside it: they go through the server's socket, see its
// state, record their reads in it, and keep their exit statuses.
func TestHandoff(t *testing.T) {
	t.Parallel() // waits on mnemo processes
	if testing.Short() {
		t.Skip("runs the mnemo binary; skipped with -short")
	}
	dir := t.TempDir()
	bin := mnemoBinary(t)
	root := filepath.Join(dir, "root")
	memory, index := filepath.Join(root, "memory"), filepath.Join(root, "index")
	files := map[string]string{
		"decisions/use-bbolt.md": "---\ntitle: Use bbolt\ncreated: 2020-01-01\n---\n# Use bbolt\n\nState lives in bbolt, an embedded key value store.\n",
		"howto/restart.md":       "---\ntitle: Restart the server\ncreated: 2020-02-01\n---\n# Restart the server\n\nSend SIGTERM and wait for the clean shutdown line.\n",
		"people/ana.md":          "# Ana\n\nAna owns the release process.\n",
	}
	for p, body := range files {
		write(t, filepath.Join(memory, p), body)
	}
	mnemo := func(stdin string, args ...string) (int, string, string) {
		t.Helper()
		return runBinary(t, bin, stdin, append([]string{"--root", root}, args...)...)
	}
	search := func(args ...string) engine.Page {
		t.Helper()
		code, out, errs := mnemo("", append([]string{"search", "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("search %q: exit %d: %s", args, code, errs)
		}
		var p engine.Page
		if err := json.Unmarshal([]byte(out), &p); err != nil {
			t.Fatalf("search json: %v\n%s", err, out)
		}
		return p
	}
	find := func(p engine.Page, path string) *engine.Result {
		for i := range p.Results {
			if p.Results[i].Path == path {
				return &p.Results[i]
			}
		}
		return nil
	}

	// Stdin is /dev/null, so serve runs no MCP server over stdio.
	s := startServer(t, bin, nil, "--root", root, "serve", "--no-watch")
	s.waitLog(`^\S+Z other commands reach this server on \S+serve\.sock$`)
	s.waitLog(`^\S+Z sync added=3 `)
	pid := s.cmd.Process.Pid

	t.Run("search", func(t *testing.T) {
		p := search("bbolt")
		if find(p, "decisions/use-bbolt.md") == nil || p.Indexing {
			t.Errorf("search bbolt = %+v", p)
		}
	})

	t.Run("status", func(t *testing.T) {
		code, out, errs := mnemo("", "status", "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		var st engine.Status
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatal(err)
		}
		// The server's engine answered: it is the writer, not a read-only open.
		if st.Files != 3 || st.ReadOnly {
			t.Errorf("status = %+v, want 3 files from the writer", st)
		}
	})

	t.Run("another memory folder is refused", func(t *testing.T) {
		other := t.TempDir()
		code, out, errs := mnemo("", "--memory", other, "search", "bbolt")
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "not "+other) {
			t.Errorf("--memory %s while serve holds the index for %s: exit %d, stdout %q, stderr %q; want exit 2 and one line refusing", other, memory, code, out, errs)
		}
	})

	t.Run("read by file stem", func(t *testing.T) {
		code, out, errs := mnemo("", "read", "use-bbolt") // decisions/use-bbolt.md, which has a title
		if code != 0 || !strings.Contains(out, "bbolt") {
			t.Errorf("read use-bbolt: exit %d, stdout %q, stderr %q", code, out, errs)
		}
	})

	t.Run("read records recency", func(t *testing.T) {
		if r := find(search("--no-sync", "restart shutdown"), "howto/restart.md"); r == nil || r.Decay >= 1 {
			t.Fatalf("before the read: %+v, want decay < 1", r)
		}
		code, out, errs := mnemo("", "read", "howto/restart")
		if code != 0 || !strings.Contains(out, "clean shutdown line") {
			t.Fatalf("read: exit %d, stdout %q, stderr %q", code, out, errs)
		}
		if r := find(search("--no-sync", "restart shutdown"), "howto/restart.md"); r == nil || r.Decay != 1 {
			t.Errorf("after the read: %+v, want decay 1", r)
		}
	})

	t.Run("search syncs through the server", func(t *testing.T) {
		write(t, filepath.Join(memory, "notes/zebra.md"), "# Zebra\n\nstriped quagga notes\n")
		if find(search("--no-sync", "--mode", "fulltext", "quagga"), "notes/zebra.md") != nil {
			t.Fatal("--no-sync found a file the server has not indexed")
		}
		if find(search("--mode", "fulltext", "quagga"), "notes/zebra.md") == nil {
			t.Error("search did not have the server sync first")
		}
		code, out, errs := mnemo("", "sync", "--json")
		var r engine.Report
		if code != 0 || json.Unmarshal([]byte(out), &r) != nil || r.Unchanged != 4 {
			t.Errorf("sync: exit %d, %s %s", code, out, errs)
		}
	})

	t.Run("batch and eval", func(t *testing.T) {
		code, out, errs := mnemo("{\"id\":1,\"query\":\"bbolt\"}\n{\"id\":2,\"query\":\"the\"}\n{\"id\":3,\"query\":\"release\"}\n", "search", "--batch", "-")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if code != 0 || len(lines) != 3 || !strings.Contains(lines[0], "use-bbolt.md") ||
			!strings.Contains(lines[1], `"error"`) || !strings.Contains(lines[2], "people/ana.md") {
			t.Errorf("batch: exit %d, stdout:\n%s\nstderr: %s", code, out, errs)
		}
		qs := filepath.Join(dir, "queries.jsonl")
		write(t, qs, `{"id":"q1","query":"bbolt key value","relevant":["decisions/use-bbolt.md"]}`+"\n")
		code, out, errs = mnemo("", "eval", "--json", qs)
		var rep evalOutput
		if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Subsets["all"].N != 1 {
			t.Fatalf("eval: exit %d: %s %s", code, out, errs)
		}
		if v, _ := rep.Subsets["all"].Get("R@1"); v != 1 {
			t.Errorf("eval R@1 = %v, want 1", v)
		}
	})

	t.Run("exit statuses", func(t *testing.T) {
		cases := []struct {
			args []string
			code int
			says string
		}{
			{[]string{"search", "the", "of"}, 2, "no informative term"},
			{[]string{"search", "--mode", "fuzzy", "bbolt"}, 2, "unknown mode"},
			{[]string{"search", "--no-sync", "--page-size", "500", "bbolt"}, 2, "pageSize"},
			{[]string{"read", "no/such/memory"}, 1, "memory not found"},
			{[]string{"read", "../../etc/passwd"}, 2, "outside the memory folder"},
		}
		for _, tc := range cases {
			code, out, errs := mnemo("", tc.args...)
			if code != tc.code || out != "" || !strings.HasPrefix(errs, "mnemo: ") || !strings.Contains(errs, tc.says) || strings.Count(errs, "\n") != 1 {
				t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d and one line saying %q", tc.args, code, out, errs, tc.code, tc.says)
			}
		}
	})

	t.Run("ranking flags are not taken", func(t *testing.T) {
		code, _, errs := mnemo("", "--fusion", "rrf", "search", "bbolt")
		if code != 0 || !strings.Contains(errs, "--fusion is ignored") {
			t.Errorf("exit %d, stderr %q; want a note that --fusion is ignored", code, errs)
		}
	})

	t.Run("second serve", func(t *testing.T) {
		second := startServer(t, bin, nil, "--root", root, "serve", "--no-watch")
		second.waitLog(fmt.Sprintf(`front end of the serve that holds the index \(PID %d\)`, pid))
		second.stopFrontEnd()
	})

	s.stop()
	if _, err := os.Lstat(filepath.Join(index, remote.SocketName)); !os.IsNotExist(err) {
		t.Errorf("socket left behind after a clean stop (%v)", err)
	}
	// The read made through the server outlives it.
	if r := find(search("--no-sync", "restart shutdown"), "howto/restart.md"); r == nil || r.Decay != 1 {
		t.Errorf("after serve stopped: %+v, want the read still recorded (decay 1)", r)
	}

	t.Run("killed server", func(t *testing.T) {
		s := startServer(t, bin, nil, "--root", root, "serve", "--no-watch")
		s.waitLog(`other commands reach this server`)
		s.cmd.Process.Signal(syscall.SIGKILL)
		<-s.exit
		if _, err := os.Lstat(filepath.Join(index, remote.SocketName)); err != nil {
			t.Fatalf("a killed server leaves its socket, or this test proves nothing: %v", err)
		}
		// Its lock died with it: commands open the index themselves.
		if code, _, errs := mnemo("", "status"); code != 0 {
			t.Errorf("status after kill: exit %d: %s", code, errs)
		}
		// The next server clears the stale socket and serves.
		s = startServer(t, bin, nil, "--root", root, "serve", "--no-watch")
		s.waitLog(`other commands reach this server`)
		if find(search("bbolt"), "decisions/use-bbolt.md") == nil {
			t.Error("search through the new server found nothing")
		}
		s.stop()
	})

	t.Run("writer that takes no requests", func(t *testing.T) {
		// This test process holds the index as a plain writer, without a socket.
		e, err := engine.Open(context.Background(), engine.Config{MemoryDir: memory, IndexDir: index})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		code, _, errs := mnemo("", "status")
		want := fmt.Sprintf("mnemo: index is in use by PID %d", os.Getpid())
		if code != 1 || !strings.HasPrefix(errs, want) || !strings.Contains(errs, "takes no requests") {
			t.Errorf("status: exit %d, stderr %q; want exit 1 starting %q", code, errs, want)
		}
	})
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
