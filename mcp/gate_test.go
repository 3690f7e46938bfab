package mcp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"mnemo/engine"
	"mnemo/engine/admit"
	"mnemo/mcp/args"
)

// gatedEngine opens an empty engine whose searches pass g.
func gatedEngine(t *testing.T, g *admit.Gate) *engine.Engine {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "mem"), 0o755); err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Open(context.Background(), engine.Config{MemoryDir: filepath.Join(dir, "mem"), IndexDir: filepath.Join(dir, "idx"), Admit: g})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng
}

// TestSearchBusyIsToolError: a search that finds the gate full answers
// with a one-line tool error, not a hang and not an empty result.
func TestSearchBusyIsToolError(t *testing.T) {
	g := admit.New(1, 10*time.Millisecond)
	s := &server{eng: gatedEngine(t, g), opts: Options{}}
	leave, err := g.Enter(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer leave()
	_, err = s.search(context.Background(), &args.Query{Text: "anything", Page: 1, PageSize: 10})
	if !errors.Is(err, admit.ErrBusy) {
		t.Fatalf("search with the gate full: %v, want ErrBusy", err)
	}
	if res := errorResult(err); !res.IsError {
		t.Fatal("busy is not an isError result")
	}
}

// TestWritesBypassTheGate: writes never queue behind searches. With every
// search turn taken (and the queue timeout far away), WriteMemory and
// EditMemory still answer, and the memory is searchable right after.
func TestWritesBypassTheGate(t *testing.T) {
	g := admit.New(1, time.Hour)
	eng := gatedEngine(t, g)
	s := &server{eng: eng, opts: Options{}}
	leave, err := g.Enter(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ref, err := s.writeTool().run(ctx, &writeIn{Title: "Gate", Content: "the narwhal surfaces"})
	if err != nil {
		t.Fatalf("WriteMemory with every search turn taken: %v", err)
	}
	if _, err := s.editTool().run(ctx, &editIn{Identifier: ref.Path, Operation: "append", Content: "and the walrus too"}); err != nil {
		t.Fatalf("EditMemory with every search turn taken: %v", err)
	}
	leave() // the searches below pass the same gate
	for _, w := range []string{"narwhal", "walrus"} {
		p, err := eng.Search(ctx, engine.Query{Text: w, Mode: engine.FullText})
		if err != nil || len(p.Results) != 1 || p.Results[0].Path != ref.Path {
			t.Errorf("%s right after the write: %v, %v; want %s", w, p.Results, err, ref.Path)
		}
	}
}
