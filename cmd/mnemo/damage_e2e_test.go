package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDamagedIndexCLI: garbage over every full-text segment. search
// --no-sync fails with one line that says the index is damaged and to run
// sync (exit 1, no stack trace); search (which syncs first) rebuilds, says
// so on stderr in one line, and answers; status then shows nothing amiss.
func TestDamagedIndexCLI(t *testing.T) {
	t.Parallel() // waits on mnemo processes
	if testing.Short() {
		t.Skip("runs the mnemo binary; skipped with -short")
	}
	bin := mnemoBinary(t)
	root := filepath.Join(t.TempDir(), "root")
	copyTree(t, "../../testdata/vault", filepath.Join(root, "memory"))
	if code, _, stderr := runBinary(t, bin, "", "--root", root, "sync"); code != 0 {
		t.Fatalf("sync: %d %s", code, stderr)
	}
	zaps, _ := filepath.Glob(filepath.Join(root, "index", "fulltext.bleve", "store", "*.zap"))
	if len(zaps) == 0 {
		t.Fatal("no segment")
	}
	for _, z := range zaps {
		f, err := os.OpenFile(z, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := f.Stat()
		f.WriteAt([]byte(strings.Repeat("\xde\xad\xbe\xef", 64)), fi.Size()/2)
		f.Close()
	}

	code, stdout, stderr := runBinary(t, bin, "", "--root", root, "search", "--no-sync", "bbolt")
	if code != 1 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "damaged") || !strings.Contains(stderr, "run sync") || stdout != "" {
		t.Errorf("search --no-sync over a damaged index: exit %d, stdout %q, stderr %q; want exit 1 and one line saying damaged, run sync", code, stdout, stderr)
	}
	code, stdout, stderr = runBinary(t, bin, "", "--root", root, "--json", "status")
	if code != 0 || !strings.Contains(stdout, `"damaged"`) {
		t.Errorf("status over a damaged index: exit %d, %s %s; want damaged shown", code, stdout, stderr)
	}
	code, stdout, stderr = runBinary(t, bin, "", "--root", root, "search", "bbolt")
	if code != 0 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "rebuilt the index") || !strings.Contains(stdout, "bbolt") {
		t.Errorf("search over a damaged index: exit %d, stdout %q, stderr %q; want a rebuild noted in one line, then results", code, stdout, stderr)
	}
	code, stdout, _ = runBinary(t, bin, "", "--root", root, "--json", "status")
	if code != 0 || strings.Contains(stdout, `"damaged"`) {
		t.Errorf("status after the rebuild: exit %d, %s", code, stdout)
	}
}
