package main

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mnemo/cmd/mnemo/remote"
	"mnemo/engine"
	"mnemo/engine/sessions"
)

// Secret samples, one per family the issue names. Each must be redacted
// before anything is stored: none may appear in the index folder, a search
// excerpt or sessions show.
var secretSamples = []string{
	"ghp_R7mK2xQ9vL4nW8pT3yB6cF1hJ5sD0gA2zE4u",            // GitHub personal access token
	"AKIAQ3EGRWNYSJ7Y4KXT",                                // AWS access key id
	"xoxb-2941750213-8837214650-kT4mW9qL2xR7vB3nP6yC1hF5", // Slack bot token
	"sk_live_51HbQ2eK8mN4pR7tW1xY3zA6cD9fG0hJ2kL5",        // Stripe secret key
	"S3cr3tPassw0rd",                                      // password inside a postgres:// URL
}

func claudeLine(kind, uuid, parent, session, text string, k int) string {
	msg := map[string]any{"role": kind, "content": text}
	if kind == "assistant" {
		msg = map[string]any{"id": "msg_" + uuid, "role": "assistant", "content": []any{map[string]any{"type": "text", "text": text}}}
	}
	rec := map[string]any{
		"type": kind, "uuid": uuid, "sessionId": session, "cwd": "/home/dev/ledger",
		"timestamp": time.Date(2026, 5, 1, 10, 0, k, 0, time.UTC).Format(time.RFC3339), "isSidechain": false, "message": msg,
	}
	if parent != "" {
		rec["parentUuid"] = parent
	} else {
		rec["parentUuid"] = nil
	}
	b, _ := json.Marshal(rec)
	return string(b) + "\n"
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// appendWait bounds how long the sessions e2e tests wait for the serve's
// watcher to index a change: generous, as the tests run beside others on
// loaded machines; the speed itself is scripts/sessions-append's figure.
const appendWait = 30 * time.Second

// TestSessionsCommands runs sessions sync, search, show and status on a
// Claude Code transcript, then serve: a message appended while it runs is
// searchable from this process, through the socket, without a sync asked for.
func TestSessionsCommands(t *testing.T) {
	t.Parallel() // waits on mnemo processes
	if testing.Short() {
		t.Skip("runs the mnemo binary; skipped with -short")
	}
	bin := mnemoBinary(t)
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	if err := os.MkdirAll(filepath.Join(root, "memory"), 0o755); err != nil {
		t.Fatal(err)
	}
	projects := filepath.Join(dir, "claude", "projects")
	const session = "5f0c1d2e-3b4a-4c5d-8e9f-0a1b2c3d4e5f"
	transcript := filepath.Join(projects, "-home-dev-ledger", session+".jsonl")
	if err := os.MkdirAll(filepath.Dir(transcript), 0o755); err != nil {
		t.Fatal(err)
	}
	appendFile(t, transcript,
		claudeLine("user", "u1", "", session, "What retry budget should the ledger uploader use? My token is "+secretSamples[0]+" and AWS "+secretSamples[1], 0)+
			claudeLine("assistant", "a1", "u1", session, "The retry budget is five attempts. Connect with postgres://admin:"+secretSamples[4]+"@db:5432/ledger and Slack "+secretSamples[2]+" "+secretSamples[3], 1))
	source := "--source=claude-code=" + projects
	mnemo := func(args ...string) string {
		t.Helper()
		code, out, errs := runBinary(t, bin, "", append([]string{"--root", root}, args...)...)
		if code != 0 {
			t.Fatalf("mnemo %q: exit %d: %s", args, code, errs)
		}
		return out
	}
	noSecret := func(what, s string) {
		t.Helper()
		for _, sec := range secretSamples {
			if strings.Contains(s, sec) {
				t.Errorf("%s holds the secret %q", what, sec)
			}
		}
	}

	out := mnemo("sessions", source, "sync")
	if !strings.Contains(out, "1 added") || !strings.Contains(out, "2 messages indexed") {
		t.Errorf("sync: %s", out)
	}
	var p sessions.Page
	if err := json.Unmarshal([]byte(mnemo("sessions", source, "search", "--json", "--no-sync", "retry", "budget")), &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Sessions) != 1 || p.Sessions[0].SessionID != session || len(p.Sessions[0].Hits) != 2 || p.Sessions[0].Project != "/home/dev/ledger" {
		t.Fatalf("search: %+v", p)
	}
	for _, h := range p.Sessions[0].Hits {
		noSecret("excerpt", h.Excerpt)
	}
	show := mnemo("sessions", source, "show", session, "--json")
	noSecret("sessions show", show)
	if !strings.Contains(show, "five attempts") {
		t.Errorf("show lacks the message: %s", show)
	}
	// --message takes the [N] show prints as well as an id.
	text := mnemo("sessions", source, "show", session)
	if !strings.Contains(text, "\n[1] assistant ") {
		t.Fatalf("show does not number the messages:\n%s", text)
	}
	var byID, byNumber sessions.View
	if err := json.Unmarshal([]byte(mnemo("sessions", source, "show", session, "--json", "--message", p.Sessions[0].Hits[0].MessageID, "--context", "0")), &byID); err != nil {
		t.Fatal(err)
	}
	n := strings.Index(text, "] "+byID.Messages[0].Role+" "+byID.Messages[0].MessageID)
	number := text[strings.LastIndex(text[:n], "[")+1 : n]
	if err := json.Unmarshal([]byte(mnemo("sessions", source, "show", session, "--json", "--message", number, "--context", "0")), &byNumber); err != nil {
		t.Fatal(err)
	}
	if len(byNumber.Messages) != 1 || byNumber.Focus != 0 || byNumber.Messages[0].MessageID != byID.Messages[0].MessageID {
		t.Errorf("--message %s gives %+v, want the message %s", number, byNumber.Messages, byID.Messages[0].MessageID)
	}
	if code, _, errs := runBinary(t, bin, "", "--root", root, "sessions", source, "show", session, "--message", "7"); code == 0 || !strings.Contains(errs, "has 2 messages, numbered from 0") {
		t.Errorf("--message 7 of 2: exit %d, %s", code, errs)
	}
	for _, q := range []string{"ghp", "AKIAQ3EGRWNYSJ7Y4KXT", "S3cr3tPassw0rd"} {
		if err := json.Unmarshal([]byte(mnemo("sessions", source, "search", "--json", "--no-sync", "--mode", "fulltext", q)), &p); err != nil {
			t.Fatal(err)
		}
		if len(p.Sessions) > 0 {
			t.Errorf("search %q found %+v", q, p)
		}
	}
	filepath.WalkDir(filepath.Join(root, "index"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			noSecret("index file "+p, string(b))
		}
		return nil
	})
	if st := mnemo("sessions", source, "status"); !strings.Contains(st, "1 sessions (0 archived: transcript gone, kept), 2 messages") {
		t.Errorf("status: %s", st)
	}

	// Live: serve watches the root; an appended message becomes searchable
	// from another process without a sync being asked for. How soon is a
	// benchmark's figure (scripts/sessions-append: under a second at 1M
	// messages), not this test's: a loaded machine may take longer, so the
	// test waits up to appendWait for the event and logs the delay.
	s := startServer(t, bin, nil, "--root", root, "serve", source)
	s.waitLog(`other commands reach this server on`)
	s.waitLog(`Z sessions vectors loaded in \d+ms$`) // at start, before its first sync, not in the first query that needs them
	s.waitLog(`start-up sessions sync`)
	c, err := remote.DialSessions(filepath.Join(root, "index"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	appendFile(t, transcript, claudeLine("user", "u2", "a1", session, "Also remember the kumquat quarantine rule.", 2))
	written := time.Now()
	deadline := written.Add(appendWait)
	for {
		p, err := c.Search(context.Background(), sessions.Query{Text: "kumquat", Mode: engine.FullText})
		if err == nil && len(p.Sessions) == 1 && len(p.Sessions[0].Hits) == 1 {
			t.Logf("appended message searchable after %s", time.Since(written).Round(time.Millisecond))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("appended message not searchable within %s (last: %+v, %v); log:\n%s", appendWait, p, err, s.log())
		}
	}
	// A new project folder and a new transcript in it.
	other := filepath.Join(projects, "-home-dev-orchard", "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d.jsonl")
	if err := os.MkdirAll(filepath.Dir(other), 0o755); err != nil {
		t.Fatal(err)
	}
	appendFile(t, other, claudeLine("user", "o1", "", "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d", "Plant the quince trees in March.", 0))
	deadline = time.Now().Add(appendWait)
	for {
		p, err := c.Search(context.Background(), sessions.Query{Text: "quince", Mode: engine.FullText})
		if err == nil && len(p.Sessions) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("transcript in a new folder not searchable within %s (%+v, %v); log:\n%s", appendWait, p, err, s.log())
		}
	}
	// A deleted transcript's session stays, archived.
	if err := os.Remove(other); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(appendWait)
	for {
		p, err := c.Search(context.Background(), sessions.Query{Text: "quince", Mode: engine.FullText})
		if err == nil && len(p.Sessions) == 1 && p.Sessions[0].Archived {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deleted transcript not archived after %s (%+v, %v); log:\n%s", appendWait, p, err, s.log())
		}
	}
	// The sessions commands reach the server too (its state, its sync).
	if err := json.Unmarshal([]byte(mnemo("sessions", "search", "--json", "--mode", "fulltext", "kumquat")), &p); err != nil || len(p.Sessions) != 1 {
		t.Errorf("sessions search through serve: %+v, %v", p, err)
	}
	if st := mnemo("sessions", "status"); !strings.Contains(st, "2 sessions (1 archived: transcript gone, kept), 4 messages") {
		t.Errorf("sessions status through serve: %s", st)
	}
	// Listing and forgetting reach the server too.
	var l sessions.Listing
	if err := json.Unmarshal([]byte(mnemo("sessions", "list", "--json")), &l); err != nil || l.TotalCount != 2 || !l.Sessions[1].Archived || l.Sessions[1].Title != "Plant the quince trees in March." {
		t.Errorf("sessions list through serve: %+v, %v", l, err)
	}
	if out := mnemo("sessions", "list", "--archived=false"); !strings.Contains(out, "1 sessions") || strings.Contains(out, "quince") {
		t.Errorf("sessions list --archived=false: %s", out)
	}
	if code, _, errs := runBinary(t, bin, "", "--root", root, "sessions", "search", "--no-sync", "*"); code != 2 || !strings.Contains(errs, "mnemo sessions list") {
		t.Errorf(`sessions search "*": exit %d, %s`, code, errs)
	}
	if code, _, _ := runBinary(t, bin, "", "--root", root, "sessions", "forget"); code != 2 {
		t.Errorf("sessions forget without a selection: exit %d, want 2", code)
	}
	if out := mnemo("sessions", "forget", "--archived"); !strings.Contains(out, "Forgot 1 sessions (1 messages)") {
		t.Errorf("sessions forget --archived: %s", out)
	}
	if st := mnemo("sessions", "status"); !strings.Contains(st, "1 sessions (0 archived: transcript gone, kept), 3 messages") {
		t.Errorf("sessions status after the forget: %s", st)
	}
	filepath.WalkDir(filepath.Join(root, "index"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), "quince") {
				t.Errorf("after the forget, %s holds its words", p)
			}
		}
		return nil
	})
	c.Close()
	s.stop()
}
