package mcp_test

import (
	"strings"
	"testing"

	"mnemo/engine/sessions"
	"mnemo/mcp"
)

func TestSessionsStatusTool(t *testing.T) {
	e := newEnv(t, true, nil, mcp.Options{Sessions: newSessions(t)})
	st := ok[sessions.Status](e, "SessionsStatus", map[string]any{})
	if st.Sessions != 1 || st.Messages != 4 || len(st.Sources) != 1 {
		t.Fatalf("SessionsStatus = %+v", st)
	}
	c := st.Sources[0].Coverage
	if c.Lines != 4 || c.Indexed != 4 || !c.Balanced() || st.Coverage.Lines != 4 {
		t.Errorf("coverage %+v (total %+v), want the fixture's 4 lines, all indexed", c, st.Coverage)
	}
	if msg := e.fails("SessionsStatus", map[string]any{"verbose": true}); !strings.Contains(msg, "verbose") {
		t.Errorf("unknown argument: %q", msg)
	}
}

func TestListAndForgetSessionsTools(t *testing.T) {
	e := newEnv(t, true, nil, mcp.Options{Sessions: newSessions(t)})
	l := ok[sessions.Listing](e, "ListSessions", map[string]any{})
	if l.TotalCount != 1 || l.Page != 1 || l.PageSize != 10 || len(l.Sessions) != 1 {
		t.Fatalf("ListSessions = %+v", l)
	}
	x := l.Sessions[0]
	if x.SessionID != testSession || x.Title != "What retry budget should the ledger uploader use?" || x.MessageCount != 4 || x.Project != "/home/dev/ledger" || x.Archived {
		t.Errorf("listed %+v", x)
	}
	for _, args := range []map[string]any{{"project": "/elsewhere"}, {"archived": true}, {"from": "2025-06-02"}, {"source_agent": "codex"}, {"page": 2}} {
		if l := ok[sessions.Listing](e, "ListSessions", args); len(l.Sessions) != 0 {
			t.Errorf("ListSessions %v = %+v, want none", args, l)
		}
	}
	for _, args := range []map[string]any{{"pageSize": 0}, {"pageSize": 201}, {"query": "x"}, {"from": "yesterday"}} {
		e.fails("ListSessions", args)
	}
	if msg := e.fails("SearchSessions", map[string]any{"query": "*"}); !strings.Contains(msg, "ListSessions") {
		t.Errorf(`SearchSessions "*": %q, want a pointer to ListSessions`, msg)
	}
	if msg := e.fails("ForgetSessions", map[string]any{}); !strings.Contains(msg, "name the sessions") {
		t.Errorf("ForgetSessions of nothing: %q", msg)
	}
	if msg := e.fails("ForgetSessions", map[string]any{"sessionIds": []string{"nope"}}); !strings.Contains(msg, "not found") {
		t.Errorf("ForgetSessions of an unknown id: %q", msg)
	}
	e.fails("ForgetSessions", map[string]any{"sessionIds": []string{testSession}, "project": "ledger"})
	r := ok[sessions.ForgetReport](e, "ForgetSessions", map[string]any{"sessionIds": []string{testSession}})
	if len(r.Sessions) != 1 || r.Messages != 4 || !r.Sessions[0].TranscriptKept {
		t.Errorf("ForgetSessions = %+v", r)
	}
	if l := ok[sessions.Listing](e, "ListSessions", map[string]any{}); l.TotalCount != 0 {
		t.Errorf("after the forget: %+v", l)
	}
	e.fails("GetSession", map[string]any{"sessionId": testSession})
}
