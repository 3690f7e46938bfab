package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mnemo/engine"
	"mnemo/engine/admit"
	"mnemo/engine/sessions"
	"mnemo/engine/transcript"
	"mnemo/mcp"
)

const testSession = "0d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d"

// newSessions indexes one Claude Code transcript of four messages in a
// temporary folder and returns the open sessions index.
func newSessions(t testing.TB) *sessions.Corpus {
	t.Helper()
	return newGatedSessions(t, nil)
}

// newGatedSessions is newSessions whose searches pass g.
func newGatedSessions(t testing.TB, g *admit.Gate) *sessions.Corpus {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "projects", "-home-dev-ledger", testSession+".jsonl")
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	texts := []string{
		"What retry budget should the ledger uploader use?",
		"The retry budget is five attempts with exponential backoff.",
		"And the timeout per attempt?",
		"Thirty seconds per attempt.",
	}
	var b strings.Builder
	parent := any(nil)
	for i, txt := range texts {
		role := []string{"user", "assistant"}[i%2]
		uuid := "m" + string(rune('1'+i))
		msg := map[string]any{"role": role, "content": txt}
		if role == "assistant" {
			msg = map[string]any{"id": "msg_" + uuid, "role": role, "content": []any{map[string]any{"type": "text", "text": txt}}}
		}
		line, _ := json.Marshal(map[string]any{"type": role, "uuid": uuid, "parentUuid": parent, "sessionId": testSession,
			"cwd": "/home/dev/ledger", "timestamp": time.Date(2025, 6, 1, 9, i, 0, 0, time.UTC).Format(time.RFC3339), "message": msg})
		b.Write(append(line, '\n'))
		parent = uuid
	}
	must(t, os.WriteFile(path, []byte(b.String()), 0o644))
	src := sessions.TranscriptSource(transcript.Source{Kind: transcript.ClaudeCode, Root: filepath.Join(dir, "projects")}, transcript.Options{})
	s, err := sessions.Open(context.Background(), sessions.Config{IndexDir: filepath.Join(dir, "index"), Sources: []sessions.Source{src}, Admit: g})
	must(t, err)
	t.Cleanup(func() { s.Close() })
	_, err = s.Sync(context.Background(), false)
	must(t, err)
	return s
}

