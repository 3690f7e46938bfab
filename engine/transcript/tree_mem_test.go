package transcript

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestTreeFirstPassBytes bounds what the first pass keeps of each record
// of a long Claude Code transcript, on the heap and in its arena, for the
// second pass: a million messages are ~5.8M records, and whatever a record
// costs is held for the whole read. At 2a4f4c1 (a Go map entry keyed by
// the UUID's 16 bytes, three int32s) it was 70.7 bytes here; now 31.8. Lines
// are not held (treeHoldBytes 0), so only the tree is measured.
func TestTreeFirstPassBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads a 30 MB transcript")
	}
	defer func(n int) { treeHoldBytes = n }(treeHoldBytes)
	treeHoldBytes = 0
	const records = 130_000
	path := filepath.Join(t.TempDir(), "long.jsonl")
	writeLongClaude(t, path, records)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	r := &run{ctx: t.Context(), src: Source{Kind: ClaudeCode}, path: path, fi: fi,
		opt: Options{MaxLineBytes: DefaultMaxLineBytes}, redact: noRedact}

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rg, err := treeScan(r, claudeTree, 0, &treeExtra{})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if rg.n != records {
		t.Fatalf("%d records, want %d", rg.n, records)
	}
	arena := 0
	for _, b := range rg.arena.blocks {
		arena += len(b)
	}
	heap := float64(after.HeapAlloc) - float64(before.HeapAlloc)
	perRecord := (heap + float64(arena)) / records
	t.Logf("%.1f bytes a record held by the first pass (%.1f on the heap, %.1f in its arena)",
		perRecord, heap/records, float64(arena)/records)
	if perRecord > 40 {
		t.Errorf("the first pass holds %.1f bytes a record, want at most 40", perRecord)
	}
	runtime.KeepAlive(rg)
	rg.free()
	if rg.arena.blocks != nil {
		t.Errorf("free left %d blocks", len(rg.arena.blocks))
	}
}

// writeLongClaude writes a Claude Code transcript of records lines, user
// prompts and assistant replies in turn, each the child of the one before.
func writeLongClaude(t *testing.T, path string, records int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	uuid := func(i int) string { return fmt.Sprintf("%08x-1b2c-4d3e-8f40-%012x", i*2654435761%(1<<32), i) }
	for i := range records {
		parent := `null`
		if i > 0 {
			parent = `"` + uuid(i-1) + `"`
		}
		role, content := "user", fmt.Sprintf(`"prompt %d"`, i)
		if i%2 == 1 {
			role, content = "assistant", fmt.Sprintf(`[{"type":"text","text":"reply %d"}]`, i)
		}
		fmt.Fprintf(w, `{"type":%q,"uuid":%q,"parentUuid":%s,"sessionId":"s1","timestamp":"2026-01-01T00:00:00Z","message":{"role":%q,"id":"m%d","content":%s}}`+"\n",
			role, uuid(i), parent, role, i, content)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
