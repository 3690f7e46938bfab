package transcript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// jscan must answer as encoding/json does, or give the line up: these tests
// hold the fast decoders (scanClaude, codexParse's scan) to encoding/json's
// answer on the same lines, and check that the lines the agents write do
// take the fast path.

// claudeScanCases are edge cases of the fast path; fast says whether it
// must take them (a line it gives up goes to encoding/json, which decides).
var claudeScanCases = []struct {
	name string
	line string
	fast bool
}{
	{"user string", `{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","cwd":"/p","timestamp":"2026-03-01T09:00:00Z","message":{"role":"user","content":"hello"}}`, true},
	{"assistant blocks", `{"parentUuid":"u1","message":{"model":"m","id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"hi"},{"type":"tool_use","id":"t","name":"Bash","input":{"command":"ls","type":"x"}}],"usage":{"input_tokens":4}},"type":"assistant","uuid":"a1"}`, true},
	{"keys in odd order", `{"message":{"content":[{"text":"t","type":"text"}],"role":"assistant","id":"m"},"uuid":"a","type":"assistant","parentUuid":"p","isSidechain":false}`, true},
	{"escaped quotes and backslashes", `{"type":"user","uuid":"u\"1\\","message":{"role":"user","content":"say \"hi\" \\ back\\\\slash \/ \b\f\n\r\t \u00e9 \ud83d\ude00 end\\"}}`, true},
	{"escape at the end of a string", `{"type":"user","uuid":"u","message":{"role":"user","content":"\\"}}`, true},
	{"lone and broken surrogates", `{"type":"user","uuid":"u","message":{"role":"user","content":"\ud800 x \udc00 \ud800\u0041 \ud83d\ud83d\ude00"}}`, true},
	{"invalid UTF-8 in a kept string", "{\"type\":\"user\",\"uuid\":\"u\",\"message\":{\"role\":\"user\",\"content\":\"bad \xff\xfe \xc3 end \xe2\x82\"}}", true},
	{"invalid UTF-8 in a skipped string", "{\"type\":\"progress\",\"uuid\":\"u\",\"data\":{\"out\":\"\xff\xc0\x80\"}}", true},
	{"nested objects with a type key", `{"type":"progress","uuid":"u","data":{"type":"user","uuid":"x","message":{"type":"assistant"}},"toolUseResult":{"type":"text","content":[{"type":"image"}]}}`, true},
	{"tool result with rejection", `{"type":"user","uuid":"u","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"The user doesn't want to proceed with this tool use. To tell you how to proceed, the user said:\nno"}]}]}}`, true},
	{"whitespace everywhere", " { \"type\" : \"user\" ,\t\"uuid\":\"u\" ,\r\n \"message\" : { \"role\" : \"user\" , \"content\" : [ { \"type\" : \"text\" , \"text\" : \"x\" } , { \"type\":\"image\" } ] } } ", true},
	{"nulls", `{"type":null,"uuid":"u","parentUuid":null,"logicalParentUuid":null,"isSidechain":null,"message":{"id":null,"content":null}}`, true},
	{"null message", `{"type":"user","uuid":"u","message":null}`, true},
	{"empty content", `{"type":"assistant","uuid":"u","message":{"content":[]}}`, true},
	{"block fields null", `{"type":"assistant","uuid":"u","message":{"content":[{"type":null,"text":null,"input":null,"content":null}]}}`, true},
	{"numbers and literals skipped", `{"type":"x","n":[0,-0,1.5e10,-2E-3,0.0,123,true,false,null,{}],"uuid":"u"}`, true},
	{"bookkeeping", `{"type":"file-history-snapshot","messageId":"m","snapshot":{"trackedFileBackups":{}},"isSnapshotUpdate":false}`, true},
	{"queue operation", `{"type":"queue-operation","operation":"enqueue","timestamp":"2026-01-01T00:00:00Z","content":"later"}`, true},
	{"flags", `{"type":"user","uuid":"u","isMeta":true,"isCompactSummary":true,"isApiErrorMessage":false,"isVisibleInTranscriptOnly":true,"isSidechain":true,"logicalParentUuid":"l"}`, true},
	{"unicode keys skipped", `{"type":"user","uuid":"u","clé":1,"ключ":"v"}`, false},
	{"duplicate key", `{"type":"user","type":"assistant","uuid":"u"}`, false},
	{"duplicate message", `{"type":"user","uuid":"u","message":{"role":"user","content":"a"},"message":{"id":"x"}}`, false},
	{"duplicate null string", `{"uuid":"u","uuid":null}`, false},
	{"duplicate block key", `{"type":"assistant","uuid":"u","message":{"content":[{"type":"text","text":"a","text":"b"}]}}`, false},
	{"duplicate unknown key", `{"type":"user","uuid":"u","x":1,"x":2}`, true},
	{"case-folded key", `{"Type":"user","uuid":"u"}`, false},
	{"case-folded nested key", `{"type":"user","uuid":"u","message":{"Content":"x"}}`, false},
	{"kelvin-sign key", "{\"type\":\"user\",\"uuid\":\"u\",\"\u212asessionId\":\"x\",\"\u017fessionId\":\"y\"}", false},
	{"escaped key", `{"typ\u0065":"user","uuid":"u"}`, false},
	{"number for a string", `{"type":"user","uuid":5}`, false},
	{"string for a bool", `{"type":"user","uuid":"u","isMeta":"yes"}`, false},
	{"string message", `{"type":"user","uuid":"u","message":"x"}`, false},
	{"content a number", `{"type":"user","uuid":"u","message":{"content":5}}`, false},
	{"content with a string block", `{"type":"assistant","uuid":"u","message":{"content":["x",{"type":"text","text":"y"}]}}`, false},
	{"block text a number", `{"type":"assistant","uuid":"u","message":{"content":[{"type":"text","text":5}]}}`, false},
	{"content string then a bad flag", `{"type":"user","uuid":"u","message":{"content":"x"},"isMeta":"no"}`, false},
	{"array", `[{"type":"user"}]`, false},
	{"null line", `null`, false},
	{"truncated", `{"type":"user","uuid":"u","message":{"role":"user","content":"hel`, false},
	{"truncated after a key", `{"type":"user","uuid":`, false},
	{"trailing garbage", `{"type":"user","uuid":"u"} x`, false},
	{"two values", `{"type":"user"}{"uuid":"u"}`, false},
	{"trailing comma", `{"type":"user","uuid":"u",}`, false},
	{"control character", "{\"type\":\"user\",\"uuid\":\"u\",\"message\":{\"content\":\"a\tb\"}}", false},
	{"bad escape", `{"type":"user","uuid":"u","data":"\x41"}`, false},
	{"short unicode escape", `{"type":"user","uuid":"u","data":"\u12"}`, false},
	{"leading zero", `{"type":"user","uuid":"u","n":01}`, false},
	{"bare minus", `{"type":"user","uuid":"u","n":-}`, false},
	{"bad fraction", `{"type":"user","uuid":"u","n":1.}`, false},
	{"bad exponent", `{"type":"user","uuid":"u","n":1e+}`, false},
	{"bad literal", `{"type":"user","uuid":"u","n":tru}`, false},
	{"single quotes", `{'type':'user'}`, false},
	{"deep nesting", `{"type":"user","uuid":"u","d":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`, false},
	{"empty", ``, false},
}