// TestSearchSessionsAliases: the peers' spellings mean what ours do.
func TestSearchSessionsAliases(t *testing.T) {
	day := func(s string, end bool) time.Time {
		d, _ := time.Parse(time.DateOnly, s)
		if end {
			d = d.Add(24*time.Hour - time.Nanosecond)
		}
		return d
	}
	tests := []struct {
		name string
		args string
		want sessions.Query
	}{
		{"defaults", `{"query":"retry"}`, sessions.Query{Text: "retry", Mode: engine.Hybrid, Sort: engine.ByRelevance, Limit: 10, MaxHits: 3}},
		{"pond", `{"query":"retry","session_id":"s1","source_agent":"Codex","from_date":"2025-06-01","to_date":"2025-06-02","sort_by":"recency","mode":"fts"}`,
			sessions.Query{Text: "retry", Mode: engine.FullText, SessionID: "s1", Agent: "codex", From: day("2025-06-01", false), To: day("2025-06-02", true), Sort: engine.ByRecency, Limit: 10, MaxHits: 3}},
		{"pond vector", `{"query":"retry","mode":"vector"}`, sessions.Query{Text: "retry", Mode: engine.Semantic, Sort: engine.ByRelevance, Limit: 10, MaxHits: 3}},
		{"codearchitect date", `{"query":"retry","date":"2025-06-01"}`, sessions.Query{Text: "retry", Mode: engine.Hybrid, From: day("2025-06-01", false), To: day("2025-06-01", true), Sort: engine.ByRelevance, Limit: 10, MaxHits: 3}},
		{"codearchitect range", `{"query":"retry","dateFrom":"2025-06-01","dateTo":"2025-06-03","limit":5,"maxHits":20}`,
			sessions.Query{Text: "retry", Mode: engine.Hybrid, From: day("2025-06-01", false), To: day("2025-06-03", true), Sort: engine.ByRelevance, Limit: 5, MaxHits: 20}},
		{"same value twice", `{"query":"retry","sessionId":"s1","session_id":"s1"}`, sessions.Query{Text: "retry", Mode: engine.Hybrid, SessionID: "s1", Sort: engine.ByRelevance, Limit: 10, MaxHits: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mcp.ParseSearchSessions(json.RawMessage(tt.args))
			if err != nil {
				t.Fatal(err)
			}
			if g, w := mustJSON(t, got), mustJSON(t, tt.want); g != w {
				t.Errorf("got  %s\nwant %s", g, w)
			}
		})
	}
	for _, bad := range []string{
		`{"query":"retry","sessionId":"a","session_id":"b"}`,
		`{"query":"retry","date":"2025-06-01","from":"2025-05-01"}`,
		`{"query":"retry","mode":"fuzzy"}`,
		`{"query":"retry","limit":0}`,
		`{"query":"retry","maxHits":21}`,
		`{"query":"retry","role":"system"}`,
		`{"query":"retry","from":"2025-06-02","to":"2025-06-01"}`,
		`{"query":"retry","sessionid":"x"}`,
		`{}`,
	} {
		if _, err := mcp.ParseSearchSessions(json.RawMessage(bad)); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	must(t, err)
	return string(b)
}

type sessionsPage struct {
	Query         string
	TotalSessions int
	Truncated     bool
	Note          string
	Sessions      []struct {
		SessionID, SourceAgent, Project string
		MessageCount                    int
		Score                           float64
		Hits                            []struct {
			MessageID, Role, Excerpt string
			Score                    float64
			MatchCount               int
		}
	}
}

type sessionView struct {
	SessionID    string
	MessageCount int
	Offset       int
	Focus        int
	Truncated    bool
	Messages     []struct{ MessageID, Role, Text string }
}

func TestSessionTools(t *testing.T) {
	e := newEnv(t, true, nil, mcp.Options{Sessions: newSessions(t)})
	p := ok[sessionsPage](e, "SearchSessions", map[string]any{"query": "retry budget", "project": "/home/dev/ledger", "mode": "fulltext"})
	if p.TotalSessions != 1 || len(p.Sessions) != 1 || len(p.Sessions[0].Hits) != 2 {
		t.Fatalf("SearchSessions = %+v", p)
	}
	s := p.Sessions[0]
	if s.SessionID != testSession || s.SourceAgent != "claude-code" || s.MessageCount != 4 || s.Score != 1 ||
		!strings.Contains(s.Hits[0].Excerpt, "**retry** **budget**") || s.Hits[0].MatchCount != 2 {
		t.Errorf("session %+v", s)
	}
	if p := ok[sessionsPage](e, "SearchSessions", map[string]any{"query": "retry", "project": "/elsewhere"}); len(p.Sessions) != 0 {
		t.Errorf("project filter: %+v", p)
	}
	if p := ok[sessionsPage](e, "SearchSessions", map[string]any{"query": "retry", "role": "assistant", "maxHits": 5, "mode": "fts"}); len(p.Sessions) != 1 || len(p.Sessions[0].Hits) != 1 || p.Sessions[0].Hits[0].Role != "assistant" {
		t.Errorf("role filter: %+v", p)
	}
	v := ok[sessionView](e, "GetSession", map[string]any{"session_id": testSession, "offset": 1, "limit": 2})
	if v.MessageCount != 4 || len(v.Messages) != 2 || v.Offset != 1 || v.Messages[0].Text != "The retry budget is five attempts with exponential backoff." {
		t.Errorf("GetSession = %+v", v)
	}
	id := s.Hits[0].MessageID
	m := ok[sessionView](e, "GetMessage", map[string]any{"sessionId": testSession, "messageId": id, "context": 1})
	if len(m.Messages) < 2 || m.Messages[m.Focus].MessageID != id {
		t.Errorf("GetMessage = %+v", m)
	}
	// One bound on GetSession's limit: the engine's, as the schema declares it.
	if v := ok[sessionView](e, "GetSession", map[string]any{"sessionId": testSession, "limit": sessions.MaxMessages}); len(v.Messages) != 4 {
		t.Errorf("GetSession limit %d: %d messages", sessions.MaxMessages, len(v.Messages))
	}
	if msg := e.fails("GetSession", map[string]any{"sessionId": testSession, "limit": sessions.MaxMessages + 1}); !strings.Contains(msg, "limit") {
		t.Errorf("GetSession over the limit: %q", msg)
	}
	tools, err := e.cs.ListTools(context.Background(), nil)
	must(t, err)
	for _, tl := range tools.Tools {
		if tl.Name == "GetSession" {
			b, _ := json.Marshal(tl.InputSchema)
			if want := fmt.Sprintf(`"maximum":%d`, sessions.MaxMessages); !strings.Contains(string(b), want) {
				t.Errorf("GetSession schema %s lacks %s", b, want)
			}
		}
	}
	// A response cap cuts sessions' messages and says so.
	small := newEnv(t, true, nil, mcp.Options{Sessions: newSessions(t), MaxResponseBytes: 1200})
	if v := ok[sessionView](small, "GetSession", map[string]any{"sessionId": testSession}); !v.Truncated || len(v.Messages) >= 4 {
		t.Errorf("capped GetSession = %+v", v)
	}
}

// TestSessionSearchesShareTheGate: SearchSessions waits at the gate the
// process gives the sessions corpus (the memory corpus's too): with its
// only turn taken, it answers busy; with the turn free, it answers.
func TestSessionSearchesShareTheGate(t *testing.T) {
	g := admit.New(1, 10*time.Millisecond)
	e := newEnv(t, true, nil, mcp.Options{Sessions: newGatedSessions(t, g)})
	leave, err := g.Enter(context.Background())
	must(t, err)
	msg := e.fails("SearchSessions", map[string]any{"query": "retry budget"})
	leave()
	if !strings.HasPrefix(msg, "server busy: 1 searches running") {
		t.Errorf("SearchSessions with the gate full: %q, want server busy", msg)
	}
	if res := e.call("SearchSessions", map[string]any{"query": "retry budget"}); res.IsError {
		t.Errorf("SearchSessions with the gate free: %q", text(res))
	}
}
