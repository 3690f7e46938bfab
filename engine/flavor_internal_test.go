package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLinkRulesChangeRebuilds: an index whose links were read by other
// rules (an older mnemo, or the vault became a Logseq graph) says so in
// status, answers graph queries "not ready" rather than with the old
// graph, and is rebuilt by the next sync.
func TestLinkRulesChangeRebuilds(t *testing.T) {
	cfg, e := openRepairVault(t, map[string]string{"pages/a.md": "- see #topic and [[Other]]\n"})
	if got := e.graphStatus(); got.LinkRules != "obsidian" || got.Concepts != 1 || got.Stale != "" {
		t.Fatalf("before: %+v", got)
	}
	e.Close()
	// The folder becomes a Logseq graph: #topic is a page there.
	if err := os.MkdirAll(filepath.Join(cfg.MemoryDir, "logseq"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg.MemoryDir, "logseq", "config.edn"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	st, err := e.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(st.Graph.Stale, `now "1 logseq"`) {
		t.Errorf("stale = %q, want the new rules named", st.Graph.Stale)
	}
	if _, err := e.BuildContext(context.Background(), ContextQuery{Concept: "other"}); !errors.Is(err, ErrIndexNotReady) {
		t.Errorf("graph query before the rebuild: %v, want not ready", err)
	}
	if _, err := e.Sync(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	if got := e.graphStatus(); got.LinkRules != "logseq" || got.Concepts != 2 || got.Stale != "" {
		t.Errorf("after the rebuild: %+v, want topic and other", got)
	}
}
