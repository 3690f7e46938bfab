package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"mnemo/engine"
)

// TestEndToEnd runs the binary and drives it as the benchmarks do: sync
// the test vault into a fresh index, search it, run a batch, read a hit and
// ask for the status.
func TestEndToEnd(t *testing.T) {
	t.Parallel() // waits on mnemo processes
	if testing.Short() {
		t.Skip("runs the mnemo binary; skipped with -short")
	}
	dir := t.TempDir()
	bin := mnemoBinary(t)
	vault, err := filepath.Abs("../../testdata/vault")
	if err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(dir, "index")

	mnemo := func(stdin string, args ...string) (code int, stdout, stderr string) {
		t.Helper()
		return runBinary(t, bin, stdin, append([]string{"--memory", vault, "--index", index}, args...)...)
	}

	code, stdout, stderr := mnemo("", "sync")
	if code != 0 {
		t.Fatalf("sync: exit %d: %s", code, stderr)
	}
	if !regexp.MustCompile(`^synced [1-9]\d* files: \d+ added, \d+ updated, \d+ removed, \d+ unchanged, \d+ skipped, \d+ warnings? in \d+\.\ds\n$`).MatchString(stdout) {
		t.Errorf("sync summary = %q", stdout)
	}

	// Decay depends on the clock and the vault's memories are dated 2025–2026,
	// so queries fix "now" where ADR-001 (bbolt over SQLite) is a month old;
	// at today's date decay may rightly bury it.
	const now = "2025-03-01T00:00:00Z"

	isBbolt := func(path, title string) bool {
		return strings.Contains(strings.ToLower(path), "bbolt") || strings.Contains(strings.ToLower(title), "bbolt")
	}

	var firstURI string
	t.Run("search json", func(t *testing.T) {
		code, stdout, stderr := mnemo("", "search", "--json", "--now", now, "bbolt")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var p engine.Page
		if err := json.Unmarshal([]byte(stdout), &p); err != nil {
			t.Fatalf("output is not a Page: %v\n%s", err, stdout)
		}
		found := false
		for _, r := range p.Results {
			found = found || isBbolt(r.Path, r.Title)
		}
		if !found {
			t.Fatalf("no result about bbolt in %+v", p.Results)
		}
		firstURI = p.Results[0].URI
	})

	t.Run("search text", func(t *testing.T) {
		code, stdout, stderr := mnemo("", "search", "--no-sync", "--mode", "fulltext", "--now", now, "bbolt")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if !regexp.MustCompile(`(?m)^[1-9]\d* results? \(page 1 of \d+, mode fulltext\)$`).MatchString(stdout) {
			t.Fatalf("no header in:\n%s", stdout)
		}
	})

	t.Run("batch", func(t *testing.T) {
		in := filepath.Join(dir, "queries.jsonl")
		lines := `{"id":"q1","query":"bbolt","mode":"fulltext","page_size":20}
{"id":"q2","query":"   "}

{"id":"q3","query":"bbolt","top_k":5}
{"id":"q4","query":"why did we choose bbolt over sqlite","now":"2025-03-01"}
`
		if err := os.WriteFile(in, []byte(lines), 0o644); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := mnemo("", "search", "--no-sync", "--now", now, "--batch", in, "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var got []batchResult
		sc := bufio.NewScanner(strings.NewReader(stdout))
		for sc.Scan() {
			var r batchResult
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("line %q: %v", sc.Text(), err)
			}
			got = append(got, r)
		}
		if len(got) != 4 {
			t.Fatalf("got %d lines, want 4:\n%s", len(got), stdout)
		}
		for i, id := range []string{`"q1"`, `"q2"`, `"q3"`, `"q4"`} {
			if string(got[i].ID) != id {
				t.Errorf("line %d id = %s, want %s", i+1, got[i].ID, id)
			}
		}
		for _, i := range []int{0, 3} {
			found := false
			for _, r := range got[i].Results {
				found = found || isBbolt(r.Path, "")
			}
			if got[i].Error != "" || !found || got[i].TotalCount < len(got[i].Results) {
				t.Errorf("%s: want a bbolt memory among the results, got %+v", got[i].ID, got[i])
			}
		}
		if got[1].Error == "" || got[1].TotalCount != 0 || got[1].Results == nil {
			t.Errorf("q2 (blank query) should fail: %+v", got[1])
		}
		if !strings.Contains(got[2].Error, `unknown field "top_k"`) {
			t.Errorf("q3 error = %q", got[2].Error)
		}
		if !strings.Contains(stderr, "2 of 4 queries failed") {
			t.Errorf("stderr = %q, want the failure count", stderr)
		}
	})

	t.Run("batch stdin with sync", func(t *testing.T) {
		code, stdout, stderr := mnemo(`{"id":1,"query":"bbolt"}`+"\n", "search", "--batch", "-")
		if code != 0 || !strings.HasPrefix(stdout, `{"id":1,"totalCount":`) {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
	})

	t.Run("read", func(t *testing.T) {
		if firstURI == "" {
			t.Skip("no URI from search")
		}
		code, stdout, stderr := mnemo("", "read", "--json", firstURI)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var m engine.Memory
		if err := json.Unmarshal([]byte(stdout), &m); err != nil || m.URI != firstURI || m.Content == "" {
			t.Fatalf("read %s: %v %+v", firstURI, err, m)
		}
		if code, _, stderr := mnemo("", "read", "no/such/memory.md"); code != 1 {
			t.Errorf("read of a missing memory: exit %d, want 1 (%s)", code, stderr)
		}
	})

	t.Run("status", func(t *testing.T) {
		code, stdout, stderr := mnemo("", "status", "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var s engine.Status
		if err := json.Unmarshal([]byte(stdout), &s); err != nil || s.Files == 0 {
			t.Fatalf("status: %v %+v", err, s)
		}
	})

	t.Run("engine usage errors exit 2", func(t *testing.T) {
		for _, args := range [][]string{
			{"search", "--no-sync", "--mode", "fuzzy", "bbolt"},
			{"search", "--no-sync", "--page-size", "500", "bbolt"},
			{"search", "--no-sync", "   "},
		} {
			code, _, stderr := mnemo("", args...)
			if code != 2 || !strings.HasPrefix(stderr, "mnemo: ") || strings.Count(stderr, "\n") != 1 {
				t.Errorf("%v: exit %d, stderr %q; want 2 and one line", args, code, stderr)
			}
		}
	})
}
