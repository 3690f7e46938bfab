package mcp_test

import (
	"strings"
	"testing"

	"mnemo/engine"
	"mnemo/mcp"
)

func TestSessionsStatusTool(t *testing.T) {
	e := newEnv(t, true, nil, mcp.Options{Sessions: newSessions(t)})
	st := ok[engine.SessionsStatus](e, "SessionsStatus", map[string]any{})
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
