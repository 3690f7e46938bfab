package main

import (
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioServe is a `mnemo serve` child spoken to over stdio, as an agent
// starts one, with its stderr lines collected.
type stdioServe struct {
	t   *testing.T
	cs  *sdk.ClientSession
	cmd *exec.Cmd
	log *childLog
}

func startStdioServe(t *testing.T, bin string, args ...string) *stdioServe {
	t.Helper()
	s := &stdioServe{t: t, cmd: exec.Command(bin, args...), log: newChildLog()}
	pr, pw := io.Pipe()
	s.cmd.Stderr = pw
	go s.log.collect(pr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "v0"}, nil).
		Connect(ctx, &sdk.CommandTransport{Command: s.cmd, TerminateDuration: hangUpGrace}, nil)
	if err != nil {
		t.Fatalf("connect to mnemo serve: %v\n%s", err, s.log)
	}
	s.cs = cs
	t.Cleanup(func() {
		cs.Close()
		if s.cmd.ProcessState == nil {
			s.cmd.Process.Kill()
		}
		pw.Close()
	})
	return s
}

// waitLog waits, up to 30 s, for a stderr line matching re.
func (s *stdioServe) waitLog(re string) {
	s.t.Helper()
	rx := regexp.MustCompile(re)
	if !s.log.waitFor(30*time.Second, func(lines []string) bool { return slices.ContainsFunc(lines, rx.MatchString) }) {
		s.t.Fatalf("no log line matching %s in:\n%s", re, s.log)
	}
}

// call calls a tool; a protocol error fails the test, a tool error is
// returned as the result.
func (s *stdioServe) call(name string, args map[string]any, out any) *sdk.CallToolResult {
	s.t.Helper()
	res, err := s.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		s.t.Fatalf("%s: %v\n%s", name, err, s.log)
	}
	if out != nil && !res.IsError {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			s.t.Fatalf("%s: %v", name, err)
		}
	}
	return res
}

