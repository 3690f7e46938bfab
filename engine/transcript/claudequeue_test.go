package transcript

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// claudeQueueCut is a real Claude Code 2.1.42 transcript (a cut, see
// testdata/transcripts/SOURCES.md) where the user typed two messages while
// the agent worked: each is written only as queue-operation lines, and the
// agent's next reply answers it.
const claudeQueueCut = "../../../testdata/transcripts/claude-code/-Users-alex-workspace-cli--worktrees-3/c010174c-a7cd-4bcc-b7d4-61258d6c463f.jsonl"

// TestClaudeQueuedMessages reads real 2.1.42 transcripts holding messages
// the user typed while Claude Code was busy: each one delivered to the model
// with a tool result ("remove") is a user message, where it was delivered;
// a task notification or a bare /command that went through the queue is
// not prose. The words the user gave when rejecting a tool call are a user
// message too.
func TestClaudeQueuedMessages(t *testing.T) {
	tests := []struct {
		file string
		want []string // openings of messages, in the order they come
		not  []string // texts no message may hold
	}{
		{
			file: claudeQueueCut,
			want: []string{
				"assistant: Looking at the transcript - it actually shows the real Gemini format",
				"user: OH I think the test is failing due to this commit message",
				"assistant: Ah, I see the issue.",
				"user: it's not adding the trailer properly??",
				"assistant: Found the bug.",
				"user: why is this different for gemini vs claude??",
				"assistant: It's not Gemini-specific",
			},
		},
		{
			file: "../../../testdata/transcripts/claude-code/-Users-alex-workspace-cli--worktrees-2/e8811ad6-93d9-4ee6-997d-2447a5d496f3.jsonl",
			want: []string{
				"user: logs were running default in the test repo, not DEBUG.",
				"assistant: All tests pass.",
				"user: oh whoops, accidentally switched branches, my bad",
				"assistant: No worries.",
				"user: try again now",
				"assistant: Good, we're back.",
			},
			not: []string{"<task-notification>", "/exit"},
		},
		{
			file: "../../../testdata/transcripts/claude-code/-Users-alex-workspace-cli/4de02c81-2bd4-4ea2-9370-f1f32de9248e.jsonl",
			want: []string{
				"user: there should be only _one_ way for us to get the git author in this codebase",
				"assistant: Good point — there should be one canonical function.",
			},
		},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			c := newCollector()
			read(t, Source{Kind: ClaudeCode}, fixture(t, tt.file), Cursor{}, Options{}, c)
			got := texts(c.messages())
			i := 0
			for _, g := range got {
				if i < len(tt.want) && strings.HasPrefix(g, tt.want[i]) {
					i++
				}
				for _, n := range tt.not {
					if strings.Contains(g, n) {
						t.Errorf("delivered %.80q", g)
					}
				}
			}
			if i < len(tt.want) {
				t.Errorf("missing %q in order; got:\n%s", tt.want[i], strings.Join(got, "\n"))
			}
		})
	}
}

