package engine

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"mnemo/engine/embed"
	"mnemo/engine/enginetest/lockcheck"
)

// TestSearchEmbedsOutsideTheLock checks that a memory search waiting for
// its query's embedding does not hold the engine's read lock: a memory
// written meanwhile goes through before the embedder answers
// (engine/sessions has the same test for transcripts).
func TestSearchEmbedsOutsideTheLock(t *testing.T) {
	const query = "retry budget"
	lockcheck.EmbedsOutsideTheLock(t, query, func(t *testing.T, emb embed.Embedder) (search, write func(context.Context) error) {
		root := t.TempDir()
		mem := filepath.Join(root, "mem")
		if err := os.MkdirAll(mem, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mem, "a.md"), []byte("# Retry budget\n\nFive attempts with backoff.\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		e, err := Open(context.Background(), Config{MemoryDir: mem, IndexDir: filepath.Join(root, "idx"), Embedder: emb})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		if _, err := e.Sync(context.Background(), false); err != nil {
			t.Fatal(err)
		}
		search = func(ctx context.Context) error {
			p, err := e.Search(ctx, Query{Text: query})
			if err == nil && len(p.Results) == 0 {
				t.Errorf("memories: the search found nothing for %q", query)
			}
			return err
		}
		write = func(ctx context.Context) error {
			_, err := e.Write(ctx, WriteRequest{Title: "Timeouts", Content: "Each attempt waits ten seconds."})
			return err
		}
		return search, write
	})
}
