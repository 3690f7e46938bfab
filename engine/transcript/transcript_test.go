package transcript

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// collector gathers what a Handler receives, applying Reset and same-id
// replacement the way an index would.
type collector struct {
	order  []string
	byID   map[string]Message
	resets int
	got    []Message // every Message call, in order
	// lastReadStarted is len(got) when the current Read began.
	lastReadStarted int
}

func newCollector() *collector { return &collector{byID: map[string]Message{}} }

func (c *collector) handler() Handler {
	return Handler{
		Reset: func() error {
			if c.lastReadStarted < len(c.got) {
				return errResetAfterMessage
			}
			c.resets++
			c.order, c.byID = nil, map[string]Message{}
			return nil
		},
		Message: func(m Message) error {
			c.got = append(c.got, m)
			if _, ok := c.byID[m.ID]; !ok {
				c.order = append(c.order, m.ID)
			}
			c.byID[m.ID] = m
			return nil
		},
	}
}

// messages is the collection in delivery order.
func (c *collector) messages() []Message {
	out := make([]Message, 0, len(c.order))
	for _, id := range c.order {
		out = append(out, c.byID[id])
	}
	return out
}

var errResetAfterMessage = &resetOrderError{}

type resetOrderError struct{}

func (*resetOrderError) Error() string { return "Reset called after a Message of the same Read" }

// read runs one Read and fails the test on error.
func read(t *testing.T, src Source, path string, cur Cursor, opt Options, c *collector) Result {
	t.Helper()
	c.lastReadStarted = len(c.got)
	res, err := Read(context.Background(), src, path, cur, opt, c.handler())
	if err != nil {
		t.Fatalf("Read %s: %v", path, err)
	}
	// The cursor must survive a JSON round trip (the caller stores it).
	b, err := json.Marshal(res.Cursor)
	if err != nil {
		t.Fatal(err)
	}
	var back Cursor
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	res.Cursor = back
	return res
}

func fixture(t *testing.T, rel string) string {
	t.Helper()
	p := filepath.Join("testdata", filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func texts(ms []Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Role+": "+m.Text)
	}
	return out
}

const (
	claudeFixture   = "claude/projects/-home-dev-orchard/5d1c7a0e-3b52-4c1e-9a77-0f3e2b6d8c41.jsonl"
	codexFixture    = "codex/sessions/2026/03/03/rollout-2026-03-03T08-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl"
	geminiHash      = "108c7ce6249f9ed669ddf89d9fb2149111c01673d5df630aed6f95165f05667c"
	geminiFixture   = "gemini/tmp/" + geminiHash + "/chats/session-2026-03-04T12-00-7e2f0c1a.json"
	geminiJSONL     = "gemini/tmp/" + geminiHash + "/chats/session-2026-03-06T10-00-9a8b7c6d.jsonl"
	codexRollback   = "codex/sessions/2026/03/11/rollout-2026-03-11T08-00-00-0199b2c3-d4e5-7f60-8a9b-1c2d3e4f5a6b.jsonl"
	codexOld        = "codex/sessions/2025/05/07/rollout-2025-05-07T17-24-21-5e0a1b2c-3d4e-4f50-8a6b-7c8d9e0f1a2b.jsonl"
	openclawFixture = "openclaw/agents/main/sessions/3f9d2c1b-8e7a-4b6c-9d5e-1a2b3c4d5e6f.jsonl"
	caFixture       = "codearchitect/sessions/2026-03-08/retry-budget-for-billing"
	jsonlFixture    = "jsonl/exports/kiln-session.jsonl"
)

// trapWords appear in the fixtures only inside what must not be indexed.
var trapWords = []string{"quarrystone", "lindenmoor", "thinking", "Caveat", "command-name", "system-reminder", "environment_context", "AGENTS.md"}

