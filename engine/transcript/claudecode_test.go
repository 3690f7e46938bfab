package transcript

import "testing"

// TestClaudeDecodeOnce: a line is decoded once when its content is blocks,
// and again, content held raw, only when it is not; either way a line
// reads as it always did.
func TestClaudeDecodeOnce(t *testing.T) {
	const head = `{"type":"user","uuid":"u1","sessionId":"s","timestamp":"2026-01-02T03:04:05Z",`
	tests := []struct {
		name, line string
		opt        Options
		text       string
		why        Reason
	}{
		{"string content", head + `"message":{"role":"user","content":"hello there"}}`, Options{}, "hello there", Empty},
		{"text blocks", head + `"message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}`, Options{}, "a\nb", Empty},
		{"a tool result", head + `"message":{"role":"user","content":[{"type":"tool_result","content":"ls output"}]}}`, Options{}, "", ToolResult},
		{"a tool result, tools kept", head + `"message":{"role":"user","content":[{"type":"tool_result","content":[{"type":"text","text":" ls output "}]}]}}`, Options{IncludeTools: true}, "ls output", Empty},
		{"a tool call, tools kept", `{"type":"assistant","uuid":"a1","message":{"id":"m","role":"assistant","content":[{"type":"tool_use","name":"Bash","input":{"command":"ls"}}]}}`, Options{IncludeTools: true}, `[tool Bash] {"command":"ls"}`, Empty},
		{"content an object", head + `"message":{"role":"user","content":{"text":"no"}}}`, Options{}, "", Empty},
		{"a block of the wrong shape", head + `"message":{"role":"user","content":[{"type":"text","text":5}]}}`, Options{}, "", Empty},
		{"content null", head + `"message":{"role":"user","content":null}}`, Options{}, "", Empty},
		{"a string, then a field of the wrong type", head + `"message":{"role":"user","content":"hi"},"isMeta":"yes"}`, Options{}, "", Malformed},
		{"a field of the wrong type, then a string", head + `"isMeta":"yes","message":{"role":"user","content":"hi"}}`, Options{}, "", Malformed},
		{"message not an object", head + `"message":"hi"}`, Options{}, "", Malformed},
		{"meta", head + `"isMeta":true,"message":{"role":"user","content":"hi"}}`, Options{}, "", Injected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &run{path: "/p/s.jsonl", opt: tt.opt}
			_, e := claudeRecordOf(r, []byte(tt.line), 0)
			if e.Text != tt.text || e.Why != tt.why {
				t.Errorf("text %q, why %q; want %q, %q", e.Text, e.Why, tt.text, tt.why)
			}
		})
	}
}