// checkClaudeScan compares scanClaude with encoding/json on one line,
// with and without in (the interner a read's lines share).
func checkClaudeScan(t *testing.T, line []byte, in *strIntern) (fast bool) {
	t.Helper()
	want, err := decodeClaudeJSON(line)
	for _, in := range []*strIntern{nil, in} {
		got, ok := scanClaude(line, in)
		if !ok {
			return false
		}
		if err != nil {
			t.Fatalf("fast path decoded %q, encoding/json: %v", line, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("line %q:\nfast          %+v\nencoding/json %+v", line, got, want)
		}
	}
	return true
}

func TestScanClaudeMatchesJSON(t *testing.T) {
	var in strIntern
	for _, c := range claudeScanCases {
		t.Run(c.name, func(t *testing.T) {
			if fast := checkClaudeScan(t, []byte(c.line), &in); fast != c.fast {
				t.Errorf("fast path taken: %v, want %v", fast, c.fast)
			}
		})
	}
}

// TestScanClaudeFiles holds the fast path to encoding/json on every line of
// the Claude Code transcripts in the repository (and, when
// MNEMO_BENCH_HISTORY names a generated history, of those), and checks that
// the lines that parse take it.
func TestScanClaudeFiles(t *testing.T) {
	var files []string
	for _, root := range []string{"testdata", filepath.Join("..", "..", "testdata", "transcripts", "claude-code"), historyDir(".claude")} {
		files = append(files, jsonlFiles(t, root)...)
	}
	lines, slow := 0, 0
	for _, p := range files {
		var in strIntern
		eachLine(t, p, func(line []byte) {
			lines++
			if !checkClaudeScan(t, line, &in) && json.Valid(line) && !bytes.Contains(line, []byte(`"type":"queue-operation"`)) {
				if slow++; slow <= 5 {
					t.Logf("%s: slow path for %.200q", p, line)
				}
			}
		})
	}
	t.Logf("%d lines of %d files, %d valid lines decoded by encoding/json", lines, len(files), slow)
	if slow*100 > lines {
		t.Errorf("%d of %d lines took the slow path", slow, lines)
	}
}

// codexScanCases are edge cases of Codex's fast path.
var codexScanCases = []struct {
	name string
	line string
	fast bool
}{
	{"message", `{"timestamp":"2026-03-03T08:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"fix \"it\"\n"}]}}`, true},
	{"payload first", `{"payload":{"content":[{"text":"x","type":"output_text"}],"role":"assistant","type":"message"},"type":"response_item","timestamp":"2026-03-03T08:00:01Z"}`, true},
	{"function output", `{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":"{\"output\":\"a\\nb\",\"metadata\":{\"exit_code\":0}}"}}`, true},
	{"function output object", `{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","output":{"content":"x","type":"y"}}}`, true},
	{"event", `{"timestamp":"t","type":"event_msg","payload":{"type":"exec_command_end","stdout":"` + strings.Repeat(`line \"x\"\n`, 50) + `","exit_code":0}}`, true},
	{"session meta", `{"timestamp":"t","type":"session_meta","payload":{"id":"0199","timestamp":"2026-03-03T08:00:00Z","cwd":"/p","git":{"branch":"main"}}}`, true},
	{"payload null", `{"timestamp":"t","type":"event_msg","payload":null}`, true},
	{"payload a string", `{"timestamp":"t","type":"compacted","payload":"summary"}`, true},
	{"payload an array", `{"timestamp":"t","type":"x","payload":[1,{"type":"y"}]}`, true},
	{"envelope-less message", `{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}`, true},
	{"envelope-less meta", `{"id":"0199","timestamp":"2025-05-01T00:00:00Z","instructions":"be nice"}`, true},
	{"state", `{"record_type":"state"}`, true},
	{"content null", `{"type":"response_item","payload":{"type":"message","content":null}}`, true},
	{"empty content", `{"type":"response_item","payload":{"type":"message","content":[]}}`, true},
	{"invalid UTF-8", "{\"type\":\"response_item\",\"payload\":{\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"\xff\xfeok\"}]}}", true},
	{"duplicate payload", `{"type":"response_item","payload":{"type":"message"},"payload":{"role":"user"}}`, false},
	{"duplicate item key", `{"type":"response_item","payload":{"type":"message","type":"reasoning"}}`, false},
	{"case-folded item key", `{"type":"response_item","payload":{"Type":"message"}}`, false},
	{"content a string", `{"type":"response_item","payload":{"type":"message","content":"x"}}`, false},
	{"part a string", `{"type":"response_item","payload":{"type":"message","content":["x"]}}`, false},
	{"arguments an object", `{"type":"response_item","payload":{"type":"function_call","arguments":{"a":1}}}`, false},
	{"truncated", `{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hel`, false},
	{"trailing garbage", `{"type":"event_msg","payload":{}}]`, false},
	{"not an object", `"x"`, false},
}

// checkCodexScan compares codexParse with codexParseJSON on one line,
// with and without in.
func checkCodexScan(t *testing.T, line []byte, in *strIntern) (fast bool) {
	t.Helper()
	type parsed struct {
		Kind string
		It   codexItem
		TS   time.Time
		OK   bool
	}
	var want parsed
	want.Kind, want.It, want.TS, want.OK = codexParseJSON(line)
	for _, in := range []*strIntern{nil, in} {
		var got parsed
		got.Kind, got.It, got.TS, got.OK = codexParse(line, in)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("line %q:\nfast          %+v\nencoding/json %+v", line, got, want)
		}
	}
	l, it, ok := scanCodexLine(line, nil)
	if !ok {
		return false
	}
	if payload, _ := codexPayload(line, l); len(l.Payload) == 0 && len(payload) > 0 && payload[0] == '{' {
		s := jscan{b: payload}
		return scanCodexItem(&s, &it) && s.end()
	}
	return true
}

