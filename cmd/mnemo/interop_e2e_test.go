package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestTypeScriptSDKInterop connects the official MCP TypeScript SDK's
// client to `mnemo serve --http` with the bearer token (scripts/soak.d/
// interop.mjs): it lists the tools and searches; without the token, or
// with a wrong one, it cannot connect. It needs node and the SDK where
// scripts/soak installs it, $MNEMO_SOAK_CACHE; without them it is skipped
// (.ci/run's soak installs them first).
func TestTypeScriptSDKInterop(t *testing.T) {
	t.Parallel() // waits on mnemo and node processes
	if testing.Short() {
		t.Skip("runs the mnemo binary and node; skipped with -short")
	}
	cache := os.Getenv("MNEMO_SOAK_CACHE") // .ci/run sets it; the tests' $HOME is a temporary folder
	if cache == "" {
		t.Skip("$MNEMO_SOAK_CACHE is not set (.ci/run sets it)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	if _, err := os.Stat(filepath.Join(cache, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		t.Skipf("the MCP TypeScript SDK is not installed in %s (scripts/soak installs it)", cache)
	}
	script, err := os.ReadFile("../../scripts/soak.d/interop.mjs")
	if err != nil {
		t.Fatal(err)
	}
	// Beside the SDK, where node resolves it from.
	runner := filepath.Join(cache, "interop-"+strings.ReplaceAll(t.Name(), "/", "-")+".mjs")
	if err := os.WriteFile(runner, script, 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(runner)

	bin := mnemoBinary(t)
	root := filepath.Join(t.TempDir(), "root")
	copyTree(t, "../../testdata/vault", filepath.Join(root, "memory"))
	s := startServer(t, bin, []string{EnvHTTPToken + "=interop-token-1234"}, "--root", root, "serve", "--no-watch", "--http", "127.0.0.1:0")
	line := s.waitLog(`mcp listening on http://127\.0\.0\.1:\d+/mcp`)
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/mcp`).FindString(line)
	s.waitLog(`sync added=`)
	out, err := exec.Command(node, runner, "--url", url, "--token", "interop-token-1234").CombinedOutput()
	if err != nil {
		t.Fatalf("interop.mjs: %v\n%s\n%s", err, out, s.log())
	}
	var got struct {
		Tools               []string
		SearchError         bool
		Results             int
		NoToken, WrongToken string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("interop.mjs printed %q: %v", out, err)
	}
	if !slices.Contains(got.Tools, "SearchMemories") || !slices.Contains(got.Tools, "WriteMemory") || got.SearchError || got.Results == 0 {
		t.Errorf("with the token: %+v", got)
	}
	for name, v := range map[string]string{"no token": got.NoToken, "wrong token": got.WrongToken} {
		if v == "connected" || !strings.Contains(v, "401") {
			t.Errorf("%s: %q, want a 401 refusal", name, v)
		}
	}
	s.stop()
}
