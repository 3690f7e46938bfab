package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"mnemo/engine/sessions"
)

// TestSessionsSyncKilled: a first sessions sync killed with SIGKILL after
// its first batch reached the disk leaves part of the transcripts indexed;
// status and search must answer indexing: true (with the unfinished mark
// saying why) until a sync completes, and the next sync indexes everything.
func TestSessionsSyncKilled(t *testing.T) {
	t.Parallel() // waits on mnemo processes
	if testing.Short() {
		t.Skip("runs the mnemo binary and kills it; skipped with -short")
	}
	bin := mnemoBinary(t)
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	projects := filepath.Join(dir, "claude", "projects")
	// Enough messages for several batches of 4,096.
	const nSessions, perSession = 150, 90
	for i := range nSessions {
		id := fmt.Sprintf("%08d-3b4a-4c5d-8e9f-0a1b2c3d4e5f", i)
		var b strings.Builder
		parent := ""
		for k := range perSession {
			kind := []string{"user", "assistant"}[k%2]
			uuid := fmt.Sprintf("u%d-%d", i, k)
			b.WriteString(claudeLine(kind, uuid, parent, id, fmt.Sprintf("ledger note %d of session %d about the wombat", k, i), k))
			parent = uuid
		}
		path := filepath.Join(projects, "-home-dev-ledger", id+".jsonl")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "memory"), 0o755); err != nil {
		t.Fatal(err)
	}
	source := "--source=claude-code=" + projects
	cmd := exec.Command(bin, "--root", root, "sessions", source, "sync")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	segs := filepath.Join(root, "index", "sessions", "fulltext.bleve", "store", "*.zap")
	for killed := false; !killed; {
		select {
		case err := <-done:
			t.Fatalf("the sync finished (%v) before a batch was seen on disk; the test did not interrupt it", err)
		case <-time.After(2 * time.Millisecond):
			if m, _ := filepath.Glob(segs); len(m) > 0 {
				cmd.Process.Signal(syscall.SIGKILL)
				<-done
				killed = true
			}
		}
	}
	mnemo := sessionsCLI(t, bin, root, source)
	var st sessions.Status
	if err := json.Unmarshal([]byte(mnemo("status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	var p sessions.Page
	if err := json.Unmarshal([]byte(mnemo("search", "--no-sync", "--json", "--mode", "fulltext", "--limit", "200", "wombat")), &p); err != nil {
		t.Fatal(err)
	}
	if st.Sessions >= nSessions || p.TotalSessions >= nSessions {
		t.Fatalf("killed sync: %d sessions in status, %d found; want part of %d (is the test still interrupting?)", st.Sessions, p.TotalSessions, nSessions)
	}
	if !st.Indexing || st.Unfinished == "" || !p.Indexing {
		t.Errorf("after the kill: status indexing %v (unfinished %q), search indexing %v; want true, set, true", st.Indexing, st.Unfinished, p.Indexing)
	}
	if out := mnemo("status"); !strings.Contains(out, "has not completed") {
		t.Errorf("status does not say the sync was cut short:\n%s", out)
	}
	mnemo("sync")
	st = sessions.Status{}
	if err := json.Unmarshal([]byte(mnemo("status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if st.Indexing || st.Unfinished != "" || st.Sessions != nSessions || st.Messages != nSessions*perSession {
		t.Errorf("after a completed sync: indexing %v, unfinished %q, %d sessions, %d messages; want false, empty, %d, %d",
			st.Indexing, st.Unfinished, st.Sessions, st.Messages, nSessions, nSessions*perSession)
	}
}
