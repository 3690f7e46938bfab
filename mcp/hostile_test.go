package mcp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mnemo/mcp"
)

// TestHostileInput sends arguments meant to escape the memory folder, crash
// the server or slip past validation. Every one must come back as a clean,
// one-line error result, and none may change a byte of the memory folder
// or of the folder a symlink inside it points to.
func TestHostileInput(t *testing.T) {
	outside := t.TempDir()
	must(t, os.WriteFile(filepath.Join(outside, "secret.md"), []byte("# Secret\n\nswordfish\n"), 0o644))
	e := newEnv(t, true, nil, mcp.Options{Sessions: newSessions(t)})
	must(t, os.Symlink(outside, filepath.Join(e.dir, "escape")))
	must(t, os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(e.dir, "leak.md")))
	before, beforeOut := treeHash(t, e.dir), treeHash(t, outside)

	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	huge := strings.Repeat("a", 1<<20)
	adr := "decisions/adr-001-bbolt-over-sqlite"
	cases := []struct {
		name string
		tool string
		args any
	}{
		// Path traversal in identifiers.
		{"dotdot", "ReadMemory", map[string]any{"identifier": "../../../../etc/passwd"}},
		{"uri dotdot", "ReadMemory", map[string]any{"identifier": "memory://../../etc/passwd"}},
		{"absolute", "ReadMemory", map[string]any{"identifier": "/etc/passwd"}},
		{"url-encoded slashes", "ReadMemory", map[string]any{"identifier": "..%2f..%2f..%2fetc%2fpasswd"}},
		{"url-encoded dots", "ReadMemory", map[string]any{"identifier": "%2e%2e/%2e%2e/etc/passwd"}},
		{"uri url-encoded", "ReadMemory", map[string]any{"identifier": "memory://%2e%2e%2f%2e%2e%2fetc%2fpasswd"}},
		{"backslashes", "ReadMemory", map[string]any{"identifier": `..\..\windows\win.ini`}},
		{"drive letter", "ReadMemory", map[string]any{"identifier": `C:\Windows\win.ini`}},
		{"NUL", "ReadMemory", map[string]any{"identifier": adr + "\x00.md"}},
		{"encoded NUL", "ReadMemory", map[string]any{"identifier": "decisions%00/x"}},
		{"symlinked folder", "ReadMemory", map[string]any{"identifier": "escape/secret"}},
		{"symlinked file", "ReadMemory", map[string]any{"identifier": "leak"}},
		{"huge identifier", "ReadMemory", map[string]any{"identifier": huge}},
		// Wrong shapes and types.
		{"identifier number", "ReadMemory", map[string]any{"identifier": 123}},
		{"identifier missing", "ReadMemory", map[string]any{}},
		{"identifier null", "ReadMemory", raw(`{"identifier":null}`)},
		{"unknown parameter", "ReadMemory", map[string]any{"identifier": adr, "path": "x"}},
		{"arguments array", "ReadMemory", raw(`[1,2]`)},
		{"arguments string", "ReadMemory", raw(`"decisions/adr-001"`)},
		// Concept graph arguments.
		{"graph file dotdot", "ExtractConceptsFromFile", map[string]any{"identifier": "../../../../etc/passwd"}},
		{"graph file symlink", "ExtractConceptsFromFile", map[string]any{"identifier": "leak"}},
		{"huge concept", "BuildContext", map[string]any{"conceptName": huge}},
		{"concept NUL", "BuildContext", map[string]any{"conceptName": "bbolt\x00"}},
		{"depth -1", "BuildContext", map[string]any{"conceptName": "bbolt", "depth": -1}},
		{"Visualize depth 0", "Visualize", map[string]any{"conceptName": "bbolt", "depth": 0}},
		{"depth 5", "BuildContext", map[string]any{"conceptName": "bbolt", "depth": 5}},
		{"maxEntities huge", "BuildContext", map[string]any{"conceptName": "bbolt", "maxEntities": 1e9}},
		{"concept number", "Visualize", map[string]any{"conceptName": 7}},
		{"maxNodes 101", "Visualize", map[string]any{"conceptName": "bbolt", "maxNodes": 101}},
		{"maxResults -1", "FindSimilarConcepts", map[string]any{"conceptName": "bbolt", "maxResults": -1}},
		// Search arguments.
		{"unknown mode", "SearchMemories", map[string]any{"query": "bbolt", "mode": "Fuzzy"}},
		{"page 0", "SearchMemories", map[string]any{"query": "bbolt", "page": 0}},
		{"negative page", "SearchMemories", map[string]any{"query": "bbolt", "page": -1}},
		{"huge page", "SearchMemories", map[string]any{"query": "bbolt", "page": 1e15}},
		{"overflowing page", "SearchMemories", raw(`{"query":"bbolt","page":1e400}`)},
		{"fractional page", "SearchMemories", map[string]any{"query": "bbolt", "page": 1.5}},
		{"pageSize 201", "SearchMemories", map[string]any{"query": "bbolt", "pageSize": 201}},
		{"pageSize 0", "SearchMemories", map[string]any{"query": "bbolt", "pageSize": 0}},
		{"pageSize string", "SearchMemories", map[string]any{"query": "bbolt", "pageSize": "10"}},
		{"query missing", "SearchMemories", map[string]any{"mode": "Hybrid"}},
		{"query blank", "SearchMemories", map[string]any{"query": "   "}},
		{"query object", "SearchMemories", map[string]any{"query": map[string]any{"$ne": ""}}},
		{"huge query", "SearchMemories", map[string]any{"query": huge}},
		{"invalid UTF-8 query", "SearchMemories", raw("{\"query\":\"\xff\xfe\xfd\"}")},
		{"folder dotdot", "SearchMemories", map[string]any{"query": "bbolt", "folder": "../"}},
		{"folder symlink", "SearchMemories", map[string]any{"query": "swordfish", "folder": "escape"}},
		{"tags an object", "SearchMemories", map[string]any{"query": "bbolt", "tags": map[string]any{"a": 1}}},
		{"tags numbers", "SearchMemories", map[string]any{"query": "bbolt", "tags": []int{1, 2}}},
		{"minScore 2", "SearchMemories", map[string]any{"query": "bbolt", "minScore": 2}},
		{"minScore string", "SearchMemories", map[string]any{"query": "bbolt", "minScore": "high"}},
		{"bad date", "SearchMemories", map[string]any{"query": "bbolt", "from": "yesterday"}},
		{"from after to", "SearchMemories", map[string]any{"query": "bbolt", "from": "2025-02-01", "to": "2025-01-01"}},
		{"unknown sort", "SearchMemories", map[string]any{"query": "bbolt", "sort": "random"}},
		// Writes that try to leave the folder or smuggle bytes in.
		{"write dotdot", "WriteMemory", map[string]any{"title": "x", "content": "x", "folder": "../outside"}},
		{"write absolute", "WriteMemory", map[string]any{"title": "x", "content": "x", "folder": "/tmp"}},
		{"write symlink", "WriteMemory", map[string]any{"title": "x", "content": "x", "folder": "escape"}},
		{"write encoded", "WriteMemory", map[string]any{"title": "x", "content": "x", "folder": "..%2F..%2Fx"}},
		{"write hidden", "WriteMemory", map[string]any{"title": "x", "content": "x", "folder": ".git"}},
		{"write NUL folder", "WriteMemory", map[string]any{"title": "x", "content": "x", "folder": "a\x00b"}},
		{"write empty title", "WriteMemory", map[string]any{"title": "", "content": "x"}},
		{"write NUL title", "WriteMemory", map[string]any{"title": "a\x00b", "content": "x"}},
		{"write invalid UTF-8 title", "WriteMemory", raw("{\"title\":\"\xff\xfe\",\"content\":\"x\"}")},
		{"write NUL content", "WriteMemory", map[string]any{"title": "x", "content": "a\x00b"}},
		{"write huge title", "WriteMemory", map[string]any{"title": huge, "content": "x"}},
		{"write content missing", "WriteMemory", map[string]any{"title": "x"}},
		{"write tags a number", "WriteMemory", map[string]any{"title": "x", "content": "x", "tags": 7}},
		{"write existing title", "WriteMemory", map[string]any{"title": "ADR-001: Why we chose bbolt over SQLite for index state", "content": "x", "folder": "decisions"}},
		// Edits.
		{"edit dotdot", "EditMemory", map[string]any{"identifier": "../../etc/passwd", "operation": "append", "content": "x"}},
		{"edit symlink", "EditMemory", map[string]any{"identifier": "escape/secret", "operation": "append", "content": "x"}},
		{"edit unknown op", "EditMemory", map[string]any{"identifier": adr, "operation": "truncate", "content": ""}},
		{"edit bad checksum", "EditMemory", map[string]any{"identifier": adr, "operation": "append", "content": "x", "checksum": "zz"}},
		{"edit stale checksum", "EditMemory", map[string]any{"identifier": adr, "operation": "append", "content": "x", "checksum": strings.Repeat("0", 64)}},
		{"edit negative count", "EditMemory", map[string]any{"identifier": adr, "operation": "find_replace", "find": "bbolt", "content": "x", "expectedCount": -1}},
		{"edit count mismatch", "EditMemory", map[string]any{"identifier": adr, "operation": "find_replace", "find": "bbolt", "content": "x", "expectedCount": 1}},
		{"edit count string", "EditMemory", map[string]any{"identifier": adr, "operation": "find_replace", "find": "bbolt", "content": "x", "expectedCount": "2"}},
		{"edit no section", "EditMemory", map[string]any{"identifier": adr, "operation": "replace_section", "section": "Nope", "content": "x"}},
		// Deletes and moves.
		{"delete without confirm", "DeleteMemory", map[string]any{"identifier": adr}},
		{"delete confirm string", "DeleteMemory", map[string]any{"identifier": adr, "confirm": "yes"}},
		{"delete dotdot", "DeleteMemory", map[string]any{"identifier": "../x", "confirm": true}},
		{"delete symlink", "DeleteMemory", map[string]any{"identifier": "escape/secret", "confirm": true}},
		{"delete absolute", "DeleteMemory", map[string]any{"identifier": "/etc/passwd", "confirm": true}},
		{"move dotdot", "MoveMemory", map[string]any{"identifier": adr, "destination": "../../tmp/x"}},
		{"move absolute", "MoveMemory", map[string]any{"identifier": adr, "destination": "/tmp/x"}},
		{"move symlink", "MoveMemory", map[string]any{"identifier": adr, "destination": "escape/x"}},
		{"move encoded", "MoveMemory", map[string]any{"identifier": adr, "destination": "%2e%2e/x"}},
		{"move NUL", "MoveMemory", map[string]any{"identifier": adr, "destination": "a\x00b"}},
		{"move onto existing", "MoveMemory", map[string]any{"identifier": adr, "destination": "decisions/adr-002-bleve-bm25-scoring"}},
		{"move hidden", "MoveMemory", map[string]any{"identifier": adr, "destination": ".trash/"}},
		// Listing, activity, admin.
		{"list dotdot", "ListMemories", map[string]any{"folder": "../"}},
		{"list symlink", "ListMemories", map[string]any{"folder": "escape"}},
		{"list absolute", "ListMemories", map[string]any{"folder": "/"}},
		{"recent limit 0", "RecentActivity", map[string]any{"limit": 0}},
		{"recent limit huge", "RecentActivity", map[string]any{"limit": 1000000}},
		{"recent bad span", "RecentActivity", map[string]any{"timespan": "forever"}},
		{"recent negative span", "RecentActivity", map[string]any{"timespan": "-5h"}},
		{"sync full string", "Sync", map[string]any{"full": "yes"}},
		// Sessions.
		{"sessions query missing", "SearchSessions", map[string]any{"project": "x"}},
		{"sessions huge query", "SearchSessions", map[string]any{"query": huge}},
		{"sessions stopwords only", "SearchSessions", map[string]any{"query": "the of and"}},
		{"sessions limit 201", "SearchSessions", map[string]any{"query": "retry", "limit": 201}},
		{"sessions maxHits 0", "SearchSessions", map[string]any{"query": "retry", "maxHits": 0}},
		{"sessions maxHits 21", "SearchSessions", map[string]any{"query": "retry", "maxHits": 21}},
		{"sessions bad mode", "SearchSessions", map[string]any{"query": "retry", "mode": "grep"}},
		{"sessions bad role", "SearchSessions", map[string]any{"query": "retry", "role": "system"}},
		{"sessions bad date", "SearchSessions", map[string]any{"query": "retry", "from_date": "last week"}},
		{"sessions aliases disagree", "SearchSessions", map[string]any{"query": "retry", "sessionId": "a", "session_id": "b"}},
		{"sessions huge project", "SearchSessions", map[string]any{"query": "retry", "project": huge}},
		{"sessions unknown parameter", "SearchSessions", map[string]any{"query": "retry", "folder": "x"}},
		{"get session missing id", "GetSession", map[string]any{}},
		{"get session unknown", "GetSession", map[string]any{"sessionId": "../../etc/passwd"}},
		{"get session negative offset", "GetSession", map[string]any{"sessionId": testSession, "offset": -1}},
		{"get session limit 0", "GetSession", map[string]any{"sessionId": testSession, "limit": 0}},
		{"get session huge id", "GetSession", map[string]any{"sessionId": huge}},
		{"get message missing id", "GetMessage", map[string]any{"sessionId": testSession}},
		{"get message unknown", "GetMessage", map[string]any{"sessionId": testSession, "messageId": "nope"}},
		{"get message context 51", "GetMessage", map[string]any{"sessionId": testSession, "messageId": "m1", "context": 51}},
		{"get message NUL", "GetMessage", map[string]any{"sessionId": testSession, "messageId": "m\x00"}},
		{"status unknown parameter", "MemoryStatus", map[string]any{"verbose": true}},
		{"config unknown parameter", "GetConfig", map[string]any{"all": 1}},
	}
	if len(cases) < 30 {
		t.Fatalf("only %d hostile cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg := e.fails(c.tool, c.args)
			if strings.Contains(msg, "swordfish") || strings.Contains(msg, "root:") {
				t.Errorf("error leaks content: %s", msg)
			}
			if strings.Contains(msg, "internal error") {
				t.Errorf("handler panicked: %s", msg)
			}
		})
	}
	if treeHash(t, e.dir) != before {
		t.Error("hostile calls changed the memory folder")
	}
	if treeHash(t, outside) != beforeOut {
		t.Error("hostile calls changed the folder outside")
	}
	// The server is still there and answers.
	if p := ok[searchPage](e, "SearchMemories", map[string]any{"query": "bbolt"}); p.TotalCount == 0 {
		t.Error("search after the hostile calls found nothing")
	}
}
