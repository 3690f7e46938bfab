package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// built is the mnemo binary the end-to-end tests run, built once per test
// run rather than once per test.
var built struct {
	once sync.Once
	dir  string
	path string
	out  []byte
	err  error
}

// mnemoBinary builds the binary on first use and returns its path.
func mnemoBinary(t testing.TB) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "mnemo-bin-"); built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "mnemo")
		built.out, built.err = exec.Command("go", "build", "-o", built.path, ".").CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("go build: %v\n%s", built.err, built.out)
	}
	return built.path
}

// runBinary runs bin with args and stdin, with a 30-second limit, and
// returns its exit status and output; failing to start it fails the test.
func runBinary(t testing.TB, bin, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run mnemo: %v", err)
	}
	return code, out.String(), errb.String()
}

func TestMain(m *testing.M) {
	// serve and the sessions commands read agent transcripts under $HOME:
	// no test may index the real ones. The go tool's caches stay where
	// they were, so building the binary stays cheap.
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		if os.Getenv(k) == "" {
			if out, err := exec.Command("go", "env", k).Output(); err == nil {
				os.Setenv(k, strings.TrimSpace(string(out)))
			}
		}
	}
	home, err := os.MkdirTemp("", "mnemo-home-")
	if err != nil {
		panic(err)
	}
	os.Setenv("HOME", home)
	for _, v := range []string{"CLAUDE_CONFIG_DIR", "CODEX_HOME", "OPENCLAW_STATE_DIR"} {
		os.Unsetenv(v)
	}
	code := m.Run()
	os.RemoveAll(home)
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}
