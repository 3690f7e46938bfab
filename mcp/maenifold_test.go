package mcp_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"mnemo/mcp"
)

// maenifoldFiles are the memories the spelling cases change, one each, so
// the cases do not depend on one another's order.
var maenifoldFiles = map[string]string{
	"notes/move-me.md":  "---\ntitle: Move me\n---\nA note about [[bbolt]] to move.\n",
	"notes/find.md":     "---\ntitle: Find\n---\nThe old value, and the old value again, of [[bbolt]].\n",
	"notes/section.md":  "---\ntitle: Section\n---\n# Section\n\n## Status\n\nDraft.\n\n## Notes\n\nKept.\n",
	"notes/guarded.md":  "---\ntitle: Guarded\ntags: [storage, db]\ncreated: 2025-03-01\n---\nGuarded body about [[bbolt]].\n",
	"notes/guarded2.md": "---\ntitle: Guarded two\n---\nAnother guarded body.\n",
}

// TestMaenifoldSpellings: every argument spelling maenifold's own tools
// take (msbrettorg/maenifold, src/Tools/*.cs) is accepted by the tool of
// the same name and means what it means there.
func TestMaenifoldSpellings(t *testing.T) {
	e := newEnv(t, true, maenifoldFiles, mcp.Options{})
	file := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(e.dir, filepath.FromSlash(rel)))
		if err != nil {
			return ""
		}
		return string(b)
	}
	checksum := func(rel string) string {
		sum := sha256.Sum256([]byte(file(rel)))
		return hex.EncodeToString(sum[:])
	}
	tests := []struct {
		name  string
		tool  string
		args  map[string]any
		check func(t *testing.T, res string)
	}{
		{"MoveMemory source", "MoveMemory", map[string]any{"source": "notes/move-me", "destination": "notes/moved"}, func(t *testing.T, _ string) {
			if file("notes/moved.md") == "" || file("notes/move-me.md") != "" {
				t.Error("the memory did not move")
			}
		}},
		{"EditMemory findText", "EditMemory", map[string]any{"identifier": "notes/find", "operation": "find_replace", "findText": "old value", "content": "new value", "expectedCount": 2}, func(t *testing.T, _ string) {
			if got := file("notes/find.md"); strings.Contains(got, "old value") || strings.Count(got, "new value") != 2 {
				t.Errorf("find_replace with findText: %q", got)
			}
		}},
		{"EditMemory sectionName", "EditMemory", map[string]any{"identifier": "notes/section", "operation": "replace_section", "sectionName": "Status", "content": "Done."}, func(t *testing.T, _ string) {
			if got := file("notes/section.md"); strings.Contains(got, "Draft.") || !strings.Contains(got, "Done.") || !strings.Contains(got, "Kept.") {
				t.Errorf("replace_section with sectionName: %q", got)
			}
		}},
		{"ListMemories path", "ListMemories", map[string]any{"path": "decisions"}, func(t *testing.T, res string) {
			if !strings.HasPrefix(res, "decisions: 0 folders, 6 memories") {
				t.Errorf("ListMemories{path: decisions}: %.200s", res)
			}
		}},
		{"RecentActivity filter thinking", "RecentActivity", map[string]any{"filter": "thinking", "limit": 200}, func(t *testing.T, res string) {
			uris := regexp.MustCompile(`memory://\S+[^)]`).FindAllString(res, -1)
			if len(uris) == 0 || slices.ContainsFunc(uris, func(u string) bool { return !strings.HasPrefix(u, "memory://thinking/") }) {
				t.Errorf("filter thinking lists %v", uris)
			}
		}},
		{"RecentActivity filter memory", "RecentActivity", map[string]any{"filter": "memory", "limit": 200}, func(t *testing.T, res string) {
			if strings.Contains(res, "memory://thinking/") || !strings.Contains(res, "memory://decisions/") {
				t.Errorf("filter memory: %.300s", res)
			}
		}},
		{"RecentActivity includeContent", "RecentActivity", map[string]any{"includeContent": true, "filter": "memory", "limit": 200}, func(t *testing.T, res string) {
			if !strings.Contains(res, "Another guarded body.") {
				t.Errorf("includeContent: no content in %.300s", res)
			}
		}},
		{"RecentActivity .NET timespan d.hh:mm:ss", "RecentActivity", map[string]any{"timespan": "36500.00:00:00", "limit": 200}, func(t *testing.T, res string) {
			if !strings.Contains(res, "memory://decisions/") {
				t.Errorf("100 years as 36500.00:00:00 lists: %.300s", res)
			}
		}},
		{"RecentActivity .NET timespan hh:mm:ss", "RecentActivity", map[string]any{"timespan": "00:00:01.5"}, func(t *testing.T, res string) {
			if strings.Contains(res, "memory://decisions/") {
				t.Errorf("1.5 seconds as 00:00:01.5 lists the vault's old memories: %.300s", res)
			}
		}},
		{"ReadMemory includeChecksum false", "ReadMemory", map[string]any{"identifier": "notes/guarded2", "includeChecksum": false}, func(t *testing.T, res string) {
			if strings.Contains(res, "Checksum:") || strings.Contains(res, checksum("notes/guarded2.md")) {
				t.Errorf("includeChecksum false still shows it: %q", res)
			}
		}},
		{"ReadMemory includeChecksum true", "ReadMemory", map[string]any{"identifier": "notes/guarded", "includeChecksum": true}, func(t *testing.T, res string) {
			for _, want := range []string{"# Guarded\n", "URI: memory://notes/guarded\n", "Created: 2025-03-01T00:00:00Z\n", "Modified: ", "Tags: storage, db\n", "Checksum: " + checksum("notes/guarded.md") + "\n"} {
				if !strings.Contains(res, want) {
					t.Errorf("ReadMemory text lacks %q:\n%s", want, res)
				}
			}
		}},
		{"BuildContext depth 0", "BuildContext", map[string]any{"conceptName": "bbolt", "depth": 0}, func(t *testing.T, res string) {
			if !strings.Contains(res, "Direct relations:") || strings.Contains(res, "Expanded relations:") {
				t.Errorf("depth 0 should give the direct relations only:\n%.400s", res)
			}
		}},
		{"SearchMemories tags as one string", "SearchMemories", map[string]any{"query": "guarded", "tags": "storage"}, func(t *testing.T, res string) {
			if !strings.Contains(res, "memory://notes/guarded ") || strings.Contains(res, "memory://notes/guarded2") {
				t.Errorf("tags \"storage\": %.400s", res)
			}
		}},
		{"WriteMemory tags as one string", "WriteMemory", map[string]any{"title": "Tagged once", "content": "x [[bbolt]]", "tags": "storage"}, func(t *testing.T, _ string) {
			if got := file("tagged-once.md"); !strings.Contains(got, "storage") {
				t.Errorf("written with tags \"storage\": %q", got)
			}
		}},
		{"EditMemory full checksum", "EditMemory", map[string]any{"identifier": "notes/guarded", "operation": "append", "content": "More.", "checksum": checksum("notes/guarded.md")}, nil},
		{"EditMemory maenifold's base64 checksum", "EditMemory", map[string]any{"identifier": "notes/guarded2", "operation": "append", "content": "More.", "checksum": base64Sum(file("notes/guarded2.md"))}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := e.call(tt.tool, tt.args)
			if res.IsError {
				t.Fatalf("%s(%v) refused: %s", tt.tool, tt.args, text(res))
			}
			if tt.check != nil {
				tt.check(t, text(res))
			}
		})
	}
}

