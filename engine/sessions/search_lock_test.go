package sessions

import (
	"context"
	"path/filepath"
	"testing"

	"mnemo/engine/embed"
	"mnemo/engine/enginetest/lockcheck"
)

// TestSearchEmbedsOutsideTheLock checks that a session search waiting for
// its query's embedding does not hold the corpus's read lock: a transcript
// synced meanwhile goes through before the embedder answers (engine has
// the same test for memories).
func TestSearchEmbedsOutsideTheLock(t *testing.T) {
	const query = "retry budget"
	lockcheck.EmbedsOutsideTheLock(t, query, func(t *testing.T, emb embed.Embedder) (search, write func(context.Context) error) {
		root := sessionFixture(t)
		s, err := Open(context.Background(), Config{IndexDir: t.TempDir(), Sources: []Source{lineSource{root}}, Embedder: emb})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		mustSync(t, s)
		search = func(ctx context.Context) error {
			p, err := s.Search(ctx, Query{Text: query})
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
	})
}
