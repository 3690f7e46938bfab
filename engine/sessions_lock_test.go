package engine

import (
	"context"
	"path/filepath"
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

// TestSessionsSearchEmbedsOutsideTheLock checks that a sessions search
// waiting for its query's embedding does not hold the read lock: a sync
// that arrives meanwhile goes through before the embedder answers.
func TestSessionsSearchEmbedsOutsideTheLock(t *testing.T) {
	ctx := context.Background()
	base, err := embed.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	emb := &stallingEmbedder{Embedder: base, query: "retry budget", started: make(chan struct{}), release: make(chan struct{})}
	root := sessionFixture(t)
	s, err := OpenSessions(ctx, SessionsConfig{IndexDir: t.TempDir(), Sources: []SessionSource{lineSource{root}}, Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	mustSync(t, s)

	searched := make(chan error, 1)
	go func() {
		_, err := s.Search(ctx, SessionQuery{Text: emb.query})
		searched <- err
	}()
	<-emb.started
	writeLines(t, filepath.Join(root, "alpha", "s1.jsonl"), []lineMsg{msgAt("a4", "assistant", "Ten seconds each.", 3)}, true)
	synced := make(chan error, 1)
	go func() {
		_, err := s.Sync(ctx, false)
		synced <- err
	}()
	select {
	case err := <-synced:
		if err != nil {
			t.Errorf("sync: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("a sync waited for a search's query embedding: the search held the read lock across it")
	}
	close(emb.release)
	if err := <-searched; err != nil {
		t.Fatalf("search: %v", err)
	}
}