func base64Sum(s string) string {
	sum := sha256.Sum256([]byte(s))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// TestMaenifoldSpellingsRefused: what maenifold's spellings must not
// open — an argument given twice under two names, a stale or malformed
// checksum, a bad timespan or filter, an unknown parameter.
func TestMaenifoldSpellingsRefused(t *testing.T) {
	e := newEnv(t, true, maenifoldFiles, mcp.Options{})
	tests := []struct {
		name, tool string
		args       map[string]any
		want       string
	}{
		{"source and identifier", "MoveMemory", map[string]any{"source": "notes/find", "identifier": "notes/find", "destination": "x"}, "identifier and source are the same argument"},
		{"findText and find", "EditMemory", map[string]any{"identifier": "notes/find", "operation": "find_replace", "find": "a", "findText": "b", "content": "c"}, "find and findText are the same argument"},
		{"unknown parameter", "MoveMemory", map[string]any{"sourceId": "notes/find", "destination": "x"}, `unknown parameter "sourceId"`},
		{"stale checksum", "EditMemory", map[string]any{"identifier": "notes/find", "operation": "append", "content": "x", "checksum": strings.Repeat("0", 64)}, "checksum"},
		{"checksum prefix", "EditMemory", map[string]any{"identifier": "notes/find", "operation": "append", "content": "x", "checksum": "0123456789ab"}, "64 hex digits"},
		{"hours past 23", "RecentActivity", map[string]any{"timespan": "25:00:00"}, "timespan"},
		{"negative timespan", "RecentActivity", map[string]any{"timespan": "-1.00:00:00"}, "timespan"},
		{"zero timespan", "RecentActivity", map[string]any{"timespan": "00:00:00"}, "timespan"},
		{"unknown filter", "RecentActivity", map[string]any{"filter": "sessions"}, "filter"},
		{"learn not a boolean", "ReadMemory", map[string]any{"identifier": "notes/find", "learn": "yes"}, "learn must be true or false"},
		{"depth below 0", "BuildContext", map[string]any{"conceptName": "bbolt", "depth": -1}, "depth"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if msg := e.fails(tt.tool, tt.args); !strings.Contains(msg, tt.want) {
				t.Errorf("%s(%v): %q, want it to say %q", tt.tool, tt.args, msg, tt.want)
			}
		})
	}
	if got := e.call("EditMemory", map[string]any{"identifier": "notes/find", "operation": "append", "content": "x", "checksum": strings.Repeat("0", 64)}); !strings.Contains(text(got), "changed") && !strings.Contains(text(got), "checksum") {
		t.Errorf("stale checksum: %s", text(got))
	}
}

