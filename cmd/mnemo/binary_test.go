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

	"mnemo/engine/enginetest"
)

// built is the mnemo binary the end-to-end tests run: this test binary,
// under a symlink named mnemo, so that TestMain runs main instead of the
// tests. It is the same package main a go build would link, without the
// two seconds of a second link per test run.
var built struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// mnemoName is the name the end-to-end tests run this binary under.
const mnemoName = "mnemo"

// mnemoBinary makes the symlink on first use and returns its path.
func mnemoBinary(t testing.TB) string {
	t.Helper()
	built.once.Do(func() {
		self, err := os.Executable()
		if err != nil {
			built.err = err
			return
		}
		if built.dir, built.err = os.MkdirTemp("", "mnemo-bin-"); built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, mnemoName)
		built.err = os.Symlink(self, built.path)
	})
	if built.err != nil {
		t.Fatalf("mnemo binary: %v", built.err)
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

// sessionsCLI returns a function that runs `mnemo --root root sessions
// pre... args...` and returns its output, failing the test on a non-zero exit.
func sessionsCLI(t testing.TB, bin, root string, pre ...string) func(args ...string) string {
	return func(args ...string) string {
		t.Helper()
		all := append(append([]string{"--root", root, "sessions"}, pre...), args...)
		code, out, errs := runBinary(t, bin, "", all...)
		if code != 0 {
			t.Fatalf("mnemo sessions %q: exit %d: %s", args, code, errs)
		}
		return out
	}
}

func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == mnemoName {
		main() // started by mnemoBinary's symlink: be mnemo
		return
	}
	cleanup := enginetest.RAMTempDir() // thousands of small files: see its doc
	// serve and the sessions commands read agent transcripts under $HOME:
	// no test may index the real ones.
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
	cleanup()
	os.Exit(code)
}