func TestReadFixtures(t *testing.T) {
	tests := []struct {
		name      string
		kind      Kind
		path      string
		opt       Options
		want      []string
		ids       []string
		session   Session
		malformed int
		ignored   int
	}{
		{
			name: "claude code: active branch, replies merged by message.id, noise left out",
			kind: ClaudeCode, path: claudeFixture,
			want: []string{
				"user: What retry budget did we settle on for the billing client?",
				"assistant: Let me look at the config.",
				"assistant: We settled on three retries with exponential backoff, capped at 20 seconds.",
				"user: Here is the dashboard after the change\n[image]",
				"assistant: The error rate dropped after the backoff change; the key I used was [REDACTED:api-key].",
				"user: Thanks, write that down in the runbook.",
				"assistant: Done: the runbook now says three retries, 20 s cap.\n\nI also linked the dashboard.",
			},
			ids:       []string{"c-u1", "c-a1t", "c-a2", "c-u2", "c-a3", "c-u3", "c-a4"},
			session:   Session{ID: "5d1c7a0e-3b52-4c1e-9a77-0f3e2b6d8c41", Agent: ClaudeCode, Project: "/home/dev/orchard"},
			malformed: 1, ignored: 1,
		},
		{
			name: "claude code: history before a compaction stays, its summary and API errors do not",
			kind: ClaudeCode, path: "claude/projects/-home-dev-orchard/8b2e4f60-1a3c-4d5e-8f90-a1b2c3d4e5f6.jsonl",
			want: []string{
				"user: Plan the orchard sensor rollout.",
				"assistant: Start with the north rows, then the greenhouse.",
				"user: Which sensors go in the greenhouse?",
				"assistant: Humidity and CO2 sensors, one per bay.",
			},
			session: Session{ID: "8b2e4f60-1a3c-4d5e-8f90-a1b2c3d4e5f6", Agent: ClaudeCode, Project: "/home/dev/orchard"},
		},
		{
			name: "claude code subagent transcript read on its own",
			kind: ClaudeCode, path: "claude/projects/-home-dev-orchard/5d1c7a0e-3b52-4c1e-9a77-0f3e2b6d8c41/subagents/agent-a1b2c3d4.jsonl",
			opt:  Options{IncludeSubagents: true},
			want: []string{"user: Find notes mentioning lindenmoor", "assistant: Two notes mention lindenmoor."},
			ids:  []string{"s-1", "s-2"},
			// Its own id: the parent's sessionId would collide with the main transcript.
			session: Session{ID: "5d1c7a0e-3b52-4c1e-9a77-0f3e2b6d8c41/agent-a1b2c3d4", Agent: ClaudeCode, Project: "/home/dev/orchard"},
		},
		{
			name: "claude code with tools",
			kind: ClaudeCode, path: claudeFixture, opt: Options{IncludeTools: true},
			want: []string{
				"user: What retry budget did we settle on for the billing client?",
				"assistant: Let me look at the config.\n\n[tool Bash] {\"command\":\"grep -rn retry config/\"}",
				"user: config/billing.yaml:4: retries: 3",
				"assistant: We settled on three retries with exponential backoff, capped at 20 seconds.",
				"user: Here is the dashboard after the change\n[image]",
				"assistant: The error rate dropped after the backoff change; the key I used was [REDACTED:api-key].",
				"user: Thanks, write that down in the runbook.",
				"assistant: Done: the runbook now says three retries, 20 s cap.\n\nI also linked the dashboard.",
			},
			session:   Session{ID: "5d1c7a0e-3b52-4c1e-9a77-0f3e2b6d8c41", Agent: ClaudeCode, Project: "/home/dev/orchard"},
			malformed: 1, ignored: 1,
		},
		{
			name: "codex: response items once, no developer, injected context, reasoning or tools",
			kind: Codex, path: codexFixture,
			want: []string{
				"user: Why does the ledger export skip March?",
				"assistant: The export filters on the fiscal year, which starts in April.",
				"user: Use the calendar year then.\n[image]",
				"assistant: Switched the export to the calendar year.",
			},
			session:   Session{ID: "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", Agent: Codex, Project: "/home/dev/ledger"},
			malformed: 1, ignored: 1,
		},
		{
			name: "codex: an envelope-less rollout of before mid-2025; its messages take the first line's time",
			kind: Codex, path: codexOld,
			want: []string{
				"user: Why does the kiln log stop at midnight?",
				"assistant: The logger rotates at midnight and drops the last line.",
			},
			session: Session{ID: "5e0a1b2c-3d4e-4f50-8a6b-7c8d9e0f1a2b", Agent: Codex},
		},
		{
			name: "codex: a rolled-back turn is left out",
			kind: Codex, path: codexRollback,
			want: []string{
				"user: Rename the export job.",
				"assistant: Renamed it to ledger-export.",
				"user: Keep the column, rename it to region.",
				"assistant: Renamed the column to region.",
			},
			session: Session{ID: "0199b2c3-d4e5-7f60-8a9b-1c2d3e4f5a6b", Agent: Codex, Project: "/home/dev/ledger"},
		},
		{
			name: "gemini json: user and gemini content only, project from .project_root",
			kind: Gemini, path: geminiFixture,
			want: []string{
				"user: How do I rotate the harbor TLS certificate?",
				"assistant: Run the renew script, then reload nginx.",
				"user: And the staging one?",
				"assistant: Staging uses the same script with --staging.",
			},
			ids:     []string{"g-1", "g-3", "g-5", "g-6"},
			session: Session{ID: "7e2f0c1a-5b6d-4e8f-9a0b-1c2d3e4f5a6b", Agent: Gemini, Project: "/home/dev/harbor", ProjectHash: geminiHash},
		},
		{
			name: "gemini json without .project_root: project is the hash",
			kind: Gemini, path: "gemini/tmp/8e66b2c02b3d05a0fe0fd982b792b8a6eee6c191a654264a17ada4818eb3dcde/chats/session-2026-03-05T09-00-11112222.json",
			want: []string{"user: ping"},
			session: Session{ID: "11112222-3333-4444-5555-666677778888", Agent: Gemini,
				Project:     "8e66b2c02b3d05a0fe0fd982b792b8a6eee6c191a654264a17ada4818eb3dcde",
				ProjectHash: "8e66b2c02b3d05a0fe0fd982b792b8a6eee6c191a654264a17ada4818eb3dcde"},
		},
		{
			name: "gemini jsonl: last record of an id wins, $rewindTo drops, $set summary",
			kind: Gemini, path: geminiJSONL,
			want: []string{
				"user: List the open harbor tickets.",
				"assistant: There are four open tickets.",
				"user: Which one is oldest?",
				"assistant: The TLS ticket, opened in January.",
			},
			ids: []string{"j-1", "j-2", "j-5", "j-6"},
			session: Session{ID: "9a8b7c6d-1111-2222-3333-444455556666", Agent: Gemini, Project: "/home/dev/harbor",
				ProjectHash: geminiHash, Summary: "Harbor tickets triage"},
		},
		{
			name: "openclaw: active branch of the entry tree, no tools, thinking or injected messages",
			kind: OpenClaw, path: openclawFixture,
			want: []string{
				"user: Remind me what the garden irrigation schedule is.",
				"assistant: Drip lines run at 6 am on Mondays and Thursdays.",
				"user: Move Thursday to Friday.\n[image]",
				"assistant: Done: drip lines now run Mondays and Fridays.",
			},
			ids:       []string{"a0000003", "a0000006", "a0000009", "a0000012"},
			session:   Session{ID: "3f9d2c1b-8e7a-4b6c-9d5e-1a2b3c4d5e6f", Agent: OpenClaw, Project: "/home/dev/.openclaw/workspace"},
			malformed: 1, ignored: 1,
		},
		{
			name: "codearchitect: messages from the JSON block of full.md, summary from summary.md",
			kind: CodeArchitect, path: caFixture,
			want: []string{
				"user: What retry budget should the billing client use?",
				"assistant: Three attempts with exponential backoff, capped at 20 seconds.\n\n- jitter on\n- cap 20 s",
				"user: And for webhooks? My token is [REDACTED:github-pat]",
			},
			ids: []string{"m1", "m2", "m3"},
			session: Session{ID: "2026-03-08/retry-budget-for-billing", Agent: CodeArchitect,
				Summary: "Discussion about Retry budget for billing. What retry budget should the billing client use?"},
		},
		{
			name: "codearchitect legacy full.md: **ROLE:** blocks, no summary",
			kind: CodeArchitect, path: "codearchitect/sessions/2026-03-09/garden-irrigation",
			want:    []string{"user: When do the drip lines run?", "assistant: Mondays and Fridays at 6 am."},
			ids:     []string{"m1", "m2"},
			session: Session{ID: "2026-03-09/garden-irrigation", Agent: CodeArchitect},
		},
		{
			name: "generic jsonl: one session per file, agent and project from the lines",
			kind: JSONL, path: jsonlFixture,
			want: []string{
				"user: How hot does the kiln get?",
				"assistant: Cone 10, about 1300 C.",
				"user: Thanks!",
			},
			session:   Session{ID: "exp-42", Agent: "cursor", Project: "/home/dev/kiln"},
			malformed: 1, ignored: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCollector()
			path := fixture(t, tt.path)
			res := read(t, Source{Kind: tt.kind}, path, Cursor{}, tt.opt, c)
			got := c.messages()
			if !slices.Equal(texts(got), tt.want) {
				t.Errorf("messages:\n got %q\nwant %q", texts(got), tt.want)
			}
			if len(c.got) != len(got) {
				t.Errorf("%d Message calls for %d messages: duplicates", len(c.got), len(got))
			}
			if tt.ids != nil {
				var ids []string
				for _, m := range got {
					ids = append(ids, m.ID)
				}
				if !slices.Equal(ids, tt.ids) {
					t.Errorf("ids %q, want %q", ids, tt.ids)
				}
			}
			for _, m := range got {
				if m.Timestamp.IsZero() {
					t.Errorf("message %s has no timestamp", m.ID)
				}
				if !tt.opt.IncludeSubagents {
					for _, w := range trapWords {
						if strings.Contains(m.Text, w) {
							t.Errorf("message %s holds %q: %q", m.ID, w, m.Text)
						}
					}
				}
			}
			s := res.Session
			tt.session.Path = path
			s.Started, s.Ended = tt.session.Started, tt.session.Ended
			if s != tt.session {
				t.Errorf("session\n got %+v\nwant %+v", s, tt.session)
			}
			if len(got) > 0 && (!res.Session.Started.Equal(got[0].Timestamp) || res.Session.Ended.IsZero()) {
				t.Errorf("session span %v–%v, first message %v", res.Session.Started, res.Session.Ended, got[0].Timestamp)
			}
			if res.Malformed != tt.malformed || res.Ignored != tt.ignored || res.Reset {
				t.Errorf("malformed %d ignored %d reset %v, want %d %d false", res.Malformed, res.Ignored, res.Reset, tt.malformed, tt.ignored)
			}
			// Unchanged file: nothing new, same session.
			again := newCollector()
			res2 := read(t, Source{Kind: tt.kind}, path, res.Cursor, tt.opt, again)
			if len(again.got) != 0 || again.resets != 0 || res2.Session != res.Session {
				t.Errorf("second read of an unchanged file: %d messages, %d resets, session %+v", len(again.got), again.resets, res2.Session)
			}
		})
	}
}

