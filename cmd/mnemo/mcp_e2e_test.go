package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpChild builds mnemo, syncs a copy of the test vault and starts
// `mnemo serve` as an MCP client would: a child process spoken to over its
// stdin and stdout. It returns the client session and serve's stderr.
func mcpChild(t testing.TB) (*sdk.ClientSession, *exec.Cmd, *syncBuffer) {
	t.Helper()
	dir := t.TempDir()
	bin := mnemoBinary(t)
	root := filepath.Join(dir, "root")
	copyTree(t, "../../testdata/vault", filepath.Join(root, "memory"))
	if out, err := exec.Command(bin, "--root", root, "sync").CombinedOutput(); err != nil {
		t.Fatalf("sync: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--root", root, "serve")
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "v0"}, nil).
		Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: hangUpGrace}, nil)
	if err != nil {
		t.Fatalf("connect to mnemo serve: %v\n%s", err, stderr)
	}
	t.Cleanup(func() {
		cs.Close()
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
		}
	})
	return cs, cmd, stderr
}

// hangUpGrace is how long the client waits, after closing serve's stdin,
// before it sends SIGTERM: serve must exit well within it on its own.
const hangUpGrace = 15 * time.Second

// TestMCPStdio drives `mnemo serve` over stdio with the SDK's client: list
// the tools, search, read, get an argument wrong; then hang up, and serve
// must stop cleanly.
func TestMCPStdio(t *testing.T) {
	t.Parallel() // waits on mnemo processes
	if testing.Short() {
		t.Skip("runs the mnemo binary; skipped with -short")
	}
	cs, cmd, stderr := mcpChild(t)
	ctx := context.Background()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	want := []string{"BuildContext", "DeleteMemory", "EditMemory", "ExtractConceptsFromFile", "FindSimilarConcepts", "ForgetSessions", "GetConfig", "GetMessage", "GetSession",
		"ListMemories", "ListSessions", "MemoryStatus", "MoveMemory", "ReadMemory", "RecentActivity", "SearchMemories", "SearchSessions", "SessionsStatus", "Sync", "Visualize", "WriteMemory"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v", names)
	}

	call := func(name string, args map[string]any, out any) *sdk.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, stderr)
		}
		if out != nil && !res.IsError {
			b, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(b, out); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		return res
	}
	var page struct {
		Mode       string
		TotalCount int
		Results    []struct{ URI, Title string }
	}
	if res := call("SearchMemories", map[string]any{"query": "why bbolt over sqlite", "mode": "hybrid"}, &page); res.IsError {
		t.Fatalf("search: %v", res.Content)
	}
	if page.Mode != "Hybrid" || len(page.Results) == 0 || !strings.Contains(page.Results[0].URI, "bbolt") {
		t.Fatalf("search: %+v", page)
	}
	var mem struct{ URI, Title, Content, Checksum string }
	if res := call("ReadMemory", map[string]any{"identifier": page.Results[0].URI}, &mem); res.IsError {
		t.Fatalf("read: %v", res.Content)
	}
	if mem.URI != page.Results[0].URI || !strings.Contains(mem.Content, "bbolt") || len(mem.Checksum) != 64 {
		t.Errorf("read: %+v", mem)
	}
	if res := call("ReadMemory", map[string]any{"identifier": "../../etc/passwd"}, nil); !res.IsError {
		t.Error("a traversal was not refused")
	}

	var cfg struct {
		Variables []struct{ Name, Value, Source string }
	}
	call("GetConfig", nil, &cfg)
	sources := map[string]string{}
	for _, v := range cfg.Variables {
		sources[v.Name] = v.Source
	}
	if sources[EnvRoot] != "flag --root" || sources[EnvDebounce] == "" || sources["MAENIFOLD_DECAY_FUNCTION"] == "" || sources[EnvLouvainGamma] == "" {
		t.Errorf("GetConfig variables: %+v", cfg.Variables)
	}

	// The concept graph, through the same child.
	var gc struct {
		Concept         string
		DirectRelations []struct {
			Name              string
			CoOccurrenceCount int
			Files             []string
		}
	}
	if res := call("BuildContext", map[string]any{"conceptName": "Recency Decay", "depth": 1, "maxEntities": 3}, &gc); res.IsError {
		t.Fatalf("BuildContext: %v", res.Content)
	}
	if gc.Concept != "recency-decay" || len(gc.DirectRelations) != 3 || gc.DirectRelations[0].CoOccurrenceCount < gc.DirectRelations[2].CoOccurrenceCount {
		t.Errorf("BuildContext: %+v", gc)
	}
	var d struct{ Mermaid string }
	if res := call("Visualize", map[string]any{"conceptName": "bbolt"}, &d); res.IsError || !strings.HasPrefix(d.Mermaid, "graph LR\n") {
		t.Errorf("Visualize: %v", res.Content)
	}

	// Round-trip latency of a search through the child's stdio.
	var lat []time.Duration
	for i := range 100 {
		t0 := time.Now()
		call("SearchMemories", map[string]any{"query": []string{"recency decay", "postgres pool", "quarterly planning", "deploy systemd"}[i%4]}, nil)
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	t.Logf("stdio search round trip over %d calls: p50 %v, p95 %v", len(lat), lat[len(lat)/2], lat[len(lat)*95/100])

	t0 := time.Now()
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if time.Since(t0) >= hangUpGrace {
		t.Fatalf("serve did not exit when the client hung up:\n%s", stderr)
	}
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() || !strings.Contains(stderr.String(), "stopped: index closed") {
		t.Errorf("serve exit %v; log:\n%s", cmd.ProcessState, stderr)
	}
}

// BenchmarkMCPStdioSearch measures a SearchMemories round trip from the
// SDK's client through a `mnemo serve` child's stdin and stdout, on
// testdata/vault, and reports the median and 95th percentile.
func BenchmarkMCPStdioSearch(b *testing.B) {
	cs, _, stderr := mcpChild(b)
	ctx := context.Background()
	queries := []string{"why bbolt over sqlite", "recency decay half-life", "postgres connection pool exhausted", "quarterly planning", "deploy with systemd"}
	var lat []time.Duration
	i := 0
	for b.Loop() {
		t0 := time.Now()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "SearchMemories", Arguments: map[string]any{"query": queries[i%len(queries)]}})
		lat = append(lat, time.Since(t0))
		if err != nil || res.IsError {
			b.Fatalf("%v %v\n%s", err, res, stderr)
		}
		i++
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
}

func copyTree(t testing.TB, from, to string) {
	t.Helper()
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatalf("copy %s: %v", from, err)
	}
}

// syncBuffer is a bytes.Buffer safe to write from the process's copier
// while a test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
