package transcript

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClaudeRewindAnsweredAgain: a user rewinds to their own earlier prompt
// and has it answered again. The prompt then holds two children — the
// abandoned prompt typed after it (which got a reply) and the new reply —
// and the abandoned prompt and its reply are left out, counted as abandoned.
// A prompt with no reply of its own under the same parent (a note typed
// while the assistant worked) stays.
func TestClaudeRewindAnsweredAgain(t *testing.T) {
	line := func(typ, uuid, parent, text string) string {
		p := `null`
		if parent != "" {
			p = fmt.Sprintf("%q", parent)
		}
		return fmt.Sprintf(`{"parentUuid":%s,"isSidechain":false,"type":%q,"uuid":%q,"sessionId":"s-rw","cwd":"/home/dev/rw","timestamp":"2026-01-02T03:04:05.000Z","message":{"role":%q,"content":[{"type":"text","text":%q}]}}`,
			p, typ, uuid, typ, text)
	}
	lines := []string{
		line("user", "u1", "", "How do I rotate the kiln logs?"),
		line("assistant", "a1", "u1", "Use logrotate with a daily rule."),
		line("user", "u2", "a1", "And keep a week of them?"),
		line("user", "u3", "u2", "Actually, forget the week, ask it differently."), // abandoned
		line("assistant", "a3", "u3", "Sure, ask away."),                           // abandoned
		line("assistant", "a2", "u2", "Set rotate 7."),                             // the rewind: u2 answered again
		line("user", "u4", "a2", "Thanks."),
	}
	root := t.TempDir()
	dir := filepath.Join(root, "projects", "-home-dev-rw")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "s-rw.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []string
	res, err := Read(context.Background(), Source{Kind: ClaudeCode, Root: root}, path, Cursor{}, Options{}, Handler{
		Message: func(m Message) error { got = append(got, m.Role+": "+m.Text); return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"user: How do I rotate the kiln logs?",
		"assistant: Use logrotate with a daily rule.",
		"user: And keep a week of them?",
		"assistant: Set rotate 7.",
		"user: Thanks.",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("messages:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := res.Coverage.LeftOut[Abandoned]; n != 2 || !res.Coverage.Balanced() {
		t.Errorf("coverage %+v: want 2 abandoned, balanced", res.Coverage)
	}
}
