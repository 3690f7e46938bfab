package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"mnemo/engine"
)

// flaky is an embedder that works until it has embedded failAfter texts,
// then fails every call while down is set. It stands in for a remote
// provider (Ollama, OpenAI) that stops answering part-way through a sync.
type flaky struct {
	failAfter int64
	done      atomic.Int64
	down      atomic.Bool
	offline   bool // reports Dim 0 and an Offline error, as a Remote that never answered
}

func (f *flaky) Name() string { return "fake:v1" }
func (f *flaky) Dim() int {
	if f.offline {
		return 0
	}
	return 8
}
func (f *flaky) Offline() error {
	if f.offline {
		return errors.New("embedder fake:v1: connection refused")
	}
	return nil
}
func (f *flaky) Embed(_ context.Context, texts []string) ([][]float32, error) {
	if f.offline || (f.down.Load() && f.done.Load() >= f.failAfter) {
		return nil, errors.New("embedder fake:v1: 503 Service Unavailable")
	}
	f.done.Add(int64(len(texts)))
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 8)
		for j, r := range t {
			v[(j+int(r))%8] += 1
		}
		out[i] = v
	}
	return out, nil
}

func writeNumbered(t *testing.T, dir string, n int) {
	t.Helper()
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("m%04d.md", i))
		if err := os.WriteFile(p, []byte(fmt.Sprintf("# Memory %d\n\nunique token zq%04dx here.\n", i, i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestEmbedderFailsMidSync(t *testing.T) {
	ctx := context.Background()
	mem, idx := t.TempDir(), t.TempDir()
	// Three batches of at most 10 files (engine.SetSyncBatch; a real sync
	// applies 1024 per batch, which is the same code); the provider fails
	// part-way through the second.
	const files, batch = 25, 10
	writeNumbered(t, mem, files)
	f := &flaky{failAfter: 15}
	f.down.Store(true)
	e, err := engine.Open(ctx, engine.Config{MemoryDir: mem, IndexDir: idx, Embedder: f})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	engine.SetSyncBatch(e, batch)
	if _, err := e.Sync(ctx, false); err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("Sync with a provider that stops answering: err = %v, want the provider's error", err)
	}
	st, err := e.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(st.LastError, "503") {
		t.Errorf("Status.LastError = %q, want the provider's error", st.LastError)
	}
	if st.Files == 0 || st.Files >= files || st.Files%batch != 0 {
		t.Errorf("Status.Files = %d after a failed sync, want whole batches only", st.Files)
	}
	// FullText works, finds exactly the files of the applied batches, once each.
	found := 0
	for i := range files {
		p, err := e.Search(ctx, engine.Query{Text: fmt.Sprintf("zq%04dx", i), Mode: engine.FullText})
		if err != nil {
			t.Fatalf("FullText search during the outage: %v", err)
		}
		switch p.TotalCount {
		case 0:
		case 1:
			found++
			if want := fmt.Sprintf("m%04d.md", i); p.Results[0].Path != want {
				t.Errorf("token %d found %s, want %s", i, p.Results[0].Path, want)
			}
		default:
			t.Errorf("token %d found %d times", i, p.TotalCount)
		}
	}
	if found != st.Files {
		t.Errorf("%d memories searchable, Status says %d", found, st.Files)
	}
	// The provider comes back: the next sync completes and clears the error.
	f.down.Store(false)
	rep, err := e.Sync(ctx, false)
	if err != nil {
		t.Fatalf("Sync after the provider recovered: %v", err)
	}
	if len(rep.Added) != files-st.Files {
		t.Errorf("recovery sync added %d, want %d", len(rep.Added), files-st.Files)
	}
	if st, _ = e.Status(ctx); st.Files != files || st.LastError != "" {
		t.Errorf("after recovery: Files %d LastError %q, want %d and none", st.Files, st.LastError, files)
	}
}

func TestOfflineEmbedderKeepsFullTextWorking(t *testing.T) {
	ctx := context.Background()
	mem, idx := t.TempDir(), t.TempDir()
	writeNumbered(t, mem, 5)
	e, err := engine.Open(ctx, engine.Config{MemoryDir: mem, IndexDir: idx, Embedder: &flaky{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Sync(ctx, false); err != nil {
		t.Fatal(err)
	}
	e.Close()

	// Reopen while the provider is unreachable.
	e, err = engine.Open(ctx, engine.Config{MemoryDir: mem, IndexDir: idx, Embedder: &flaky{offline: true}})
	if err != nil {
		t.Fatalf("Open with an unreachable embedder: %v", err)
	}
	defer e.Close()
	p, err := e.Search(ctx, engine.Query{Text: "zq0003x", Mode: engine.FullText})
	if err != nil || p.TotalCount != 1 {
		t.Fatalf("FullText with the embedder down: %d results, err %v; want 1", p.TotalCount, err)
	}
	if _, err := e.Search(ctx, engine.Query{Text: "zq0003x", Mode: engine.Hybrid}); err == nil || !strings.Contains(err.Error(), "connection refused") && !strings.Contains(err.Error(), "503") {
		t.Errorf("Hybrid with the embedder down: err = %v, want the provider's error", err)
	}
	st, err := e.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(st.EmbedderError, "connection refused") || st.Dimensions != 8 || st.Files != 5 || st.Chunks != 5 {
		t.Errorf("Status with the embedder down: %+v", st)
	}
}
