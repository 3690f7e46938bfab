package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
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

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}
