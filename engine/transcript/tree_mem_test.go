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
// of a long Claude Code transcript while the second pass delivers it: a
// million messages are ~5.8M records, and whatever a record costs there is
// held for the whole read (main at 2a4f4c1: a Go map
// entry keyed by the UUID's 16 bytes and three int32s: 73 here; now 33). Lines are
// not held (treeHoldBytes 0), so only the tree is measured.
func TestTreeFirstPassBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads a 30 MB transcript")
	}
	defer func(n int) { treeHoldBytes = n }(treeHoldBytes)
	treeHoldBytes = 0
	const records = 130_000
	path := filepath.Join(t.TempDir(), "long.jsonl")
	writeLongClaude(t, path, records)

	var before, during runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	n := 0
	h := Handler{Reset: func() error { return nil }, Message: func(Message) error {
		if n++; n == 1 { // the first pass is over; its region is live
			runtime.GC()
			runtime.ReadMemStats(&during)
		}
		return nil
	}}
	if _, err := readWith(t.Context(), Source{Kind: ClaudeCode}, path, Cursor{}, Options{}, h, noRedact); err != nil {
		t.Fatal(err)
	}
	if n != records {
		t.Fatalf("%d messages delivered, want %d", n, records)
	}
	perRecord := (float64(during.HeapAlloc) - float64(before.HeapAlloc)) / records
	t.Logf("%.1f bytes a record held by the first pass", perRecord)
	if perRecord > 40 {
		t.Errorf("the first pass holds %.1f bytes a record, want at most 40", perRecord)
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