// TestClaudeQueueOperations checks what each queue operation does with the
// texts typed into the queue: "remove" delivers the oldest, "popAll" takes
// them all back, "dequeue" leaves the oldest to the user record that sends
// it, and a text a user record holds is not delivered again.
func TestClaudeQueueOperations(t *testing.T) {
	const (
		u1 = `{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","timestamp":"2026-02-15T00:00:01Z","message":{"role":"user","content":"start the build"}}`
		a1 = `{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s","timestamp":"2026-02-15T00:00:02Z","message":{"id":"m1","role":"assistant","model":"m","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}]}}`
		r1 = `{"type":"user","uuid":"r1","parentUuid":"a1","sessionId":"s","timestamp":"2026-02-15T00:00:04Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}}`
		a2 = `{"type":"assistant","uuid":"a2","parentUuid":"r1","sessionId":"s","timestamp":"2026-02-15T00:00:05Z","message":{"id":"m2","role":"assistant","model":"m","content":[{"type":"text","text":"Built."}]}}`
		u2 = `{"type":"user","uuid":"u2","parentUuid":"a2","sessionId":"s","timestamp":"2026-02-15T00:00:06Z","message":{"role":"user","content":"use the release flags"}}`
	)
	q := func(op, text, ts string) string {
		if text == "" {
			return `{"type":"queue-operation","operation":"` + op + `","timestamp":"2026-02-15T00:00:0` + ts + `Z","sessionId":"s"}`
		}
		return `{"type":"queue-operation","operation":"` + op + `","timestamp":"2026-02-15T00:00:0` + ts + `Z","sessionId":"s","content":"` + text + `"}`
	}
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"remove delivers", []string{u1, a1, q("enqueue", "use the release flags", "3"), q("remove", "", "4"), r1, a2},
			[]string{"user: start the build", "user: use the release flags", "assistant: Built."}},
		{"oldest first", []string{u1, a1, q("enqueue", "one", "3"), q("enqueue", "two", "3"), q("remove", "", "4"), r1, q("remove", "", "5"), a2},
			[]string{"user: start the build", "user: one", "user: two", "assistant: Built."}},
		{"popAll takes back", []string{u1, a1, q("enqueue", "use the release flags", "3"), q("popAll", "use the release flags", "3"), q("remove", "", "4"), r1, a2},
			[]string{"user: start the build", "assistant: Built."}},
		{"dequeue sends as a record", []string{u1, a1, q("enqueue", "use the release flags", "3"), r1, a2, q("dequeue", "", "6"), u2, q("remove", "", "7")},
			[]string{"user: start the build", "assistant: Built.", "user: use the release flags"}},
		{"sent as a record", []string{u1, a1, r1, a2, q("enqueue", "use the release flags", "5"), u2, q("remove", "", "7")},
			[]string{"user: start the build", "assistant: Built.", "user: use the release flags"}},
		{"slash command", []string{u1, a1, q("enqueue", "/exit", "3"), q("enqueue", "/model opus", "3"), q("remove", "", "4"), q("remove", "", "4"), r1, a2},
			[]string{"user: start the build", "user: opus", "assistant: Built."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.jsonl")
			data := strings.Join(tt.lines, "\n") + "\n"
			if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
			c := newCollector()
			res := read(t, Source{Kind: ClaudeCode}, path, Cursor{}, Options{}, c)
			if got := texts(c.messages()); !slices.Equal(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
			if res.Coverage.Lines != len(tt.lines) {
				t.Errorf("coverage counts %d lines, want %d", res.Coverage.Lines, len(tt.lines))
			}
			// Line by line, as the file grows, the same messages.
			live := filepath.Join(t.TempDir(), "s.jsonl")
			lc := newCollector()
			var cur Cursor
			for i := range tt.lines {
				if err := os.WriteFile(live, []byte(strings.Join(tt.lines[:i+1], "\n")+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				cur = read(t, Source{Kind: ClaudeCode}, live, cur, Options{}, lc).Cursor
			}
			if got := texts(lc.messages()); !slices.Equal(got, tt.want) {
				t.Errorf("line by line: got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestClaudeRejection: a tool call rejected with words keeps the words as
// the user's message; one rejected without words (or any other tool
// result) gives none.
func TestClaudeRejection(t *testing.T) {
	const (
		u1 = `{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","timestamp":"2026-02-15T00:00:01Z","message":{"role":"user","content":"tidy the imports"}}`
		a1 = `{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s","timestamp":"2026-02-15T00:00:02Z","message":{"id":"m1","role":"assistant","model":"m","content":[{"type":"tool_use","id":"t1","name":"Edit","input":{}}]}}`
		r1 = `{"type":"user","uuid":"r1","parentUuid":"a1","sessionId":"s","timestamp":"2026-02-15T00:00:03Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":"The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). To tell you how to proceed, the user said:\nkeep the blank line between groups"}]}}`
		a2 = `{"type":"assistant","uuid":"a2","parentUuid":"r1","sessionId":"s","timestamp":"2026-02-15T00:00:04Z","message":{"id":"m2","role":"assistant","model":"m","content":[{"type":"tool_use","id":"t2","name":"Edit","input":{}}]}}`
		r2 = `{"type":"user","uuid":"r2","parentUuid":"a2","sessionId":"s","timestamp":"2026-02-15T00:00:05Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","is_error":true,"content":"The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed."}]}}`
	)
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join([]string{u1, a1, r1, a2, r2}, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCollector()
	res := read(t, Source{Kind: ClaudeCode}, path, Cursor{}, Options{}, c)
	want := []string{"user: tidy the imports", "user: keep the blank line between groups"}
	if got := texts(c.messages()); !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if res.Coverage.LeftOut[ToolResult] != 1 || res.Coverage.Indexed != 2 {
		t.Errorf("coverage %+v: want the wordless rejection counted as a tool result, two lines indexed", res.Coverage)
	}
}
