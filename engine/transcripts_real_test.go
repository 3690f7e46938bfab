package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mnemo/engine/enginetest"
	"mnemo/engine/transcript"
)

// TestRealClaudeShowAndSearch is the measurement of docs/transcripts.md on
// real Claude Code transcripts (the committed cuts under
// testdata/transcripts/claude-code, and MNEMO_REAL_CLAUDE's folder of whole
// files when set), through the index: GetSession (what sessions show
// prints) lists at least 99.5 % of the prose messages the careful reader
// (enginetest.CarefulClaude) keeps, no session below 90 %; and a full-text
// search for six words of a message, scoped to its session, has that
// message among its first three hits for at least 95 % of the messages.
func TestRealClaudeShowAndSearch(t *testing.T) {
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "projects")
	var files []string
	add := func(dir string) {
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") || strings.Contains(p, "/subagents/") {
				return nil
			}
			proj := filepath.Base(filepath.Dir(p))
			dst := filepath.Join(root, proj, filepath.Base(p))
			os.MkdirAll(filepath.Dir(dst), 0o755)
			b, err := os.ReadFile(p)
			if err == nil && os.WriteFile(dst, b, 0o644) == nil {
				files = append(files, dst)
			}
			return nil
		})
	}
	add("../testdata/transcripts/claude-code")
	if d := os.Getenv("MNEMO_REAL_CLAUDE"); d != "" {
		add(d)
	}
	s := openTestSessions(t, t.TempDir(), TranscriptSource(transcript.Source{Kind: transcript.ClaudeCode, Root: root}, transcript.Options{}))
	mustSync(t, s)
	kept, shown, asked, top3 := 0, 0, 0, 0
	for _, p := range files {
		want, _, err := enginetest.CarefulClaude(p)
		if err != nil || len(want) == 0 {
			continue
		}
		res, err := transcript.Read(ctx, transcript.Source{Kind: transcript.ClaudeCode, Root: root}, p, transcript.Cursor{}, transcript.Options{}, transcript.Handler{})
		if err != nil {
			t.Fatal(err)
		}
		view, err := s.GetSession(ctx, res.Session.ID, 0, 1000)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		found := 0
		for _, m := range want {
			text := enginetest.NormSpace(transcript.Redact(m.Text))
			var in *SessionMessage
			for i := range view.Messages {
				if strings.Contains(enginetest.NormSpace(view.Messages[i].Text), text) {
					in = &view.Messages[i]
					break
				}
			}
			if in == nil {
				t.Logf("%s: not shown: %s %.80q", filepath.Base(p), m.Role, m.Text)
				continue
			}
			found++
			words := strings.Fields(text)
			if len(words) < 6 {
				continue
			}
			mid := (len(words) - 6) / 2
			asked++
			page, err := s.Search(ctx, SessionQuery{Text: strings.Join(words[mid:mid+6], " "), Mode: FullText, SessionID: res.Session.ID, MaxHits: 3})
			if err != nil {
				t.Logf("%s: search %q: %v", filepath.Base(p), strings.Join(words[mid:mid+6], " "), err)
				continue
			}
			for _, r := range page.Sessions {
				for _, h := range r.Hits {
					if h.MessageID == in.MessageID {
						top3++
						goto next
					}
				}
			}
			t.Logf("%s: not in the top 3 for %q", filepath.Base(p), strings.Join(words[mid:mid+6], " "))
		next:
		}
		kept += len(want)
		shown += found
		if share := float64(found) / float64(len(want)); share < 0.90 {
			t.Errorf("%s: %d of %d prose messages shown (%.1f %%)", p, found, len(want), 100*share)
		}
	}
	if kept == 0 || asked == 0 {
		t.Fatal("no real transcripts measured")
	}
	showShare, searchShare := float64(shown)/float64(kept), float64(top3)/float64(asked)
	t.Logf("%d files: show %d of %d prose messages (%.2f %%); six-word search finds %d of %d in the top 3 (%.2f %%)",
		len(files), shown, kept, 100*showShare, top3, asked, 100*searchShare)
	if showShare < 0.995 {
		t.Errorf("show lists %.2f %% of the prose messages, want at least 99.5 %%", 100*showShare)
	}
	if searchShare < 0.95 {
		t.Errorf("six-word searches find %.2f %% in the top 3, want at least 95 %%", 100*searchShare)
	}
}
