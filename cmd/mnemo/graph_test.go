package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"mnemo/engine"
)

// TestGraphCommands runs `mnemo graph` on its own, then beside a watching
// `mnemo serve`: an edit, a delete and a move made while serve runs show
// in `mnemo graph --no-sync` (answered through serve's socket) as soon as
// serve logs the sync that picked them up.
func TestGraphCommands(t *testing.T) {
	t.Parallel() // waits on mnemo processes
	if testing.Short() {
		t.Skip("runs the mnemo binary; skipped with -short")
	}
	bin := mnemoBinary(t)
	root := filepath.Join(t.TempDir(), "root")
	memory := filepath.Join(root, "memory")
	write(t, filepath.Join(memory, "a.md"), "# A\n\n[[Alpha]] and [[Beta]].\n")
	write(t, filepath.Join(memory, "b.md"), "# B\n\n[[beta]] with [[Gamma Ray|rays]].\n")
	mnemo := func(args ...string) (int, string, string) {
		t.Helper()
		return runBinary(t, bin, "", append([]string{"--root", root}, args...)...)
	}
	jsonOf := func(out any, args ...string) {
		t.Helper()
		code, stdout, stderr := mnemo(append(args, "--json")...)
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, stderr)
		}
		if err := json.Unmarshal([]byte(stdout), out); err != nil {
			t.Fatalf("%q: %v\n%s", args, err, stdout)
		}
	}
	direct := func(args ...string) []string {
		t.Helper()
		var c engine.ConceptContext
		jsonOf(&c, append([]string{"graph", "context"}, args...)...)
		var out []string
		for _, r := range c.DirectRelations {
			out = append(out, r.Name+"@"+strings.Join(r.Files, ","))
		}
		return out
	}

	if got := direct("Alpha"); !slices.Equal(got, []string{"beta@memory://a"}) {
		t.Errorf("context alpha = %v", got)
	}
	var cs struct{ Concepts []engine.ConceptInfo }
	jsonOf(&cs, "graph", "concepts")
	if len(cs.Concepts) != 3 || cs.Concepts[0] != (engine.ConceptInfo{Name: "beta", Mentions: 2, Files: 2}) {
		t.Errorf("concepts = %+v", cs.Concepts)
	}
	if code, out, _ := mnemo("graph", "show", "gamma ray"); code != 0 || !strings.HasPrefix(out, "graph LR\n  n0[\"gamma-ray\"]") {
		t.Errorf("show: exit %d\n%s", code, out)
	}
	var sim engine.Similar
	jsonOf(&sim, "graph", "similar", "beta")
	if len(sim.Similar) != 2 || sim.Similar[0].Similarity > 1 || sim.Similar[1].Similarity < 0 {
		t.Errorf("similar = %+v", sim)
	}
	if code, _, errs := mnemo("graph", "context", "alpah"); code != 1 || !strings.Contains(errs, "nearest known concepts: alpha") {
		t.Errorf("unknown concept: exit %d, %q", code, errs)
	}
	if code, _, _ := mnemo("graph", "context", "alpha", "--depth", "7"); code != 2 {
		t.Errorf("depth 7: exit %d, want 2", code)
	}

	s := startServer(t, bin, []string{EnvDebounce + "=50"}, "--root", root, "serve")
	s.waitLog(`^\S+Z start-up sync `)
	syncs := regexp.MustCompile(`^\S+Z sync added=`)
	waitSyncs := func(n int) time.Time {
		t.Helper()
		logged := s.out.waitFor(30*time.Second, func(lines []string) bool {
			k := 0
			for _, l := range lines {
				if syncs.MatchString(l) {
					k++
				}
			}
			return k >= n
		})
		if !logged {
			t.Fatalf("fewer than %d syncs logged:\n%s", n, s.log())
		}
		return time.Now()
	}

	start := time.Now()
	write(t, filepath.Join(memory, "a.md"), "# A\n\n[[Alpha]] and [[Delta]] now.\n")
	seen := waitSyncs(1)
	t.Logf("edit reached the graph in %v", seen.Sub(start))
	if got := direct("alpha", "--no-sync"); !slices.Equal(got, []string{"delta@memory://a"}) {
		t.Errorf("after edit: context alpha = %v", got)
	}

	if err := os.Remove(filepath.Join(memory, "b.md")); err != nil {
		t.Fatal(err)
	}
	waitSyncs(2)
	jsonOf(&cs, "graph", "concepts", "--no-sync")
	var names []string
	for _, c := range cs.Concepts {
		names = append(names, c.Name)
	}
	if slices.Sort(names); !slices.Equal(names, []string{"alpha", "delta"}) {
		t.Errorf("after delete: concepts %v", names)
	}

	if err := os.Rename(filepath.Join(memory, "a.md"), filepath.Join(memory, "moved.md")); err != nil {
		t.Fatal(err)
	}
	// A rename may reach the watcher as one event or two (the old path
	// first: alpha is then briefly unknown): wait sync by sync until the
	// graph shows the new path and not the old.
	deadline := time.Now().Add(30 * time.Second)
	for n := 3; ; n++ {
		waitSyncs(n)
		code, out, _ := mnemo("graph", "context", "alpha", "--no-sync", "--json")
		var c engine.ConceptContext
		if code == 0 && json.Unmarshal([]byte(out), &c) == nil && len(c.DirectRelations) == 1 &&
			slices.Equal(c.DirectRelations[0].Files, []string{"memory://moved"}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after move: exit %d, %s\n%s", code, out, s.log())
		}
	}
	var st engine.Status
	jsonOf(&st, "status")
	if st.Graph.Concepts != 2 || st.Graph.Mentions != 2 {
		t.Errorf("status graph = %+v", st.Graph)
	}
	s.stop()
}