func TestScanCodexMatchesJSON(t *testing.T) {
	var in strIntern
	for _, c := range codexScanCases {
		t.Run(c.name, func(t *testing.T) {
			if fast := checkCodexScan(t, []byte(c.line), &in); fast != c.fast {
				t.Errorf("fast path taken: %v, want %v", fast, c.fast)
			}
		})
	}
}

func TestScanCodexFiles(t *testing.T) {
	files := append(jsonlFiles(t, filepath.Join("testdata", "codex")), jsonlFiles(t, historyDir(".codex"))...)
	lines, slow := 0, 0
	for _, p := range files {
		var in strIntern
		eachLine(t, p, func(line []byte) {
			lines++
			if !checkCodexScan(t, line, &in) && json.Valid(line) {
				if slow++; slow <= 5 {
					t.Logf("%s: slow path for %.200q", p, line)
				}
			}
		})
	}
	t.Logf("%d lines of %d files, %d valid lines decoded by encoding/json", lines, len(files), slow)
	if slow*100 > lines {
		t.Errorf("%d of %d lines took the slow path", slow, lines)
	}
}

// TestJscanValid holds jscan's validation to json.Valid.
func TestJscanValid(t *testing.T) {
	for _, in := range jscanValidCases {
		checkJscanValid(t, []byte(in))
	}
	for _, c := range claudeScanCases {
		checkJscanValid(t, []byte(c.line))
	}
	for _, c := range codexScanCases {
		checkJscanValid(t, []byte(c.line))
	}
}

