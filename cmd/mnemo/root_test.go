package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"mnemo/decay"
	"mnemo/engine"
	"mnemo/engine/embed"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestBuildConfig(t *testing.T) {
	def := decay.Default()
	withDecay := func(f func(*decay.Config)) decay.Config { d := def; f(&d); return d }
	tests := []struct {
		name string
		g    globals
		env  map[string]string
		want engine.Config
	}{
		{
			"root flag", globals{root: "/r"}, nil,
			engine.Config{MemoryDir: "/r/memory", IndexDir: "/r/index", Decay: def},
		},
		{
			"root from env", globals{}, map[string]string{EnvRoot: "/env"},
			engine.Config{MemoryDir: "/env/memory", IndexDir: "/env/index", Decay: def},
		},
		{
			"flag beats env", globals{root: "/r"}, map[string]string{EnvRoot: "/env"},
			engine.Config{MemoryDir: "/r/memory", IndexDir: "/r/index", Decay: def},
		},
		{
			"memory and index override root", globals{root: "/r", memory: "/m", index: "/i"}, nil,
			engine.Config{MemoryDir: "/m", IndexDir: "/i", Decay: def},
		},
		{
			"index alone", globals{root: "/r", index: "/i"}, nil,
			engine.Config{MemoryDir: "/r/memory", IndexDir: "/i", Decay: def},
		},
		{
			"decay from env", globals{root: "/r"},
			map[string]string{decay.EnvFunction: "powerlaw", decay.EnvHalfLife: "90"},
			engine.Config{MemoryDir: "/r/memory", IndexDir: "/r/index",
				Decay: withDecay(func(d *decay.Config) { d.Function = decay.PowerLaw; d.HalfLifeDays = 90 })},
		},
		{
			"decay flags override env", globals{root: "/r", decayFunction: "exponential", halfLifeDays: 7, halfLifeSet: true},
			map[string]string{decay.EnvFunction: "power-law", decay.EnvHalfLife: "90"},
			engine.Config{MemoryDir: "/r/memory", IndexDir: "/r/index",
				Decay: withDecay(func(d *decay.Config) { d.HalfLifeDays = 7 })},
		},
		{
			"decay function flag canonicalised", globals{root: "/r", decayFunction: "Power_Law"}, nil,
			engine.Config{MemoryDir: "/r/memory", IndexDir: "/r/index",
				Decay: withDecay(func(d *decay.Config) { d.Function = decay.PowerLaw })},
		},
		{
			"fusion", globals{root: "/r", fusion: "RRF"}, nil,
			engine.Config{MemoryDir: "/r/memory", IndexDir: "/r/index", Decay: def, Fusion: engine.RRF},
		},
		{
			"louvain gamma", globals{root: "/r"}, map[string]string{EnvLouvainGamma: " 2.5 "},
			engine.Config{MemoryDir: "/r/memory", IndexDir: "/r/index", Decay: def, LouvainGamma: 2.5},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := buildConfig(tt.g, env(tt.env))
			if err != nil {
				t.Fatalf("buildConfig: %v", err)
			}
			got.MemoryDir, got.IndexDir = filepath.ToSlash(got.MemoryDir), filepath.ToSlash(got.IndexDir)
			if got.MemoryDir != tt.want.MemoryDir || got.IndexDir != tt.want.IndexDir ||
				got.Decay != tt.want.Decay || got.Fusion != tt.want.Fusion || got.LouvainGamma != tt.want.LouvainGamma {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestBuildConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		g    globals
		env  map[string]string
		want string
	}{
		{"bad env names the variable", globals{root: "/r"}, map[string]string{decay.EnvHalfLife: "soon"}, decay.EnvHalfLife},
		{"bad function flag", globals{root: "/r", decayFunction: "linear"}, nil, "--decay-function"},
		{"zero half-life flag", globals{root: "/r", halfLifeSet: true}, nil, "--half-life-days"},
		{"bad fusion", globals{root: "/r", fusion: "max"}, nil, "--fusion"},
		{"bad louvain gamma", globals{root: "/r"}, map[string]string{EnvLouvainGamma: "-1"}, EnvLouvainGamma},
		{"louvain gamma not a number", globals{root: "/r"}, map[string]string{EnvLouvainGamma: "high"}, EnvLouvainGamma},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := buildConfig(tt.g, env(tt.env))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one naming %s", err, tt.want)
			}
			if exitCode(err) != 2 {
				t.Fatalf("exitCode = %d, want 2", exitCode(err))
			}
		})
	}
}

