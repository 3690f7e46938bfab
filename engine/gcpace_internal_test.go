package engine

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"mnemo/engine/gcpace"
)

// TestSyncPacesGC: a full sync runs paced (seen from its progress
// callback, called between batches) and restores the defaults after.
func TestSyncPacesGC(t *testing.T) {
	if p, l := gcpace.Settings(); p != 100 || l != math.MaxInt64 {
		t.Skipf("test binary runs with GOGC=%d, memory limit %d: the pacing leaves those alone", p, l)
	}
	root := t.TempDir()
	mem := filepath.Join(root, "mem")
	if err := os.MkdirAll(mem, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a.md", "b.md", "c.md"} {
		if err := os.WriteFile(filepath.Join(mem, n), []byte("# "+n+"\n\nsome text about "+n+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var during []int
	cfg := Config{MemoryDir: mem, IndexDir: filepath.Join(root, "idx"), Progress: func(done, total int) {
		if done > 0 {
			p, _ := gcpace.Settings()
			during = append(during, p)
		}
	}}
	ctx := context.Background()
	e, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	e.batchFiles = 1
	if _, err := e.Sync(ctx, true); err != nil {
		t.Fatal(err)
	}
	if len(during) != 3 {
		t.Fatalf("progress after %d batches, want 3", len(during))
	}
	for i, p := range during {
		if p != -1 {
			t.Errorf("batch %d ran with GOGC %d, want off (paced by the memory limit)", i+1, p)
		}
	}
	if p, l := gcpace.Settings(); p != 100 || l != math.MaxInt64 {
		t.Errorf("after the sync: GOGC %d, limit %d; want 100 and none", p, l)
	}
}
