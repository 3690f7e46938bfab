package engine

import (
	"context"
	"os"
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

// TestSearchEmbedsOutsideTheLock checks, for each corpus, that a search
// waiting for its query's embedding does not hold the corpus's read lock:
// a write that arrives meanwhile (a memory written, a transcript synced)
// goes through before the embedder answers, and the search then answers.
func TestSearchEmbedsOutsideTheLock(t *testing.T) {
	const query = "retry budget"
	tests := []struct {
		name string
		// open returns a corpus that embeds with emb and holds a match
		// for query, its search, and a write that needs the write lock.
		open func(t *testing.T, emb embed.Embedder) (search, write func(context.Context) error)
	}{
		{"memories", func(t *testing.T, emb embed.Embedder) (search, write func(context.Context) error) {
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
		}},
		{"sessions", func(t *testing.T, emb embed.Embedder) (search, write func(context.Context) error) {
			root := sessionFixture(t)
			s, err := OpenSessions(context.Background(), SessionsConfig{IndexDir: t.TempDir(), Sources: []SessionSource{lineSource{root}}, Embedder: emb})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			mustSync(t, s)
			search = func(ctx context.Context) error {
				p, err := s.Search(ctx, SessionQuery{Text: query})
				if err == nil && len(p.Sessions) == 0 {
					t.Errorf("sessions: the search found nothing for %q", query)
				}
				return err
			}
			// A message the sync below has to store.
			writeLines(t, filepath.Join(root, "alpha", "s1.jsonl"), []lineMsg{msgAt("a4", "assistant", "Ten seconds each.", 3)}, true)
			write = func(ctx context.Context) error {
				rep, err := s.Sync(ctx, false)
				if err == nil && rep.Messages != 1 {
					t.Errorf("sessions: the sync stored %d messages, want the one added", rep.Messages)
				}
				return err
			}
			return search, write
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			base, err := embed.Builtin()
			if err != nil {
				t.Fatal(err)
			}
			emb := &stallingEmbedder{Embedder: base, query: query, started: make(chan struct{}), release: make(chan struct{})}
			search, write := tc.open(t, emb)

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
		})
	}
}
