package sessions

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"mnemo/engine/enginetest"
	"mnemo/engine/rank"
	"mnemo/engine/transcript"
)

// TestRealClaudeShowAndSearch is the measurement of docs/transcripts.md on
// real Claude Code transcripts (the committed cuts under
// testdata/transcripts/claude-code, and MNEMO_REAL_CLAUDE's folder of whole
// files when set), through the index: GetSession (what sessions show
// prints) lists at least 99.5 % of the prose messages the careful reader
// (enginetest.CarefulClaude) keeps, no session below 90 %; and a full-text
// search for six words of a message, scoped to its session, has that
// message among its first three hits for at least 95 % of the messages; no
// injected text is shown.
func TestRealClaudeShowAndSearch(t *testing.T) {
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "projects")
	var files []string
	// A whole file in MNEMO_REAL_CLAUDE stored as a committed cut is (same
	// project folder and name) replaces the cut.
	add := func(dir string) {
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") || strings.Contains(p, "/subagents/") {
				return nil
			}
			proj := filepath.Base(filepath.Dir(p))
			dst := filepath.Join(root, proj, filepath.Base(p))
			os.MkdirAll(filepath.Dir(dst), 0o755)
			b, err := os.ReadFile(p)
			if err == nil && os.WriteFile(dst, b, 0o644) == nil && !slices.Contains(files, dst) {
				files = append(files, dst)
			}
			return nil
		})
	}
	add("../../testdata/transcripts/claude-code")
	if d := os.Getenv("MNEMO_REAL_CLAUDE"); d != "" {
		add(d)
	}
	s := openTestSessions(t, t.TempDir(), TranscriptSource(transcript.Source{Kind: transcript.ClaudeCode, Root: root}, transcript.Options{}))
	mustSync(t, s)
	kept, shown, asked, top3 := 0, 0, 0, 0
	for _, p := range files {
		want, injected, err := enginetest.CarefulClaude(p)
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
		for _, inj := range injected {
			n := enginetest.NormSpace(inj)
			for _, m := range view.Messages {
				if len(n) >= 20 && strings.Contains(enginetest.NormSpace(m.Text), n) {
					t.Errorf("%s: injected content shown: %.80q", filepath.Base(p), inj)
				}
			}
		}
		found := 0
		for _, m := range want {
			text := enginetest.NormSpace(transcript.Redact(m.Text))
			var in *Message
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
			page, err := s.Search(ctx, Query{Text: strings.Join(words[mid:mid+6], " "), Mode: rank.FullText, SessionID: res.Session.ID, MaxHits: 3})
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

// TestRealClaudeReplay writes real Claude Code transcripts line by line, as
// Claude Code does, syncing the path after every line as serve's watcher
// does: the index must end exactly as one sync of the whole file leaves it,
// and no message, once shown, may disappear while the file grows.
func TestRealClaudeReplay(t *testing.T) {
	ctx := context.Background()
	for _, rel := range []string{
		"-home-marco-projects-spotter/short.jsonl",
		"-home-marco-projects-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
		"-home-marco-projects-spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl",
		// 2.1.42: messages typed while the agent worked, delivered lines later.
		"-Users-alex-workspace-cli--worktrees-2/e8811ad6-93d9-4ee6-997d-2447a5d496f3.jsonl",
	} {
		proj, name := filepath.Split(rel)
		proj = filepath.Clean(proj)
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("../../testdata/transcripts/claude-code", rel))
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.SplitAfter(string(data), "\n")
			show := func(s *Corpus, root, path string) []Message {
				t.Helper()
				res, err := transcript.Read(ctx, transcript.Source{Kind: transcript.ClaudeCode, Root: root}, path, transcript.Cursor{}, transcript.Options{}, transcript.Handler{})
				if err != nil {
					t.Fatal(err)
				}
				v, err := s.GetSession(ctx, res.Session.ID, 0, 1000)
				if err != nil {
					return nil // no message yet
				}
				return v.Messages
			}
			// One sync of the whole file.
			root := filepath.Join(t.TempDir(), "projects")
			path := filepath.Join(root, proj, name)
			os.MkdirAll(filepath.Dir(path), 0o755)
			os.WriteFile(path, data, 0o644)
			once := openTestSessions(t, t.TempDir(), TranscriptSource(transcript.Source{Kind: transcript.ClaudeCode, Root: root}, transcript.Options{}))
			mustSync(t, once)
			want := show(once, root, path)

			// Line by line.
			root2 := filepath.Join(t.TempDir(), "projects")
			path2 := filepath.Join(root2, proj, name)
			os.MkdirAll(filepath.Dir(path2), 0o755)
			os.WriteFile(path2, nil, 0o644)
			live := openTestSessions(t, t.TempDir(), TranscriptSource(transcript.Source{Kind: transcript.ClaudeCode, Root: root2}, transcript.Options{}))
			seen := map[string]bool{}
			for i, l := range lines {
				if l == "" {
					continue
				}
				f, err := os.OpenFile(path2, os.O_APPEND|os.O_WRONLY, 0o644)
				if err != nil {
					t.Fatal(err)
				}
				f.WriteString(l)
				f.Close()
				if _, err := live.SyncPaths(ctx, []string{path2}); err != nil {
					t.Fatalf("line %d: %v", i+1, err)
				}
				got := map[string]bool{}
				for _, m := range show(live, root2, path2) {
					got[m.MessageID] = true
				}
				for id := range seen {
					if !got[id] {
						t.Fatalf("line %d: message %s, shown before, is gone", i+1, id)
					}
				}
				for id := range got {
					seen[id] = true
				}
			}
			got := show(live, root2, path2)
			if len(got) != len(want) {
				t.Fatalf("line by line: %d messages, one sync: %d", len(got), len(want))
			}
			for i := range want {
				if got[i].MessageID != want[i].MessageID || got[i].Text != want[i].Text || !got[i].Timestamp.Equal(want[i].Timestamp) {
					t.Errorf("message %d: line by line %s %.60q, one sync %s %.60q", i, got[i].MessageID, got[i].Text, want[i].MessageID, want[i].Text)
				}
			}
		})
	}
}