// runCLI runs the CLI in-process against an empty root.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	args = append([]string{"--root", t.TempDir()}, args...)
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"no command", nil, nil, "missing command"},
		{"no command names serve", nil, nil, "serve"},
		{"no command names eval", nil, nil, "eval"},
		{"page 0", nil, []string{"search", "--page", "0", "x"}, "--page 0"},
		{"page size 0", nil, []string{"search", "--page-size", "0", "x"}, "--page-size 0"},
		{"page size 0 short", nil, []string{"search", "-n", "0", "x"}, "--page-size 0"},
		{"page 0 with batch", nil, []string{"search", "--page", "0", "--batch", "-"}, "--page 0"},
		{"page size too big", nil, []string{"search", "--page-size", "201", "--no-sync", "x"}, "pageSize"},
		{"min score over 1", nil, []string{"search", "--min-score", "2", "x"}, "minScore"},
		{"serve on a public address", nil, []string{"serve", "--http", "0.0.0.0:8765"}, "non-loopback"},
		{"serve on no address", nil, []string{"serve", "--http", "nonsense"}, "HOST:PORT"},
		{"unknown command", nil, []string{"serach", "x"}, `did you mean "search"`},
		{"unknown flag", nil, []string{"search", "--fuzzy", "x"}, "unknown flag: --fuzzy"},
		{"bad flag value", nil, []string{"search", "--page", "two", "x"}, "--page"},
		{"missing query", nil, []string{"search", "--mode", "fulltext"}, "needs a query"},
		{"bad date", nil, []string{"search", "--from", "2024-13-01", "x"}, `from "2024-13-01"`},
		{"batch with query args", nil, []string{"search", "--batch", "-", "x"}, "--batch"},
		{"sync with args", nil, []string{"sync", "now"}, "no arguments"},
		{"read without id", nil, []string{"read"}, "needs a memory"},
		{"bad fusion", nil, []string{"--fusion", "max", "status"}, "--fusion"},
		{"bad env var", map[string]string{decay.EnvFunction: "linear"}, []string{"search", "x"}, decay.EnvFunction},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			code, stdout, stderr := runCLI(t, tt.args...)
			if code != 2 {
				t.Errorf("exit code = %d, want 2 (stderr %q)", code, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			if !strings.HasPrefix(stderr, "mnemo: ") || strings.Count(stderr, "\n") != 1 {
				t.Errorf("stderr = %q, want one line starting with \"mnemo: \"", stderr)
			}
			if !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr = %q, want it to mention %q", stderr, tt.want)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	code, stdout, stderr := runCLI(t, "search", "--help")
	if code != 0 || stderr != "" {
		t.Fatalf("code %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"Usage:", "--page-size", "--batch", "--no-sync", "--root"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

func TestOneLine(t *testing.T) {
	if got := oneLine("a\n b\n"); got != "a; b" {
		t.Fatalf("oneLine = %q", got)
	}
}

func TestNewEmbedder(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		flag, env string
		want      string // in the error; "" means the built-in embedder
	}{
		{"", "", ""},
		{"", "builtin", ""},
		{"builtin", "ollama:", ""}, // the flag wins
		{"", "cohere:x", "$" + embed.EnvEmbedder + `: unknown embedder "cohere:x"`},
		{"ollama:", "", "--embedder: embedder \"ollama:\" needs a model"},
	} {
		e, err := newEmbedder(ctx, globals{embedder: tt.flag}, env(map[string]string{embed.EnvEmbedder: tt.env}))
		if tt.want == "" {
			if err != nil || e.Name() != embed.BuiltinName {
				t.Errorf("flag %q, env %q: %v, %v; want the built-in embedder", tt.flag, tt.env, e, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) || exitCode(err) != 2 {
			t.Errorf("flag %q, env %q: err %v (exit %d), want a usage error saying %q", tt.flag, tt.env, err, exitCode(err), tt.want)
		}
	}
}
