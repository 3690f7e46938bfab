// Package lockcheck checks, for either corpus, that a search waiting for
// a slow embedder holds no lock a write needs. It is imported by tests
// only; it sits apart from enginetest because it needs engine/embed, whose
// own tests import enginetest.
package lockcheck

import (
	"context"
	"sync"
	"testing"
	"time"

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

// EmbedsOutsideTheLock checks, for one corpus, that a search waiting for
// its query's embedding does not hold the corpus's read lock: a write that
// arrives meanwhile (a memory written, a transcript synced) goes through
// before the embedder answers, and the search then answers. open returns
// a corpus that embeds with emb and holds a match for query, its search,
// and a write that needs the write lock. Both corpora's tests call it.
func EmbedsOutsideTheLock(t *testing.T, query string, open func(t *testing.T, emb embed.Embedder) (search, write func(context.Context) error)) {
	t.Helper()
	ctx := context.Background()
	base, err := embed.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	emb := &stallingEmbedder{Embedder: base, query: query, started: make(chan struct{}), release: make(chan struct{})}
	search, write := open(t, emb)

	searched := make(chan error, 1)
	go func() { searched <- search(ctx) }()
	<-emb.started
	wrote := make(chan error, 1)
	go func() { wrote <- write(ctx) }()
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
