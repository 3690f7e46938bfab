package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"mnemo/engine/sessions"
	"mnemo/engine/transcript/transcripttest"
)

// agentWord is one agent's fixture as the end-to-end test sees it: the
// word every prose message of its sessions holds, the sessions and
// messages it gives, and the noise word none of them may hold.
type agentWord struct {
	kind, word         string
	sessions, messages int
}

var agentWords = []agentWord{
	{"copilot-chat", "vscodequokka", 2, 4}, {"cursor", "cursorheron", 2, 4}, {"cursor-cli", "cursorclilynx", 1, 2},
	{"copilot-cli", "ghcliotter", 1, 2}, {"cline", "clinemarten", 1, 5}, {"roo-code", "roowombat", 1, 5},
	{"kilo-code", "kiloibis", 1, 5}, {"opencode", "opencodetapir", 1, 2}, {"opencode", "opencodelemur", 1, 2},
	{"aider", "aiderbadger", 1, 3}, {"continue", "continuegecko", 1, 2}, {"amp", "ampnewt", 1, 2},
	{"goose", "gooseloon", 1, 2}, {"goose", "gooseplover", 1, 2}, {"factory", "droidfalcon", 1, 2},
	{"qwen", "qwenpanda", 1, 4}, {"kimi", "kimikoala", 1, 2}, {"crush", "crushorca", 1, 2},
	{"kiro", "kiromoose", 1, 2}, {"zed", "zedyak", 2, 4}, {"openhands", "handsbison", 1, 3}, {"openhands", "handsheron", 1, 2},
	{"claude-export", "claudeokapi", 1, 2}, {"chatgpt-export", "chatgptdingo", 1, 2},
}

// TestSessionsEveryAgent: a home folder holding every source's fixture →
// sessions sync → each agent's prose is found by search under its
// sourceAgent, sessions show lists each message once and in order, no
// noise is indexed, and sessions status names every source with its
// counts.
func TestSessionsEveryAgent(t *testing.T) {
	home := t.TempDir()
	agents, err := transcripttest.List("../../testdata/transcripts")
	if err != nil {
		t.Fatal(err)
	}
	if err := transcripttest.Agents(home, "../../testdata/transcripts", agents...); err != nil {
		t.Fatal(err)
	}
	if err := transcripttest.Today(home, "../../engine/transcript/testdata"); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	for _, v := range []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "OPENCLAW_STATE_DIR",
		"COPILOT_HOME", "CONTINUE_GLOBAL_DIR", "KIMI_SHARE_DIR", "CRUSH_GLOBAL_DATA"} {
		t.Setenv(v, "")
	}
	root := t.TempDir()
	cli := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if code := run(context.Background(), append([]string{"--root", root}, args...), &out, &errb); code != 0 {
			t.Fatalf("mnemo %q: exit %d: %s", args, code, errb.String())
		}
		return out.String()
	}
	var rep sessions.Report
	if err := json.Unmarshal([]byte(cli("--json", "sessions", "sync")), &rep); err != nil {
		t.Fatal(err)
	}
	for _, s := range rep.Skipped {
		if !strings.Contains(s.Reason, "found, not readable") && !strings.Contains(s.Reason, "subagent") && !strings.Contains(s.Reason, "without full.md") {
			t.Errorf("skipped %s: %s", s.Path, s.Reason)
		}
	}
	wantSessions := map[string]int{}
	wantMessages := map[string]int{}
	for _, a := range agentWords {
		wantSessions[a.kind] += a.sessions
		wantMessages[a.kind] += a.messages
		var p sessions.Page
		if err := json.Unmarshal([]byte(cli("--json", "sessions", "search", "--no-sync", "--mode", "fulltext", "--agent", a.kind, a.word)), &p); err != nil {
			t.Fatal(err)
		}
		if len(p.Sessions) != a.sessions {
			t.Errorf("%s: search %q found %d sessions, want %d", a.kind, a.word, len(p.Sessions), a.sessions)
			continue
		}
		total := 0
		for _, s := range p.Sessions {
			if s.SourceAgent != a.kind {
				t.Errorf("%s: session %s has sourceAgent %q", a.kind, s.SessionID, s.SourceAgent)
			}
			var v sessions.View
			if err := json.Unmarshal([]byte(cli("--json", "sessions", "show", s.SessionID)), &v); err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			last := ""
			for _, m := range v.Messages {
				if m.Role == sessions.RoleSummary {
					continue
				}
				total++
				if seen[m.Text] {
					t.Errorf("%s: %s shows %q twice", a.kind, s.SessionID, m.Text)
				}
				seen[m.Text] = true
				if strings.Contains(m.Text, "noise") {
					t.Errorf("%s: %s shows noise: %q", a.kind, s.SessionID, m.Text)
				}
				if !strings.Contains(m.Text, a.word) {
					t.Errorf("%s: %s shows a message without %q: %q", a.kind, s.SessionID, a.word, m.Text)
				}
				if m.Role == "user" && last == "user" && a.kind != "aider" && a.kind != "cline" && a.kind != "roo-code" && a.kind != "kilo-code" {
					t.Errorf("%s: %s: two user messages in a row (order lost?)", a.kind, s.SessionID)
				}
				last = m.Role
			}
		}
		if total != a.messages {
			t.Errorf("%s %q: %d messages shown, want %d", a.kind, a.word, total, a.messages)
		}
		if err := json.Unmarshal([]byte(cli("--json", "sessions", "search", "--no-sync", "--mode", "fulltext", a.word+"noise")), &p); err != nil {
			t.Fatal(err)
		}
		if len(p.Sessions) != 0 {
			t.Errorf("%s: noise word found in %d sessions", a.kind, len(p.Sessions))
		}
	}
	var st sessions.Status
	if err := json.Unmarshal([]byte(cli("--json", "sessions", "status")), &st); err != nil {
		t.Fatal(err)
	}
	gotSessions, gotMessages, listed := map[string]int{}, map[string]int{}, map[string]bool{}
	for _, s := range st.Sources {
		listed[s.Kind] = true
		gotSessions[s.Kind] += s.Sessions
		gotMessages[s.Kind] += s.Messages
	}
	for k, n := range wantSessions {
		if gotSessions[k] != n {
			t.Errorf("status: %s has %d sessions, want %d", k, gotSessions[k], n)
		}
		// A session's summary (its title) is one more searchable document.
		if gotMessages[k] < wantMessages[k] {
			t.Errorf("status: %s has %d messages, want at least %d", k, gotMessages[k], wantMessages[k])
		}
	}
	for _, k := range []string{"claude-code", "codex", "gemini", "openclaw", "codearchitect", "antigravity", "windsurf"} {
		if !listed[k] {
			t.Errorf("status does not list %s", k)
		}
	}
	text := cli("sessions", "status")
	for _, k := range []string{"antigravity", "windsurf"} {
		if !strings.Contains(text, "found, not readable") {
			t.Errorf("status text does not say %s was found but not readable:\n%s", k, text)
		}
	}
	// A second sync with nothing changed reads nothing.
	if err := json.Unmarshal([]byte(cli("--json", "sessions", "sync")), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Added+rep.Updated+rep.Reset+rep.Removed+rep.Messages != 0 {
		t.Errorf("no-op sync changed something: %+v", rep)
	}
	_ = os.Getenv
}