// fileLines splits a JSONL fixture into its lines (newline kept).
func fileLines(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(b, []byte("\n"))
}

// TestAppendEverySplit writes each JSONL fixture in two steps, at every line
// boundary (and mid-line), and checks that the second read brings the index to
// exactly what one read of the whole file gives: by new messages only when
// the lines merely grew the branch, by Reset and the whole branch when they
// rewound it.
func TestAppendEverySplit(t *testing.T) {
	tests := []struct {
		kind Kind
		path string
		// resetWindow: split points (line counts) after which the second read
		// must Reset, because the first saw a branch the rest abandons.
		resetWindow []int
	}{
		{ClaudeCode, claudeFixture, []int{18, 19}},
		// Progress records hanging off a tool call: attaching beside them is
		// no rewind.
		{ClaudeCode, "claude-sidebranch.jsonl", nil},
		// Messages typed while the agent worked (Claude Code 2.1.42, real):
		// a split between a queued text and its delivery keeps it.
		{ClaudeCode, claudeQueueCut, nil},
		{Codex, codexFixture, nil},
		{Codex, codexRollback, []int{8, 9, 10, 11}},
		{Codex, codexOld, nil},
		// Any $rewindTo among appended records replays the file.
		{Gemini, geminiJSONL, []int{2, 3, 4, 5, 6, 7}},
		{OpenClaw, openclawFixture, []int{12}},
		{JSONL, jsonlFixture, nil},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			src := Source{Kind: tt.kind}
			full := newCollector()
			whole := read(t, src, fixture(t, tt.path), Cursor{}, Options{}, full).Coverage
			want := texts(full.messages())
			lines := fileLines(t, fixture(t, tt.path))
			dir := t.TempDir()
			for k := 0; k <= len(lines); k++ {
				for _, half := range []bool{false, true} {
					if half && (k == len(lines) || len(lines[k]) < 4) {
						continue
					}
					path := filepath.Join(dir, filepath.Base(tt.path))
					head := bytes.Join(lines[:k], nil)
					if half {
						head = append(slices.Clone(head), lines[k][:len(lines[k])/2]...)
					}
					if err := os.WriteFile(path, head, 0o644); err != nil {
						t.Fatal(err)
					}
					c := newCollector()
					res := read(t, src, path, Cursor{}, Options{}, c)
					if err := os.WriteFile(path, bytes.Join(lines, nil), 0o644); err != nil {
						t.Fatal(err)
					}
					before := len(c.got)
					res2 := read(t, src, path, res.Cursor, Options{}, c)
					if got := texts(c.messages()); !slices.Equal(got, want) {
						t.Errorf("split at line %d (half %v):\n got %q\nwant %q", k, half, got, want)
					}
					// The two reads' counts, added (or replaced, when the
					// second counted the whole file), are one read's.
					total := res.Coverage
					if res2.Coverage.Whole {
						total = res2.Coverage
					} else {
						total.Add(res2.Coverage)
					}
					if total.Lines != whole.Lines || total.Indexed != whole.Indexed || !maps.Equal(total.LeftOut, whole.LeftOut) {
						t.Errorf("split at line %d (half %v): coverage %+v, one read counts %+v", k, half, total, whole)
					}
					wantReset := slices.Contains(tt.resetWindow, k)
					if res2.Reset != wantReset || (c.resets > 0) != wantReset {
						t.Errorf("split at line %d (half %v): reset %v, want %v", k, half, res2.Reset, wantReset)
					}
					if !wantReset {
						// Only new messages (or a grown reply under its id) come the second time.
						for _, m := range c.got[before:] {
							for _, old := range c.got[:before] {
								if old.ID == m.ID && old.Text == m.Text {
									t.Errorf("split at line %d: message %s delivered twice unchanged", k, m.ID)
								}
							}
						}
					}
				}
			}
		})
	}
}