var jscanValidCases = []string{
	``, ` `, `0`, `-0`, `01`, `-01`, `1.`, `.1`, `1e`, `1e5`, `1E+5`, `1e-05`, `-`, `+1`, `1.5.`, `0x1`,
	`""`, `"\"`, `"\\"`, `"\u00"`, `"\u00zz"`, `"\uABCD"`, `"\/"`, `"\a"`, "\"\x7f\"", "\"\x1f\"", "\"\xff\"",
	`[]`, `[,]`, `[1,]`, `[1 2]`, `[1,2]`, `{}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a" 1}`, `{1:2}`, `{"a":1 "b":2}`,
	`true`, `tru`, `truex`, `false`, `null`, `nul`, `NaN`, `[true,false,null]`, ` {"a" : [ 1 , { } ] } `,
	"\v{}", "{}\v", "\u00a0{}", `{"a":"b"}}`, `[[[[]]]]`, `[[[[]]]`, `"abcdefghijklmnop\"qrstuvwxyz"`, `"abcdefgh\`,
	strings.Repeat("[", 513) + strings.Repeat("]", 513), strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
}

// checkJscanValid compares jscan's verdict on a whole value with
// json.Valid's, but for a nesting deeper than jscan takes.
func checkJscanValid(t *testing.T, in []byte) {
	t.Helper()
	s := jscan{b: in}
	got := s.skip() && s.end()
	if want := json.Valid(in); got != want && !(want && s.depth > jscanMaxDepth) {
		t.Fatalf("%.100q: jscan valid %v, json.Valid %v", in, got, want)
	}
}

// TestUnquoteJSON holds unquoteJSON to encoding/json's unquoting.
func TestUnquoteJSON(t *testing.T) {
	for _, in := range []string{``, `abc`, `a\"b`, `\\`, `\/\b\f\n\r\t`, `\u0041\u00e9\u20ac`, `\ud83d\ude00`, `\ud83d`, `\ude00`,
		`\ud83dx`, `\ud83d\u0041`, `\ud83d\ud83d\ude00`, "\xff", "a\xc3", "\xe2\x82", "\xed\xa0\x80", "é€😀"} {
		checkUnquote(t, []byte(in))
	}
}