// TestLearn: learn: true on any tool returns its documentation, made from
// its description and schema, and does not run it.
func TestLearn(t *testing.T) {
	e := newEnv(t, true, nil, mcp.Options{})
	for _, name := range allTools {
		t.Run(name, func(t *testing.T) {
			res := e.call(name, map[string]any{"learn": true})
			doc := text(res)
			if !res.IsError || !strings.HasPrefix(doc, name+" was not run: learn is true") || !strings.Contains(doc, "\n# "+name+" — ") || !strings.Contains(doc, "- learn (boolean") {
				t.Errorf("%s{learn: true}: isError %v, %.300q", name, res.IsError, doc)
			}
		})
	}
	doc := text(e.call("MoveMemory", map[string]any{"learn": true}))
	for _, want := range []string{"- identifier (string, required)", "- destination (string, required)", "- source for identifier (maenifold's spelling)"} {
		if !strings.Contains(doc, want) {
			t.Errorf("MoveMemory's documentation lacks %q:\n%s", want, doc)
		}
	}
	if doc := text(e.call("SearchMemories", map[string]any{"learn": true})); !strings.Contains(doc, "- pageSize (integer, default 10, 1 to 200)") {
		t.Errorf("SearchMemories' documentation:\n%s", doc)
	}
	// Not run: no memory is written, and learn: false runs the tool.
	e.call("WriteMemory", map[string]any{"title": "Learnt", "content": "x", "learn": true})
	if _, err := os.Stat(filepath.Join(e.dir, "learnt.md")); err == nil {
		t.Error("WriteMemory{learn: true} wrote the memory")
	}
	if res := e.call("WriteMemory", map[string]any{"title": "Learnt", "content": "x", "learn": false}); res.IsError {
		t.Errorf("WriteMemory{learn: false}: %s", text(res))
	}
}
