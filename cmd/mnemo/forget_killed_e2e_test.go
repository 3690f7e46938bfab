//go:build unix

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

	"github.com/fsnotify/fsnotify"

	"mnemo/engine/enginetest/holding"
	"mnemo/engine/sessions"
)

// TestSessionsForgetKilled: `mnemo sessions forget` killed with SIGKILL at
// each stage it passes through — while it opens the index, once it has
// started rewriting the full-text index, once it has started compacting the
// state store — leaves the forgotten session either whole (the kill came
// before the forget committed) or gone: after a restart (a sync, a writer),
// in no answer and in no file under the index folder (raw bytes and every
// full-text segment's terms, decoded), with every other session whole. A
// second forget then completes and leaves no trace. Each kill lands on an
// event — the child creating the file of that stage — not after a sleep.
func TestSessionsForgetKilled(t *testing.T) {
	t.Parallel() // waits on mnemo processes
	if testing.Short() {
		t.Skip("runs the mnemo binary and kills it; skipped with -short")
	}
	bin := mnemoBinary(t)
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	index := filepath.Join(root, "index")
	projects := filepath.Join(dir, "claude", "projects")
	// Enough messages that rewriting the full-text index takes a while.
	const nSessions, perSession = 60, 100
	writeSession := func(id, project string, texts []string) string {
		t.Helper()
		var b strings.Builder
		parent := ""
		for k, text := range texts {
			uuid := fmt.Sprintf("%s-%d", id[:8], k)
			b.WriteString(claudeLine([]string{"user", "assistant"}[k%2], uuid, parent, id, text, k))
			parent = uuid
		}
		path := filepath.Join(projects, project, id+".jsonl")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for i := range nSessions {
		texts := make([]string, perSession)
		for k := range texts {
			texts[k] = fmt.Sprintf("ledger note %d of session %d about the wombat", k, i)
		}
		writeSession(fmt.Sprintf("%08d-3b4a-4c5d-8e9f-0a1b2c3d4e5f", i), "-home-dev-ledger", texts)
	}
	const secret = "5ec2e7aa-3b4a-4c5d-8e9f-0a1b2c3d4e5f"
	words := []string{"quetzalxyzzy", "plughwump", "frobnitzkat"}
	secretPath := writeSession(secret, "-home-dev-merger", []string{
		"Tell nobody about the quetzalxyzzy merger.",
		"The quetzalxyzzy merger closes on Friday; ask plughwump.",
		"And the frobnitzkat acquisition after it.",
	})
	if err := os.MkdirAll(filepath.Join(root, "memory"), 0o755); err != nil {
		t.Fatal(err)
	}
	source := "--source=claude-code=" + projects
	mnemo := func(args ...string) (int, string, string) {
		t.Helper()
		return runBinary(t, bin, "", append([]string{"--root", root, "sessions", source}, args...)...)
	}
	must := func(args ...string) string {
		t.Helper()
		code, out, errs := mnemo(args...)
		if code != 0 {
			t.Fatalf("mnemo sessions %q: exit %d: %s", args, code, errs)
		}
		return out
	}
	status := func() sessions.Status {
		t.Helper()
		var st sessions.Status
		if err := json.Unmarshal([]byte(must("status", "--json")), &st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	must("sync")
	if err := os.Remove(secretPath); err != nil { // the index holds its only copy
		t.Fatal(err)
	}
	must("sync")
	if st := status(); st.Sessions != nSessions+1 || st.Archived != 1 {
		t.Fatalf("before the forget: %d sessions, %d archived", st.Sessions, st.Archived)
	}
	// A set-aside copy of the state store, as one found damaged leaves: it
	// holds the session too, and the forget must remove it.
	state := filepath.Join(index, "sessions", "state.db")
	b, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(state+".corrupt-20260101T000000.000Z", b, 0o600); err != nil {
		t.Fatal(err)
	}
	must("sync") // reads the copy once: it holds nothing the store lacks
	if st := status(); st.Sessions != nSessions+1 || len(st.Recovery) != 1 || st.Recovery[0].Recovered != 0 {
		t.Fatalf("after the set-aside copy was read: %d sessions, recovery %+v", st.Sessions, st.Recovery)
	}
	if len(holding.Files(t, index, words...)) < 3 {
		t.Fatal("the full-text index, the state store and its copy do not all hold the secret words; the check would prove nothing")
	}
	pristine := filepath.Join(dir, "pristine")
	copyTree(t, index, pristine)

	// A session's state after the restart: whole (every message, archived)
	// or gone (no answer, no file holding its words).
	whole := func(when string) bool {
		t.Helper()
		code, out, _ := mnemo("show", secret, "--json")
		if code != 0 {
			if left := holding.Files(t, index, words...); len(left) > 0 {
				t.Errorf("%s: the session is gone from the answers, but files hold its words: %v", when, left)
			}
			return false
		}
		var v sessions.View
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatal(err)
		}
		if !v.Archived || v.MessageCount != 3 || len(v.Messages) != 3 {
			t.Errorf("%s: the session is neither whole nor gone: archived %v, %d messages", when, v.Archived, v.MessageCount)
		}
		return true
	}
	others := func(when string, withSecret bool) {
		t.Helper()
		st := status()
		want := nSessions * perSession
		if withSecret {
			want += 3
		}
		if st.Messages != want || st.ForgetUnfinished != "" {
			t.Errorf("%s: %d messages (forget unfinished %q), want %d", when, st.Messages, st.ForgetUnfinished, want)
		}
	}

	for _, stage := range []struct {
		name, file string
		committed  bool // the forget has committed once the file appears
	}{
		{"opening the index", "writer.pid", false},
		{"rewriting the full-text index", "fulltext.bleve.purge", true},
		{"swapping in the rebuilt full-text index", "fulltext.bleve.old", true},
		{"compacting the state store", "state.db.purge", true},
		{"swapping in the compacted state store", "state.db", true},
	} {
		// The kill follows the file's event by however long the machine
		// takes to deliver it; after the last swap the forget finishes in
		// moments, so on a busy machine the kill can land after it did.
		// Such a run is a forget that completed (checked below); the stage
		// is run again until a kill lands inside it, at most killTries.
		for try := 1; ; try++ {
			if err := os.RemoveAll(index); err != nil {
				t.Fatal(err)
			}
			copyTree(t, pristine, index)
			killed := killOnCreate(t, filepath.Join(index, "sessions"), stage.file, bin, "--root", root, "sessions", source, "forget", secret)
			t.Logf("%s, try %d: %s", stage.name, try, killed)
			if !stage.committed {
				break
			}
			st := status()
			if strings.HasPrefix(killed, "killed") && st.ForgetUnfinished != "" {
				break
			}
			if whole(stage.name + ", a kill that landed late") {
				t.Errorf("%s: %s, and the forget is not unfinished, yet the session is there", stage.name, killed)
			}
			if try == killTries {
				t.Errorf("%s: in %d tries no kill landed before the forget finished (%s); the test proves nothing at this stage", stage.name, killTries, killed)
				break
			}
		}
		must("sync") // the restart: a writer opens the index
		present := whole(stage.name + ", after the restart")
		if stage.committed && present {
			t.Errorf("%s: the forget had committed, but the session is back", stage.name)
		}
		others(stage.name+", after the restart", present)
		// A second forget completes, whichever way the first one ended.
		code, out, errs := mnemo("forget", "--archived") // the secret session is the only archived one
		if code != 0 {
			t.Fatalf("%s: second forget: exit %d: %s %s", stage.name, code, out, errs)
		}
		if whole(stage.name + ", after a second forget") {
			t.Errorf("%s: the session is still there after a second forget", stage.name)
		}
		others(stage.name+", after a second forget", false)
	}
}

// killTries is how many times a stage of TestSessionsForgetKilled runs
// before a kill that never lands inside it fails the test.
const killTries = 5

// killOnCreate runs bin with args and kills it with SIGKILL as soon as a
// file named name appears in dir (watched with fsnotify: the kill follows
// the child's own act). It says how the child ended.
func killOnCreate(t *testing.T, dir, name, bin string, args ...string) string {
	t.Helper()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Add(dir); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case err := <-done:
			return fmt.Sprintf("finished before %s appeared (%v)", name, err)
		case ev := <-w.Events:
			if filepath.Base(ev.Name) != name || !ev.Has(fsnotify.Create) {
				continue
			}
			cmd.Process.Signal(syscall.SIGKILL)
			<-done
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				return "killed as " + name + " appeared"
			}
			return "finished as " + name + " appeared, before the kill landed"
		case err := <-w.Errors:
			t.Fatalf("watch %s: %v", dir, err)
		}
	}
}
