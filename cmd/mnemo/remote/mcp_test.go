package remote_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"mnemo/cmd/mnemo/remote"
	"mnemo/engine"
	"mnemo/mcp"
)

// clock0 is the clock of both engines of TestMCPOverClient, so that the
// dates a write stamps, the read times and the decay agree between them.
var clock0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// newVault writes a copy of memories under root, with a modified date in
// each file so that no answer depends on when the copy was made.
func newVault(t *testing.T, root string) (mem, index string) {
	t.Helper()
	mem, index = filepath.Join(root, "memory"), filepath.Join(root, "index")
	for p, body := range memories {
		writeFile(t, filepath.Join(mem, p), "---\nmodified: 2020-03-01\n"+strings.TrimPrefix(body, "---\n"))
	}
	return mem, index
}

// openEngine opens an engine on mem with the fixed clock and syncs it
// (unless readOnly); it is closed when the test ends.
func openEngine(t *testing.T, mem, index string, readOnly bool) *engine.Engine {
	t.Helper()
	e, err := engine.Open(context.Background(), engine.Config{MemoryDir: mem, IndexDir: index, ReadOnly: readOnly,
		Clock: func() time.Time { return clock0 }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if !readOnly {
		if _, err := e.Sync(context.Background(), false); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// serveClient serves e on a socket in index and dials it.
func serveClient(t *testing.T, index string, e engine.Memories) *remote.Client {
	t.Helper()
	ln, err := remote.Listen(index)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- remote.Serve(ctx, ln, e) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	c, err := remote.Dial(index)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func mcpSession(t *testing.T, m engine.Memories) *sdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := mcp.NewServer(m, mcp.Options{}).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

// TestMCPOverClient: the MCP tools served over a socket client answer
// exactly as the same tools over the engine itself, call for call, on two
// copies of one memory folder: results, refusals and their messages.
func TestMCPOverClient(t *testing.T) {
	mem1, idx1 := newVault(t, t.TempDir())
	direct := openEngine(t, mem1, idx1, false)
	mem2, idx2 := newVault(t, t.TempDir())
	served := openEngine(t, mem2, idx2, false)
	sessions := map[string]*sdk.ClientSession{
		"engine": mcpSession(t, direct),
		"client": mcpSession(t, serveClient(t, idx2, served)),
	}
	ctx := context.Background()

	// checksum is the one ReadMemory last returned (the same on both
	// sides, or the comparison has already failed).
	var checksum string
	steps := []struct {
		tool string
		args func() map[string]any
	}{
		{"SearchMemories", func() map[string]any { return map[string]any{"query": "bbolt"} }},
		{"SearchMemories", func() map[string]any {
			return map[string]any{"query": "key value store", "mode": "FullText", "from": "2019-12-01", "tags": "db"}
		}},
		{"ReadMemory", func() map[string]any {
			return map[string]any{"identifier": "decisions/use-bbolt", "includeChecksum": true}
		}},
		{"EditMemory", func() map[string]any {
			return map[string]any{"identifier": "decisions/use-bbolt", "operation": "append", "content": "Checked again in 2025.", "checksum": checksum}
		}},
		{"EditMemory", func() map[string]any { // the checksum is stale now
			return map[string]any{"identifier": "decisions/use-bbolt", "operation": "append", "content": "again", "checksum": checksum}
		}},
		{"EditMemory", func() map[string]any {
			return map[string]any{"identifier": "howto/restart", "operation": "find_replace", "find": "no such text", "content": "x"}
		}},
		{"WriteMemory", func() map[string]any {
			return map[string]any{"title": "Socket protocol", "content": "JSON lines over [[unix sockets]].", "folder": "notes", "tags": []string{"IPC"}}
		}},
		{"WriteMemory", func() map[string]any {
			return map[string]any{"title": "Why sockets", "content": "Thinking about it.", "folder": "thinking"}
		}},
		// The filter runs where the tool does: through the client it needs
		// more than the first memory of the server's list.
		{"RecentActivity", func() map[string]any { return map[string]any{"filter": "thinking", "limit": 1} }},
		{"RecentActivity", func() map[string]any { return map[string]any{"filter": "assumptions"} }},
		{"RecentActivity", func() map[string]any { return map[string]any{"timespan": "-3d"} }},
		{"WriteMemory", func() map[string]any { // exists
			return map[string]any{"title": "Socket protocol", "content": "again", "folder": "notes"}
		}},
		{"WriteMemory", func() map[string]any { return map[string]any{"title": "", "content": "no title"} }},
		{"ReadMemory", func() map[string]any { return map[string]any{"identifier": "memory://notes/socket-protocol"} }},
		{"ReadMemory", func() map[string]any { return map[string]any{"identifier": "../etc/passwd"} }},
		{"SearchMemories", func() map[string]any { return map[string]any{"query": "unix sockets"} }},
		{"ListMemories", func() map[string]any { return map[string]any{} }},
		{"ListMemories", func() map[string]any { return map[string]any{"folder": "notes"} }},
		{"RecentActivity", func() map[string]any { return map[string]any{"limit": 2, "includeContent": true} }},
		{"RecentActivity", func() map[string]any { return map[string]any{"filter": "memory", "limit": 3} }},
		{"MoveMemory", func() map[string]any {
			return map[string]any{"identifier": "notes/socket-protocol", "destination": "decisions/"}
		}},
		{"MoveMemory", func() map[string]any {
			return map[string]any{"identifier": "people/ana", "destination": "decisions/use-bbolt.md"}
		}},
		{"DeleteMemory", func() map[string]any { return map[string]any{"identifier": "howto/restart", "confirm": true} }},
		{"DeleteMemory", func() map[string]any { return map[string]any{"identifier": "howto/restart", "confirm": true} }},
		{"ListMemories", func() map[string]any { return map[string]any{"folder": "decisions"} }},
		{"SearchMemories", func() map[string]any { return map[string]any{"query": "restart SIGTERM", "mode": "FullText"} }},
	}
	for i, st := range steps {
		args := st.args()
		got := map[string]string{}
		var readSum string
		for name, cs := range sessions {
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: st.tool, Arguments: args})
			if err != nil {
				t.Fatalf("step %d %s over %s: %v", i, st.tool, name, err)
			}
			b, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			got[name] = string(b)
			var out struct {
				Checksum string `json:"checksum"`
			}
			if b, _ := json.Marshal(res.StructuredContent); json.Unmarshal(b, &out) == nil {
				readSum = out.Checksum
			}
		}
		if got["engine"] != got["client"] {
			t.Fatalf("step %d %s(%v):\nover the engine %s\nover the client %s", i, st.tool, args, got["engine"], got["client"])
		}
		if st.tool == "ReadMemory" && readSum != "" {
			checksum = readSum
		}
	}
}

// TestClientErrorsKeepSentinels: what the engine refuses, the client
// refuses with an error that errors.Is matches to the same sentinel.
func TestClientErrorsKeepSentinels(t *testing.T) {
	mem, idx := newVault(t, t.TempDir())
	c := serveClient(t, idx, openEngine(t, mem, idx, false))
	ctx := context.Background()
	m, err := c.Read(ctx, "decisions/use-bbolt")
	if err != nil {
		t.Fatal(err)
	}
	_, errExists := c.Write(ctx, engine.WriteRequest{Title: "Use bbolt", Content: "x", Folder: "decisions"})
	_, errInvalid := c.Write(ctx, engine.WriteRequest{Title: "", Content: "x"})
	_, errOutside := c.Write(ctx, engine.WriteRequest{Title: "t", Content: "x", Folder: "../out"})
	if _, err := c.Edit(ctx, engine.EditRequest{ID: m.Path, Op: engine.Append, Content: "more", Checksum: m.Checksum}); err != nil {
		t.Fatal(err)
	}
	_, errConflict := c.Edit(ctx, engine.EditRequest{ID: m.Path, Op: engine.Append, Content: "more", Checksum: m.Checksum})
	_, errNoMatch := c.Edit(ctx, engine.EditRequest{ID: m.Path, Op: engine.FindReplace, Find: "absent", Content: "x"})
	errNotFound := c.Delete(ctx, "no/such")
	_, errMoveExists := c.Move(ctx, "people/ana", "decisions/use-bbolt.md")
	_, errRecent := c.RecentWhere(ctx, -1, 0, nil)
	_, errPeek := c.Peek(ctx, "no/such")
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"write over a title", errExists, engine.ErrExists},
		{"write without a title", errInvalid, engine.ErrInvalid},
		{"write outside", errOutside, engine.ErrOutsideRoot},
		{"stale edit", errConflict, engine.ErrConflict},
		{"edit of absent text", errNoMatch, engine.ErrNoMatch},
		{"delete of nothing", errNotFound, engine.ErrNotFound},
		{"move onto a memory", errMoveExists, engine.ErrExists},
		{"recent -1", errRecent, engine.ErrInvalid},
		{"peek of nothing", errPeek, engine.ErrNotFound},
	} {
		var re *remote.Error
		if !errors.Is(tc.err, tc.want) || !errors.As(tc.err, &re) {
			t.Errorf("%s: %v, want a remote.Error that is %v", tc.name, tc.err, tc.want)
		}
	}

	// A serve of a read-only engine refuses every write as the engine does.
	mem2, idx2 := newVault(t, t.TempDir())
	openEngine(t, mem2, idx2, false).Close()
	ro := serveClient(t, idx2, openEngine(t, mem2, idx2, true))
	if _, err := ro.Write(ctx, engine.WriteRequest{Title: "t", Content: "x"}); !errors.Is(err, engine.ErrReadOnly) {
		t.Errorf("write to a read-only serve: %v, want ErrReadOnly", err)
	}
	if err := ro.Delete(ctx, "people/ana"); !errors.Is(err, engine.ErrReadOnly) {
		t.Errorf("delete on a read-only serve: %v, want ErrReadOnly", err)
	}
}
