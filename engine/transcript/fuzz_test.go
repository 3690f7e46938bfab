package transcript

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzRead feeds arbitrary bytes to every JSONL-shaped reader, whole and then
// as an append to its own first half: no input may crash a reader, fail it,
// make it call Reset after a Message, or unbalance its Coverage. The seeds
// are the fixtures; `go test` runs only them, `go test -fuzz FuzzRead`
// explores. Redaction is left out of
// the loop (gitleaks' 222 expressions under coverage instrumentation take
// seconds per input); TestRedact* cover it.
func FuzzRead(f *testing.F) {
	for _, p := range []string{claudeFixture, codexFixture, codexRollback, geminiFixture, geminiJSONL, openclawFixture, jsonlFixture, "claude-sidebranch.jsonl"} {
		b, err := os.ReadFile(filepath.Join("testdata", filepath.FromSlash(p)))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	kinds := []struct {
		kind Kind
		name string
	}{{ClaudeCode, "s.jsonl"}, {Codex, "rollout-x.jsonl"}, {Gemini, "session-x.json"}, {Gemini, "session-x.jsonl"}, {OpenClaw, "s.jsonl"}, {JSONL, "s.jsonl"}}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		for _, k := range kinds {
			path := filepath.Join(dir, k.name)
			if err := os.WriteFile(path, data[:len(data)/2], 0o644); err != nil {
				t.Fatal(err)
			}
			delivered := false
			h := Handler{
				Reset: func() error {
					if delivered {
						return errors.New("Reset after Message")
					}
					return nil
				},
				Message: func(Message) error { delivered = true; return nil },
			}
			opt := Options{MaxLineBytes: 1 << 12}
			res, err := readWith(context.Background(), Source{Kind: k.kind}, path, Cursor{}, opt, h, noRedact)
			if err != nil {
				t.Fatalf("%s, first half: %v", k.kind, err)
			}
			if !res.Coverage.Balanced() {
				t.Fatalf("%s, first half: coverage %+v does not balance", k.kind, res.Coverage)
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			delivered = false
			res2, err := readWith(context.Background(), Source{Kind: k.kind}, path, res.Cursor, opt, h, noRedact)
			if err != nil {
				t.Fatalf("%s, whole: %v", k.kind, err)
			}
			if !res2.Coverage.Balanced() {
				t.Fatalf("%s, whole: coverage %+v does not balance", k.kind, res2.Coverage)
			}
		}
	})
}

func noRedact(s string) string { return s }