// TestRewriteAndTruncate checks that a file rewritten or cut short is read
// again whole after Reset, for every format.
func TestRewriteAndTruncate(t *testing.T) {
	for _, tt := range []struct {
		kind Kind
		path string
	}{{ClaudeCode, claudeFixture}, {Codex, codexFixture}, {Gemini, geminiFixture}, {Gemini, geminiJSONL},
		{OpenClaw, openclawFixture}, {JSONL, jsonlFixture}} {
		t.Run(string(tt.kind)+"/"+filepath.Ext(tt.path), func(t *testing.T) {
			src := Source{Kind: tt.kind}
			b, err := os.ReadFile(fixture(t, tt.path))
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			path := filepath.Join(dir, filepath.Base(tt.path))
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			c := newCollector()
			res := read(t, src, path, Cursor{}, Options{}, c)

			// An edit that keeps the size: the text of an early message changes.
			edited := bytes.Replace(b, []byte("the"), []byte("THE"), 1)
			if bytes.Equal(edited, b) {
				t.Fatal("fixture has no 'the' to edit")
			}
			if err := os.WriteFile(path, edited, 0o644); err != nil {
				t.Fatal(err)
			}
			want := newCollector()
			read(t, src, path, Cursor{}, Options{}, want)
			res = read(t, src, path, res.Cursor, Options{}, c)
			if !res.Reset || !slices.Equal(texts(c.messages()), texts(want.messages())) {
				t.Errorf("after an in-place edit: reset %v\n got %q\nwant %q", res.Reset, texts(c.messages()), texts(want.messages()))
			}

			// Truncation to a third (for a whole-file transcript: fewer
			// messages, as a half-written file is only torn, see TestGeminiGrowth).
			cut := edited[:len(edited)/3]
			if strings.HasSuffix(path, ".json") {
				var doc map[string]json.RawMessage
				if err := json.Unmarshal(edited, &doc); err != nil {
					t.Fatal(err)
				}
				var msgs []json.RawMessage
				if err := json.Unmarshal(doc["messages"], &msgs); err != nil {
					t.Fatal(err)
				}
				doc["messages"], _ = json.Marshal(msgs[:1])
				cut, _ = json.Marshal(doc)
			}
			if err := os.WriteFile(path, cut, 0o644); err != nil {
				t.Fatal(err)
			}
			want = newCollector()
			read(t, src, path, Cursor{}, Options{}, want)
			res = read(t, src, path, res.Cursor, Options{}, c)
			if !res.Reset || !slices.Equal(texts(c.messages()), texts(want.messages())) {
				t.Errorf("after truncation: reset %v\n got %q\nwant %q", res.Reset, texts(c.messages()), texts(want.messages()))
			}
		})
	}
}

