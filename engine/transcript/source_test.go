package transcript

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestDefaultSources(t *testing.T) {
	env := map[string]string{"CODEX_HOME": "/opt/codex", "CLAUDE_CONFIG_DIR": "/cfg/claude"}
	got := DefaultSources("/home/u", func(k string) string { return env[k] })
	want := []Source{
		{ClaudeCode, "/cfg/claude/projects"},
		{Codex, "/opt/codex/sessions"},
		{Gemini, "/home/u/.gemini/tmp"},
		{OpenClaw, "/home/u/.openclaw/agents"},
		{Pi, "/home/u/.pi/agent/sessions"},
		{CodeArchitect, "/home/u/.codearchitect/sessions"},
	}
	if len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
		t.Errorf("got %v\nwant %v first", got, want)
	}
}

func TestParseSourceFlag(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    Source
		wantErr string
	}{
		{in: "codex=/data/codex", want: Source{Codex, "/data/codex"}},
		{in: "jsonl=/var/log/agents/", want: Source{JSONL, "/var/log/agents"}},
		{in: "claude-code", wantErr: "want KIND=DIR"},
		{in: "notepad=/x", wantErr: "unknown kind"},
		{in: "gemini=", wantErr: "want KIND=DIR"},
	} {
		got, err := ParseSourceFlag(tt.in)
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%q: error %v, want %q", tt.in, err, tt.wantErr)
			}
		case err != nil || got != tt.want:
			t.Errorf("%q: got %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestDiscover(t *testing.T) {
	ctx := context.Background()
	abs := func(rel string) string {
		p, err := filepath.Abs(filepath.Join("testdata", filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	const claudeCompact = "claude/projects/-home-dev-orchard/8b2e4f60-1a3c-4d5e-8f90-a1b2c3d4e5f6.jsonl"
	sub := abs("claude/projects/-home-dev-orchard/5d1c7a0e-3b52-4c1e-9a77-0f3e2b6d8c41/subagents/agent-a1b2c3d4.jsonl")
	for _, tt := range []struct {
		src     Source
		opt     Options
		want    []string
		skipped int
	}{
		// Root given as the agent's home folder: the inner folder is found.
		{Source{ClaudeCode, abs("claude")}, Options{}, []string{abs(claudeFixture), abs(claudeCompact)}, 1},
		{Source{ClaudeCode, abs("claude/projects")}, Options{IncludeSubagents: true}, []string{abs(claudeFixture), abs(claudeCompact), sub}, 0},
		{Source{Codex, abs("codex")}, Options{}, []string{abs(codexFixture), abs(codexRollback), abs(codexOld)}, 0},
		{Source{Gemini, abs("gemini/tmp")}, Options{}, []string{abs(geminiFixture), abs(geminiJSONL),
			abs("gemini/tmp/8e66b2c02b3d05a0fe0fd982b792b8a6eee6c191a654264a17ada4818eb3dcde/chats/session-2026-03-05T09-00-11112222.json")}, 0},
		{Source{OpenClaw, abs("no-such-folder")}, Options{}, nil, 0},
		{Source{OpenClaw, abs("openclaw")}, Options{}, []string{abs(openclawFixture), abs("openclaw/agents/main/sessions/6facdbc6-233e-419f-9267-1548940995d8.jsonl")}, 0},
		{Source{CodeArchitect, abs("codearchitect")}, Options{}, []string{abs(caFixture), abs("codearchitect/sessions/2026-03-09/garden-irrigation")}, 1},
		{Source{JSONL, abs("jsonl")}, Options{}, []string{abs(jsonlFixture)}, 0},
	} {
		paths, skipped, err := tt.src.Discover(ctx, tt.opt)
		if err != nil {
			t.Fatalf("%v: %v", tt.src, err)
		}
		slices.Sort(paths)
		slices.Sort(tt.want)
		if !slices.Equal(paths, tt.want) || len(skipped) != tt.skipped {
			t.Errorf("%v: got %q skipped %v\nwant %q and %d skipped", tt.src, paths, skipped, tt.want, tt.skipped)
		}
		for _, p := range paths {
			if !tt.src.Owns(p, tt.opt) {
				t.Errorf("%v does not own %s, which it discovered", tt.src, p)
			}
		}
	}
	cc := Source{ClaudeCode, abs("claude/projects")}
	if cc.Owns(sub, Options{}) {
		t.Errorf("subagent transcript owned without IncludeSubagents")
	}
	if !cc.Owns(abs("claude/projects/-home-dev-orchard"), Options{}) {
		t.Errorf("project folder not owned: the watcher would miss new sessions in it")
	}
	if cc.Owns(abs("codex/sessions"), Options{}) || cc.Owns(filepath.Join(os.TempDir(), "x.jsonl"), Options{}) {
		t.Errorf("owns a path outside its root")
	}
}

func TestDiscoverSkipsLinks(t *testing.T) {
	root := t.TempDir()
	proj := filepath.Join(root, "projects", "-home-dev-x")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "elsewhere.jsonl")
	if err := os.WriteFile(outside, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(proj, "linked.jsonl")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if err := os.WriteFile(filepath.Join(proj, "real.jsonl"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	paths, skipped, err := Source{ClaudeCode, root}.Discover(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 1 || filepath.Base(paths[0]) != "real.jsonl" || len(skipped) != 1 || !strings.Contains(skipped[0].Reason, "symbolic link") {
		t.Errorf("paths %q, skipped %v", paths, skipped)
	}
}
