package engine_test

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The layout rules of docs/design.md ("Architecture"), checked over what
// `go list -deps` says each package really imports: data flows one way,
// files → parsers → corpora over shared layers → front ends, and a rule
// nobody checks is a rule that rots.

type goPackage struct {
	ImportPath   string
	Imports      []string
	Deps         []string
	TestImports  []string
	XTestImports []string
}

func listModule(t *testing.T) map[string]goPackage {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH: cannot list the module's packages")
	}
	cmd := exec.Command("go", "list", "-deps", "-json", "mnemo/...")
	cmd.Dir = ".."
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pkgs := map[string]goPackage{}
	dec := json.NewDecoder(out)
	for {
		var p goPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("decoding go list: %v", err)
		}
		if p.ImportPath == "mnemo" || strings.HasPrefix(p.ImportPath, "mnemo/") {
			pkgs[p.ImportPath] = p
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	return pkgs
}

func under(path, prefix string) bool { return path == prefix || strings.HasPrefix(path, prefix+"/") }

func TestLayout(t *testing.T) {
	pkgs := listModule(t)
	// The layers that exist.
	for _, must := range []string{"mnemo/engine", "mnemo/engine/sessions", "mnemo/engine/rank", "mnemo/engine/fulltext",
		"mnemo/engine/store", "mnemo/engine/vault", "mnemo/engine/watch", "mnemo/engine/admit", "mnemo/engine/transcript",
		"mnemo/engine/vectors", "mnemo/engine/embed", "mnemo/mcp", "mnemo/mcp/args", "mnemo/cmd/mnemo"} {
		if _, ok := pkgs[must]; !ok {
			t.Errorf("package %s is missing from the layout", must)
		}
	}
	// The shared layers both corpora stand on; they import neither corpus.
	shared := []string{"mnemo/engine/rank", "mnemo/engine/fulltext", "mnemo/engine/store", "mnemo/engine/vault",
		"mnemo/engine/watch", "mnemo/engine/admit", "mnemo/engine/safefile", "mnemo/engine/vectors", "mnemo/engine/embed",
		"mnemo/engine/transcript"}
	// pureIO is what a package with no I/O may not import directly (fmt
	// itself imports os, so transitive dependencies cannot tell).
	pureIO := []string{"os", "io/fs", "io/ioutil", "net", "net/http", "os/exec", "syscall", "path/filepath",
		"github.com/blevesearch/bleve/v2", "go.etcd.io/bbolt", "github.com/fsnotify/fsnotify"}
	for path, p := range pkgs {
		deps := p.Deps
		if under(path, "mnemo/engine") {
			for _, d := range deps {
				if under(d, "mnemo/mcp") || under(d, "mnemo/cmd") {
					t.Errorf("%s depends on front end %s", path, d)
				}
			}
		}
		// The two corpora never import each other, their tests included:
		// what both need lives in a shared layer.
		imports := slices.Concat(deps, p.TestImports, p.XTestImports)
		if path == "mnemo/engine" && slices.ContainsFunc(imports, func(d string) bool { return under(d, "mnemo/engine/sessions") }) {
			t.Errorf("engine (the memory corpus) or its tests import engine/sessions")
		}
		if under(path, "mnemo/engine/sessions") && slices.Contains(imports, "mnemo/engine") {
			t.Errorf("%s or its tests import engine (the memory corpus)", path)
		}
		// The memory folder is a value the memory corpus holds: a source
		// below both corpora, it imports neither, nor a front end.
		if under(path, "mnemo/engine/vault") {
			for _, d := range deps {
				if d == "mnemo/engine" || under(d, "mnemo/engine/sessions") || under(d, "mnemo/mcp") || under(d, "mnemo/cmd") {
					t.Errorf("engine/vault depends on %s: the memory folder imports no corpus and no front end", d)
				}
			}
		}
		for _, s := range shared {
			if !under(path, s) {
				continue
			}
			for _, d := range deps {
				if d == "mnemo/engine" || under(d, "mnemo/engine/sessions") {
					t.Errorf("shared layer %s depends on corpus %s", path, d)
				}
			}
		}
		if under(path, "mnemo/engine/rank") || under(path, "mnemo/graph") || under(path, "mnemo/decay") {
			for _, imp := range p.Imports {
				for _, bad := range pureIO {
					if imp == bad || strings.HasPrefix(imp, bad+"/") {
						t.Errorf("%s must do no I/O but imports %s", path, imp)
					}
				}
			}
		}
		// A search's JSON arguments are read in one small package that the
		// CLI shares with the MCP tools: it needs the engine's Query, not
		// the MCP server or its SDK.
		if under(path, "mnemo/mcp/args") {
			for _, d := range deps {
				if d == "mnemo/mcp" || strings.HasPrefix(d, "github.com/modelcontextprotocol/") {
					t.Errorf("%s depends on %s: the argument decoding must not need the MCP server", path, d)
				}
			}
		}
		if under(path, "mnemo/cmd/mnemo/remote") {
			for _, d := range deps {
				if under(d, "mnemo/mcp") {
					t.Errorf("%s depends on %s: the socket client must not need the MCP server", path, d)
				}
			}
		}
	}
}

// TestTopLevel: the module's top level is the one the design names.
func TestTopLevel(t *testing.T) {
	allowed := map[string]bool{"engine": true, "decay": true, "graph": true, "markdown": true, "mcp": true,
		"cmd": true, "testdata": true, "docs": true, "scripts": true}
	entries, err := os.ReadDir("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if !allowed[e.Name()] {
			t.Errorf("top-level folder %s is not in the design's layout (%s)", e.Name(), filepath.Join("..", e.Name()))
		}
	}
}