// TestGeminiGrowth rewrites a whole-file Gemini transcript the way Gemini CLI
// does, one message more each time: only the new message is delivered.
func TestGeminiGrowth(t *testing.T) {
	var doc map[string]json.RawMessage
	b, err := os.ReadFile(fixture(t, geminiFixture))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var msgs []json.RawMessage
	if err := json.Unmarshal(doc["messages"], &msgs); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "tmp", geminiHash, "chats")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "session-x.json")
	src := Source{Kind: Gemini}
	c := newCollector()
	var cur Cursor
	for n := 1; n <= len(msgs); n++ {
		doc["messages"], _ = json.Marshal(msgs[:n])
		out, _ := json.MarshalIndent(doc, "", "  ")
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		before := len(c.got)
		res := read(t, src, path, cur, Options{}, c)
		cur = res.Cursor
		if res.Reset || len(c.got)-before > 1 {
			t.Fatalf("after message %d: reset %v, %d delivered", n, res.Reset, len(c.got)-before)
		}
	}
	if len(c.got) != 4 {
		t.Errorf("%d messages delivered in all, want 4", len(c.got))
	}
	// A torn write (half a file) is counted, delivers nothing, and the next
	// read of the whole file resumes where it was.
	out, _ := json.Marshal(doc)
	if err := os.WriteFile(path, out[:len(out)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	before := len(c.got)
	res := read(t, src, path, cur, Options{}, c)
	if res.Malformed != 1 || len(c.got) != before || res.Reset {
		t.Errorf("torn file: malformed %d, %d delivered, reset %v", res.Malformed, len(c.got)-before, res.Reset)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	res = read(t, src, path, res.Cursor, Options{}, c)
	if res.Reset || len(c.got) != before {
		t.Errorf("whole file again: reset %v, %d delivered", res.Reset, len(c.got)-before)
	}
	// Reads that delivered nothing new must not forget that messages were
	// delivered: a rewrite after them still Resets.
	if err := os.WriteFile(path, bytes.Replace(out, []byte("rotate"), []byte("renew"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	res = read(t, src, path, res.Cursor, Options{}, c)
	if !res.Reset || len(c.messages()) != 4 || !strings.Contains(c.messages()[0].Text, "renew") {
		t.Errorf("rewrite after quiet reads: reset %v, messages %q", res.Reset, texts(c.messages()))
	}
}

// TestLongLineSkipped checks that a line over MaxLineBytes is skipped and
// counted without stopping the read.
func TestLongLineSkipped(t *testing.T) {
	lines := fileLines(t, fixture(t, codexFixture))
	long := append([]byte(`{"timestamp":"2026-03-03T08:00:06.500Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"`),
		bytes.Repeat([]byte("a"), 1<<20)...)
	long = append(long, []byte("\"}]}}\n")...)
	var all []byte
	for i, l := range lines {
		all = append(all, l...)
		if i == 12 {
			all = append(all, long...)
		}
	}
	path := filepath.Join(t.TempDir(), "rollout-x.jsonl")
	if err := os.WriteFile(path, all, 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCollector()
	res := read(t, Source{Kind: Codex}, path, Cursor{}, Options{MaxLineBytes: 1 << 20}, c)
	if res.TooLong != 1 || len(c.got) != 4 {
		t.Errorf("too long %d, %d messages; want 1 and 4", res.TooLong, len(c.got))
	}
	if cv := res.Coverage; cv.LeftOut[TooLong] != 1 || !cv.Balanced() || cv.Lines != nonBlankLines(t, path) {
		t.Errorf("coverage %+v: want one too-long line among %d", cv, nonBlankLines(t, path))
	}
}

// TestCodeArchitectRewrite stores a conversation, then stores it again with a
// message more, then with an earlier message changed, then changes only the
// summary: growth delivers the new message, a change Resets, a summary change
// delivers nothing but shows in the session.
func TestCodeArchitectRewrite(t *testing.T) {
	src := Source{Kind: CodeArchitect}
	b, err := os.ReadFile(filepath.Join(fixture(t, caFixture), "full.md"))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(fixture(t, caFixture), "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "2026-03-08", "topic")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Two messages first: drop the third from the JSON block.
	i := bytes.Index(b, []byte(",\n  {\n    \"role\": \"user\",\n    \"content\": \"And for webhooks?"))
	j := bytes.Index(b, []byte("\n]\n```"))
	if i < 0 || j < 0 {
		t.Fatal("fixture layout changed")
	}
	two := append(slices.Clone(b[:i]), b[j:]...)
	write("full.md", two)
	write("summary.md", sum)
	c := newCollector()
	res := read(t, src, dir, Cursor{}, Options{}, c)
	if len(c.got) != 2 {
		t.Fatalf("%d messages, want 2", len(c.got))
	}
	write("full.md", b)
	res = read(t, src, dir, res.Cursor, Options{}, c)
	if res.Reset || len(c.got) != 3 || c.got[2].ID != "m3" {
		t.Errorf("growth: reset %v, %d messages", res.Reset, len(c.got))
	}
	write("full.md", bytes.Replace(b, []byte("Three attempts"), []byte("Four attempts"), 1))
	res = read(t, src, dir, res.Cursor, Options{}, c)
	if !res.Reset || len(c.messages()) != 3 || !strings.HasPrefix(c.messages()[1].Text, "Four") {
		t.Errorf("change: reset %v, messages %q", res.Reset, texts(c.messages()))
	}
	before := len(c.got)
	write("summary.md", bytes.Replace(sum, []byte("Discussion about"), []byte("Talk about"), 1))
	res = read(t, src, dir, res.Cursor, Options{}, c)
	if res.Reset || len(c.got) != before || !strings.HasPrefix(res.Session.Summary, "Talk about") {
		t.Errorf("summary change: reset %v, %d new messages, summary %q", res.Reset, len(c.got)-before, res.Session.Summary)
	}
}