func (s *stdioServe) toolNames() []string {
	s.t.Helper()
	res, err := s.cs.ListTools(context.Background(), nil)
	if err != nil {
		s.t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

type sharePage struct {
	Results []struct{ URI, Title string }
}

// everyToolArgs are arguments each tool answers without error on the test
// vault (WriteMemory and the session tools are called apart).
var everyToolArgs = map[string]map[string]any{
	"SearchMemories":          {"query": "bbolt"},
	"ReadMemory":              {"identifier": "decisions/adr-001-bbolt-over-sqlite.md"},
	"ListMemories":            {},
	"RecentActivity":          {},
	"Sync":                    {},
	"MemoryStatus":            {},
	"GetConfig":               {},
	"BuildContext":            {"conceptName": "bbolt", "depth": 1},
	"Visualize":               {"conceptName": "bbolt"},
	"FindSimilarConcepts":     {"conceptName": "bbolt"},
	"ExtractConceptsFromFile": {"identifier": "decisions/adr-001-bbolt-over-sqlite.md"},
	"SearchSessions":          {"query": "kumquat"},
}

// sameAnswer are the tools whose answer does not change with the reads
// the calls record: holder and front end must give the same one.
var sameAnswer = map[string]bool{"BuildContext": true, "Visualize": true, "FindSimilarConcepts": true, "ExtractConceptsFromFile": true, "ListMemories": true}

// TestServesShareARoot starts two stdio serves on one root, as two agents
// would: both answer every tool, the second by forwarding to the first; a
// write through one is found at once through the other. Then the holder
// is killed: the other takes the index over, answers within 2 s and sees
// a file written to disk meanwhile; a third serve started then attaches.
func TestServesShareARoot(t *testing.T) {
	t.Parallel() // waits on mnemo processes
	if testing.Short() {
		t.Skip("runs the mnemo binary; skipped with -short")
	}
	bin := mnemoBinary(t)
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	memory := filepath.Join(root, "memory")
	copyTree(t, "../../testdata/vault", memory)
	projects := filepath.Join(dir, "claude", "projects")
	const session = "5f0c1d2e-3b4a-4c5d-8e9f-0a1b2c3d4e5f"
	write(t, filepath.Join(projects, "-home-dev-ledger", session+".jsonl"),
		claudeLine("user", "u1", "", session, "Remember the kumquat quarantine rule for the orchard.", 0))
	args := []string{"--root", root, "serve", "--debounce-ms", "50", "--source=claude-code=" + projects}

	a := startStdioServe(t, bin, args...)
	a.waitLog(`other commands reach this server on `)
	b := startStdioServe(t, bin, args...)
	b.waitLog(`front end of the serve that holds the index \(PID \d+\)`)

	names := a.toolNames()
	if got := b.toolNames(); !slices.Equal(got, names) || len(names) < 18 {
		t.Fatalf("front end lists %v, holder %v", got, names)
	}
	for _, name := range names {
		args, ok := everyToolArgs[name]
		if !ok {
			continue
		}
		ra, rb := a.call(name, args, nil), b.call(name, args, nil)
		if ra.IsError || rb.IsError {
			t.Errorf("%s: holder %q, front end %q", name, text(ra), text(rb))
		}
		if sameAnswer[name] && text(ra) != text(rb) {
			t.Errorf("%s: holder %q, front end %q; want the same answer", name, text(ra), text(rb))
		}
	}
	// The same errors, word for word.
	bad := map[string]any{"identifier": "../../etc/passwd"}
	if ea, eb := a.call("ReadMemory", bad, nil), b.call("ReadMemory", bad, nil); !ea.IsError || text(ea) != text(eb) {
		t.Errorf("a traversal: holder %q, front end %q", text(ea), text(eb))
	}
	if _, err := b.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "NoSuchTool"}); err == nil {
		t.Error("an unknown tool got no error through the front end")
	}

	// A write through either is found at once through the other.
	var w struct{ URI string }
	if r := b.call("WriteMemory", map[string]any{"title": "Written through the front end", "content": "the quokka ledger", "folder": "share"}, &w); r.IsError {
		t.Fatalf("write through the front end: %v", r.Content)
	}
	var p sharePage
	if a.call("SearchMemories", map[string]any{"query": "quokka", "mode": "FullText"}, &p); len(p.Results) != 1 || p.Results[0].URI != w.URI {
		t.Errorf("the holder finds %+v, want %s", p.Results, w.URI)
	}
	if r := a.call("WriteMemory", map[string]any{"title": "Written through the holder", "content": "the wombat ledger", "folder": "share"}, nil); r.IsError {
		t.Fatalf("write through the holder: %v", r.Content)
	}
	if b.call("SearchMemories", map[string]any{"query": "wombat", "mode": "FullText"}, &p); len(p.Results) != 1 {
		t.Errorf("the front end finds %+v for a write through the holder", p.Results)
	}

	// The holder dies; a file is written while no one holds the index.
	a.cmd.Process.Signal(syscall.SIGKILL)
	a.cs.Close() // waits for the process: its transport owns cmd.Wait
	write(t, filepath.Join(memory, "share", "meanwhile.md"), "# Meanwhile\n\nthe platypus note written while nobody held the index\n")
	// The first call after the death is answered within 2 s, by a holder
	// that has caught up with the disk.
	t0 := time.Now()
	res := b.call("SearchMemories", map[string]any{"query": "platypus", "mode": "FullText"}, &p)
	if d := time.Since(t0); res.IsError || d > 2*time.Second {
		t.Errorf("after the holder died: %q in %v, want an answer within 2 s", text(res), d)
	}
	if len(p.Results) != 1 {
		t.Errorf("the new holder does not find the file written meanwhile: %+v\n%s", p.Results, b.log)
	}
	b.waitLog(`holding the index: pid=`)
	if b.call("SearchMemories", map[string]any{"query": "quokka", "mode": "FullText"}, &p); len(p.Results) != 1 {
		t.Errorf("the acknowledged write is gone after the handover: %+v", p.Results)
	}

	c := startStdioServe(t, bin, args...)
	c.waitLog(`front end of the serve that holds the index \(PID \d+\)`)
	var sp struct{ Sessions []struct{ SessionID string } }
	if r := c.call("SearchSessions", map[string]any{"query": "kumquat"}, &sp); r.IsError || len(sp.Sessions) == 0 {
		t.Errorf("sessions through the third serve: %v %+v", r.Content, sp)
	}
	if c.call("SearchMemories", map[string]any{"query": "platypus", "mode": "FullText"}, &p); len(p.Results) != 1 {
		t.Errorf("the third serve finds %+v", p.Results)
	}
	c.cs.Close()
	b.cs.Close()
	if b.cmd.ProcessState == nil || !b.cmd.ProcessState.Success() || !strings.Contains(b.log.String(), "stopped: index closed") {
		t.Errorf("the new holder's exit %v; log:\n%s", b.cmd.ProcessState, b.log)
	}
}

// text is a tool result's first text content.
func text(r *sdk.CallToolResult) string {
	if r == nil || len(r.Content) == 0 {
		return ""
	}
	if tc, ok := r.Content[0].(*sdk.TextContent); ok {
		return tc.Text
	}
	return ""
}
