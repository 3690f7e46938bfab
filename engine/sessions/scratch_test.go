package sessions

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mnemo/engine/fulltext"
	"mnemo/engine/rank"
	"mnemo/engine/transcript"
)

// Two conversations of a claude.ai data export (a container): the
// fixture's, and a copy of it with other words and another id.
const (
	okapiID = "9d8c7b6a-5f4e-4d3c-2b1a-0f9e8d7c6b5a"
	gnuzzID = "9d8c7b6a-5f4e-4d3c-2b1a-0f9e8d7c6b5b"
)

// exportFixture writes the export and returns its root (a Downloads
// folder) and the container's path.
func exportFixture(t *testing.T) (root, conv string) {
	t.Helper()
	fixture := filepath.Join("..", "..", "testdata", "transcripts", "claude-export", "home", "Downloads", "data-2025-12-01-12-00-00")
	b, err := os.ReadFile(filepath.Join(fixture, "conversations.json"))
	if err != nil {
		t.Fatal(err)
	}
	one := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(string(b)), "["), "]")
	two := strings.NewReplacer("claudeokapi", "gnuzzlequark", okapiID, gnuzzID).Replace(one)
	root = filepath.Join(t.TempDir(), "Downloads")
	conv = filepath.Join(root, "data-2025-12-01-12-00-00", "conversations.json")
	if err := os.MkdirAll(filepath.Dir(conv), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conv, []byte("["+one+","+two+"]"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, conv
}

func exportSessions(t *testing.T, idx, root string) *Corpus {
	t.Helper()
	return openTestSessions(t, idx, TranscriptSource(transcript.Source{Kind: transcript.ClaudeExport, Root: root},
		transcript.Options{Scratch: Scratch(idx)}))
}

// inScratch keeps the files of a holding list that lie in the scratch folder.
func inScratch(held []string) []string {
	var out []string
	for _, h := range held {
		if strings.HasPrefix(h, string(filepath.Separator)+filepath.Join(sessionsDir, "sources")) {
			out = append(out, h)
		}
	}
	return out
}

// TestSessionsScratchContainerGone: once a container is deleted and a sync
// (or a watcher batch naming it) has archived its sessions, the store
// serves them — shown whole, found by a search — and no file under the
// index folder but the state store and the full-text index holds their
// words: the container's copy in the scratch folder is gone.
func TestSessionsScratchContainerGone(t *testing.T) {
	for _, by := range []string{"sync", "watcher"} {
		t.Run(by, func(t *testing.T) {
			root, conv := exportFixture(t)
			idx := t.TempDir()
			s := exportSessions(t, idx, root)
			mustSync(t, s)
			if held := inScratch(filesHolding(t, idx, "claudeokapi", "gnuzzlequark")); len(held) < 2 {
				t.Fatalf("before the delete the scratch folder holds %v; the check would prove nothing", held)
			}
			if err := os.Remove(conv); err != nil {
				t.Fatal(err)
			}
			var rep Report
			var err error
			if by == "sync" {
				rep, err = s.Sync(context.Background(), false)
			} else {
				rep, err = s.SyncPaths(context.Background(), []string{conv})
			}
			if err != nil {
				t.Fatal(err)
			}
			if rep.Archived != 2 {
				t.Fatalf("%s after the delete archived %d sessions, want 2", by, rep.Archived)
			}
			v, err := s.GetSession(context.Background(), okapiID, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			if !v.Archived || len(v.Messages) == 0 || !strings.Contains(v.Messages[0].Text, "claudeokapi") {
				t.Errorf("the archived session as shown: archived %v, %+v", v.Archived, v.Messages)
			}
			if p := search(t, s, Query{Text: "gnuzzlequark", Mode: rank.FullText}); len(p.Sessions) != 1 || !p.Sessions[0].Archived {
				t.Errorf("search for the other archived session: %+v", p.Sessions)
			}
			for _, h := range filesHolding(t, idx, "claudeokapi", "gnuzzlequark") {
				rel := strings.TrimPrefix(h, string(filepath.Separator)+sessionsDir+string(filepath.Separator))
				if !strings.HasPrefix(rel, "state.db ") && !strings.HasPrefix(rel, fulltext.Dir+string(filepath.Separator)) {
					t.Errorf("after the %s, %s holds the words of the deleted container", by, h)
				}
			}
		})
	}
}

// TestSessionsForgetContainedCrash: a forget of a session inside a
// container, whether the container is still there or already deleted
// (its sessions not yet archived), leaves no file under the index folder
// holding the session's words — its extract in the scratch folder
// included — when it completes, and when it was killed right after it
// committed, by the next writer's open; the container's other session
// stays, and once archived leaves no copy either.
func TestSessionsForgetContainedCrash(t *testing.T) {
	for _, tc := range []struct {
		name    string
		deleted bool // the container is deleted before the forget
		killed  bool // the forget is cut right after it committed
	}{
		{"container there, forget completes", false, false},
		{"container there, forget killed", false, true},
		{"container deleted, forget completes", true, false},
		{"container deleted, forget killed", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, conv := exportFixture(t)
			idx := t.TempDir()
			s := exportSessions(t, idx, root)
			mustSync(t, s)
			if tc.deleted {
				if err := os.Remove(conv); err != nil {
					t.Fatal(err)
				}
			}
			if tc.killed {
				sel, err := s.selectForget(ForgetQuery{IDs: []string{okapiID}})
				if err != nil {
					t.Fatal(err)
				}
				forgotten := map[[32]byte]string{}
				if !tc.deleted { // as Forget records a transcript still there
					forgotten[pathHash(sel[0].Path)] = sel[0].Source
				}
				if err := s.st.forget(sel, forgotten, "forget started (test)"); err != nil {
					t.Fatal(err)
				}
				s.Close() // the kill
				if held := inScratch(filesHolding(t, idx, "claudeokapi")); len(held) == 0 {
					t.Fatal("the simulated kill left no extract to remove; the test proves nothing")
				}
				s = exportSessions(t, idx, root)
			} else if _, err := s.Forget(context.Background(), ForgetQuery{IDs: []string{okapiID}}); err != nil {
				t.Fatal(err)
			}
			if left := filesHolding(t, idx, "claudeokapi"); len(left) > 0 {
				t.Errorf("after the forget, files hold its words: %v", left)
			}
			if p := search(t, s, Query{Text: "gnuzzlequark", Mode: rank.FullText}); len(p.Sessions) != 1 {
				t.Errorf("the container's other session after the forget: %+v", p.Sessions)
			}
			mustSync(t, s)
			if left := filesHolding(t, idx, "claudeokapi"); len(left) > 0 {
				t.Errorf("after a sync, files hold its words: %v", left)
			}
			if held := inScratch(filesHolding(t, idx, "gnuzzlequark")); tc.deleted && len(held) > 0 {
				t.Errorf("the other session, archived, keeps a copy: %v", held)
			}
		})
	}
}

// TestSessionsScratchLeftovers: what a crash leaves in the scratch folder
// mid-extraction — a database snapshot, session files of a first
// extraction whose listing was never written — is read by nothing, and a
// sync removes it.
func TestSessionsScratchLeftovers(t *testing.T) {
	root, _ := exportFixture(t)
	idx := t.TempDir()
	s := exportSessions(t, idx, root)
	scratch := Scratch(idx)
	for _, f := range []string{"sqlite-0123456789abcdef/snap/db.sqlite", "cursor-ide-0123456789abcdef/s-0123.json"} {
		p := filepath.Join(scratch, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("the wobblefrotz plan"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mustSync(t, s)
	if left := filesHolding(t, idx, "wobblefrotz"); len(left) > 0 {
		t.Errorf("after a sync, leftovers hold words: %v", left)
	}
	if p := search(t, s, Query{Text: "claudeokapi", Mode: rank.FullText}); len(p.Sessions) != 1 {
		t.Errorf("the container's session after the sync: %+v", p.Sessions)
	}
}
