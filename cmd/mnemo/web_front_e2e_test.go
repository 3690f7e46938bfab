package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPageOfAFrontEnd: an agent's stdio serve holds the index; a serve
// --http started next fronts it, and its web page answers from the holder:
// the same search results, a memory whose read the holder records, the
// sessions. When the holder is killed, the page answers a call with
// results or with "retry", never with an empty answer, and once its serve
// has taken the index over it answers again.
func TestPageOfAFrontEnd(t *testing.T) {
	t.Parallel() // waits on mnemo processes
	if testing.Short() {
		t.Skip("runs the mnemo binary; skipped with -short")
	}
	bin := mnemoBinary(t)
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	copyTree(t, "../../testdata/vault", filepath.Join(root, "memory"))
	projects := filepath.Join(dir, "claude", "projects")
	const session = "6a1d2e3f-4c5b-4d6e-9f0a-1b2c3d4e5f60"
	write(t, filepath.Join(projects, "-home-dev-orchard", session+".jsonl"),
		claudeLine("user", "u1", "", session, "Remember the kumquat quarantine rule for the orchard.", 0))
	args := []string{"--root", root, "serve", "--debounce-ms", "50", "--source=claude-code=" + projects}

	a := startStdioServe(t, bin, args...)
	a.waitLog(`other commands reach this server on `)
	// The holder takes calls before its first sessions sync ends (until then
	// the sessions page answers "indexing"): the checks below want it done.
	a.waitLog(`start-up sessions sync`)
	b := startServer(t, bin, nil, append(args, "--http", "127.0.0.1:0")...)
	page := regexp.MustCompile(`http://127\.0\.0\.1:\d+/`).FindString(b.waitLog(`web page at http://127\.0\.0\.1:\d+/ `))
	b.waitLog(`front end of the serve that holds the index \(PID \d+\)`)
	tok, err := os.ReadFile(filepath.Join(root, "index", tokenName))
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string, out any) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, page+path, nil)
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode == http.StatusOK && out != nil {
			if err := json.Unmarshal(body, out); err != nil {
				t.Fatalf("GET %s: %v in %s", path, err, body)
			}
		}
		return res.StatusCode, string(body)
	}
	type searchPage struct {
		Results []struct{ URI string }
	}
	uris := func(p searchPage) []string {
		var out []string
		for _, r := range p.Results {
			out = append(out, r.URI)
		}
		return out
	}

	// Search: the holder's results, in its order.
	var onPage, byTool searchPage
	if code, body := get("api/search?q=bbolt", &onPage); code != http.StatusOK || len(onPage.Results) == 0 {
		t.Fatalf("search on the front end's page: %d %s\n%s", code, body, b.log())
	}
	a.call("SearchMemories", map[string]any{"query": "bbolt"}, &byTool)
	if !slices.Equal(uris(onPage), uris(byTool)) {
		t.Errorf("the page finds %v, the holder's SearchMemories %v", uris(onPage), uris(byTool))
	}

	// A memory read on the page is a read the holder records.
	const memory = "decisions/adr-001-bbolt-over-sqlite.md"
	lastRead := func() time.Time {
		var recent struct {
			Memories []struct {
				URI      string
				LastRead time.Time
			}
		}
		a.call("RecentActivity", map[string]any{"limit": 200}, &recent)
		for _, m := range recent.Memories {
			if m.URI == "memory://"+strings.TrimSuffix(memory, ".md") {
				return m.LastRead
			}
		}
		return time.Time{}
	}
	if lr := lastRead(); !lr.IsZero() {
		t.Fatalf("%s was read at %v before the test read it", memory, lr)
	}
	var m struct {
		Path, HTML string
		Backlinks  []string
	}
	if code, body := get("api/memory?id="+memory, &m); code != http.StatusOK || m.Path != memory || !strings.Contains(m.HTML, "<h1") {
		t.Fatalf("memory on the front end's page: %d %.300s", code, body)
	}
	if lastRead().IsZero() {
		t.Errorf("the holder has no read of %s after the front end's page showed it", memory)
	}

	// Sessions and status are the holder's.
	var sessions struct{ Sessions []struct{ SessionID string } }
	if code, body := get("api/sessions", &sessions); code != http.StatusOK || len(sessions.Sessions) != 1 || sessions.Sessions[0].SessionID != session {
		t.Errorf("sessions on the front end's page: %d %.300s", code, body)
	}
	var st struct{ Memories struct{ Files int } }
	if code, body := get("api/status", &st); code != http.StatusOK || st.Memories.Files == 0 {
		t.Errorf("status on the front end's page: %d %.300s", code, body)
	}

	// The holder dies: results or "retry", never an empty answer.
	a.cmd.Process.Signal(syscall.SIGKILL)
	a.cs.Close() // waits for the process: its transport owns cmd.Wait
	var p searchPage
	switch code, body := get("api/search?q=bbolt", &p); {
	case code == http.StatusOK && len(p.Results) > 0:
	case code == http.StatusServiceUnavailable && strings.Contains(body, "retry"):
	default:
		t.Errorf("search while the holder is gone: %d %s; want results, or 503 saying to retry", code, body)
	}
	// The socket is listened on once the page has the new holder's corpora.
	b.waitLog(`holding the index: pid=`)
	b.waitLog(`other commands reach this server on `)
	if code, body := get("api/search?q=bbolt", &p); code != http.StatusOK || !slices.Contains(uris(p), "memory://"+strings.TrimSuffix(memory, ".md")) {
		t.Errorf("search after the takeover: %d %.300s; want %s among the results", code, body, memory)
	}
	if code, body := get("api/sessions", &sessions); code != http.StatusOK || len(sessions.Sessions) != 1 {
		t.Errorf("sessions after the takeover: %d %.300s", code, body)
	}
	b.stop()
}
