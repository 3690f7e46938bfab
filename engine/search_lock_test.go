package engine_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"mnemo/engine"
	"mnemo/engine/embed"
)

// stallingEmbedder stands in for a remote embedder whose round trip is
// slow: embedding the text query, it reports that it has started and then
// waits until release is closed. Every other text is embedded at once.
type stallingEmbedder struct {
	embed.Embedder
	query   string
	started chan struct{}
	release chan struct{}
	once    sync.Once
}

func (s *stallingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 1 && texts[0] == s.query {
		s.once.Do(func() {
			close(s.started)
			<-s.release
		})
	}
	return s.Embedder.Embed(ctx, texts)
}

// TestSearchEmbedsOutsideTheLock checks that a search waiting for its
// query's embedding does not hold the engine's read lock: a write that
// arrives meanwhile goes through before the embedder answers.
func TestSearchEmbedsOutsideTheLock(t *testing.T) {
	ctx := context.Background()
	base, err := embed.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	emb := &stallingEmbedder{Embedder: base, query: "retry budget", started: make(chan struct{}), release: make(chan struct{})}
	v := newVault(t, map[string]string{"a.md": "# Retry budget\n\nFive attempts with backoff.\n"}, func(c *engine.Config) { c.Embedder = emb })

	searched := make(chan error, 1)
	go func() {
		_, err := v.e.Search(ctx, engine.Query{Text: emb.query})
		searched <- err
	}()
	<-emb.started
	wrote := make(chan error, 1)
	go func() {
		_, err := v.e.Write(ctx, engine.WriteRequest{Title: "Timeouts", Content: "Each attempt waits ten seconds."})
		wrote <- err
	}()
	select {
	case err := <-wrote:
		if err != nil {
			t.Errorf("write: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("a write waited for a search's query embedding: the search held the read lock across it")
	}
	close(emb.release)
	if err := <-searched; err != nil {
		t.Fatalf("search: %v", err)
	}
}