func checkUnquote(t *testing.T, raw []byte) {
	t.Helper()
	quoted := append(append([]byte{'"'}, raw...), '"')
	s := jscan{b: quoted}
	_, esc, ok := s.str()
	var want string
	err := json.Unmarshal(quoted, &want)
	if ok != (err == nil) || ok && s.i != len(quoted) {
		if ok && s.i != len(quoted) {
			return // a quote inside: not one string
		}
		t.Fatalf("%q: jscan ok %v, encoding/json %v", raw, ok, err)
	}
	if !ok {
		return
	}
	if got := unquoteJSON(raw, esc); got != want {
		t.Fatalf("%q: unquoted %q, encoding/json %q", raw, got, want)
	}
}

// FuzzScanJSON holds jscan to encoding/json on arbitrary bytes: as a
// validator, as an unquoter, and as Claude Code's and Codex's decoder.
func FuzzScanJSON(f *testing.F) {
	for _, c := range claudeScanCases {
		f.Add([]byte(c.line))
	}
	for _, c := range codexScanCases {
		f.Add([]byte(c.line))
	}
	for _, c := range jscanValidCases {
		f.Add([]byte(c))
	}
	for _, p := range []string{claudeFixture, codexFixture, codexRollback, "claude-sidebranch.jsonl"} {
		eachLine(f, filepath.Join("testdata", filepath.FromSlash(p)), func(line []byte) {
			f.Add(bytes.Clone(line))
		})
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		checkJscanValid(t, in)
		checkUnquote(t, in)
		checkClaudeScan(t, in, &strIntern{lastID: "u1", lastMsg: "msg_1"})
		checkCodexScan(t, in, &strIntern{})
	})
}

// historyDir is the agent folder (".claude", ".codex") of the generated
// history MNEMO_BENCH_HISTORY names, or "" if none.
func historyDir(agent string) string {
	if h := os.Getenv("MNEMO_BENCH_HISTORY"); h != "" {
		return filepath.Join(h, agent)
	}
	return ""
}

// jsonlFiles lists the .jsonl files under root ("" for none).
func jsonlFiles(tb testing.TB, root string) []string {
	tb.Helper()
	if root == "" {
		return nil
	}
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// eachLine calls fn with every non-blank line of path, trimmed as the
// readers trim them.
func eachLine(tb testing.TB, path string, fn func([]byte)) {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if t := bytes.TrimSpace(line); len(t) > 0 {
			fn(t)
		}
		if err != nil {
			return
		}
	}
}

// TestRunContains checks the block search Codex's reader uses to rule out
// a rollback: a key straddling two blocks, at either end, or absent.
func TestRunContains(t *testing.T) {
	key := []byte(`"thread_rolled_back"`)
	const block = 256 << 10
	for _, c := range []struct {
		at   int // where key starts (-1: absent)
		size int
		from int64
		want bool
	}{
		{-1, 3 * block, 0, false}, {0, 100, 0, true}, {block - 5, 2 * block, 0, true}, {block - 5, 2 * block, block, false},
		{2*block - len(key), 2 * block, 0, true}, {3*block - 1 - len(key), 3 * block, 7, true}, {block, block + len(key), 0, true},
		{-1, 0, 0, false},
	} {
		data := bytes.Repeat([]byte("x"), c.size)
		if c.at >= 0 {
			copy(data[c.at:], key)
		}
		path := filepath.Join(t.TempDir(), "rollout.jsonl")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		r := &run{ctx: t.Context(), src: Source{Kind: Codex}, path: path, fi: fi}
		got, err := r.contains(c.from, key)
		if err != nil || got != c.want {
			t.Errorf("key at %d of %d, from %d: %v, %v; want %v", c.at, c.size, c.from, got, err, c.want)
		}
	}
}
