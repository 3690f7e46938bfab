package transcript

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"mnemo/engine/enginetest"
)

// carefulScore is what the production reader gave against the rule for one
// transcript: how many of the kept messages it delivered, and the injected
// texts it delivered.
type carefulScore struct {
	Path     string
	Kept     int
	Found    int
	Missing  []string
	Injected []string
}

func (s carefulScore) share() float64 {
	if s.Kept == 0 {
		return 1
	}
	return float64(s.Found) / float64(s.Kept)
}

// scoreClaude reads path with the production reader (redaction off: the rule
// does not redact) and checks it against the careful reader.
func scoreClaude(t *testing.T, path string) carefulScore {
	t.Helper()
	want, injected, err := enginetest.CarefulClaude(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	h := Handler{
		Reset:   func() error { got = nil; return nil },
		Message: func(m Message) error { got = append(got, enginetest.NormSpace(m.Text)); return nil },
	}
	if _, err := readWith(t.Context(), Source{Kind: ClaudeCode}, path, Cursor{}, Options{}, h, noRedact); err != nil {
		t.Fatal(err)
	}
	all := strings.Join(got, "\n")
	sc := carefulScore{Path: path, Kept: len(want)}
	for _, m := range want {
		if strings.Contains(all, enginetest.NormSpace(m.Text)) {
			sc.Found++
		} else {
			sc.Missing = append(sc.Missing, m.Role+" "+m.UUID+": "+trunc(m.Text, 80))
		}
	}
	for _, inj := range injected {
		n := enginetest.NormSpace(inj)
		if len(n) >= 20 && strings.Contains(all, n) {
			sc.Injected = append(sc.Injected, trunc(inj, 80))
		}
	}
	return sc
}

func trunc(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// realClaudeFiles lists the real Claude Code transcripts the measurement
// runs over: the committed cuts, and the folder MNEMO_REAL_CLAUDE names (the
// large files, kept out of the repository). A whole file there stored as a
// cut is (same project folder and name) replaces the cut.
func realClaudeFiles(t *testing.T) []string {
	t.Helper()
	byName := map[string]string{}
	roots := []string{filepath.Join("..", "..", "testdata", "transcripts", "claude-code")}
	if d := os.Getenv("MNEMO_REAL_CLAUDE"); d != "" {
		roots = append(roots, d)
	}
	for _, root := range roots {
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") && !strings.Contains(p, string(filepath.Separator)+"subagents"+string(filepath.Separator)) {
				byName[filepath.Join(filepath.Base(filepath.Dir(p)), filepath.Base(p))] = p
			}
			return nil
		})
	}
	var out []string
	for _, p := range byName {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// TestCarefulReader measures the Claude Code reader against the careful
// reader on every real transcript: at least 99.5 % of the prose messages
// kept over all files, no file below 90 %, and no injected text delivered.
func TestCarefulReader(t *testing.T) {
	files := realClaudeFiles(t)
	if len(files) == 0 {
		t.Fatal("no real Claude Code transcripts under testdata/transcripts/claude-code")
	}
	kept, found := 0, 0
	for _, p := range files {
		sc := scoreClaude(t, p)
		kept += sc.Kept
		found += sc.Found
		if sc.share() < 0.90 {
			t.Errorf("%s: %d of %d prose messages (%.1f %%); missing: %q", p, sc.Found, sc.Kept, 100*sc.share(), sc.Missing)
		} else if len(sc.Missing) > 0 {
			t.Logf("%s: %d of %d; missing: %q", p, sc.Found, sc.Kept, sc.Missing)
		}
		if len(sc.Injected) > 0 {
			t.Errorf("%s: injected content delivered: %q", p, sc.Injected)
		}
	}
	share := 1.0
	if kept > 0 {
		share = float64(found) / float64(kept)
	}
	t.Logf("careful reader: %d files, %d of %d prose messages (%.2f %%)", len(files), found, kept, 100*share)
	if share < 0.995 {
		t.Errorf("%.2f %% of the prose messages kept, want at least 99.5 %%", 100*share)
	}
}
