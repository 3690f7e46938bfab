package transcript

import (
	"encoding/json"
	"strings"
)

// partsProse flattens a message's content as the chat APIs write it — a
// string, or a list of typed blocks (Anthropic's text / tool_use /
// tool_result / thinking, OpenAI's input_text / output_text / image_url, and
// their cousins) — to its prose. When there is none it says why: the reason
// of the first block that was not prose.
func partsProse(raw json.RawMessage, opt Options) (string, Reason) {
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	if len(raw) == 0 || string(raw) == "null" {
		return "", Empty
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s), Empty
	}
	var blocks []json.RawMessage
	if json.Unmarshal(raw, &blocks) != nil {
		var one map[string]json.RawMessage
		if json.Unmarshal(raw, &one) != nil {
			return "", Malformed
		}
		blocks = []json.RawMessage{raw}
	}
	var parts []string
	why := Reason("")
	note := func(r Reason) {
		if why == "" {
			why = r
		}
	}
	images := 0
	for _, b := range blocks {
		t, r := blockProse(b, opt)
		switch {
		case t == "[image]":
			images++
			parts = append(parts, t)
		case t != "":
			parts = append(parts, t)
		default:
			note(r)
		}
	}
	if images == len(parts) {
		parts = nil // an image alone is no prose
	}
	if len(parts) == 0 {
		if why == "" {
			why = Empty
		}
		return "", why
	}
	return strings.Join(parts, "\n"), ""
}

// blockProse is one content block's prose, or why it has none.
func blockProse(raw json.RawMessage, opt Options) (string, Reason) {
	var b struct {
		Type     string          `json:"type"`
		Text     *string         `json:"text"`
		Name     string          `json:"name"`
		Input    json.RawMessage `json:"input"`
		Args     json.RawMessage `json:"arguments"`
		Content  json.RawMessage `json:"content"`
		Output   json.RawMessage `json:"output"`
		Thought  bool            `json:"thought"`
		Synth    bool            `json:"synthetic"`
		Function *struct {
			Name string          `json:"name"`
			Args json.RawMessage `json:"arguments"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &b) != nil {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return strings.TrimSpace(s), Empty
		}
		return "", Malformed
	}
	switch strings.ToLower(b.Type) {
	case "text", "input_text", "output_text", "":
		if b.Thought {
			return "", Thinking
		}
		if b.Synth {
			return "", Injected
		}
		if b.Text != nil {
			return strings.TrimSpace(*b.Text), Empty
		}
		if b.Type == "" {
			return "", Unknown
		}
		return "", Empty
	case "image", "image_url", "input_image", "imageurl":
		return "[image]", ""
	case "thinking", "redacted_thinking", "reasoning", "think", "redactedthinking":
		return "", Thinking
	case "tool_use", "tool_call", "toolcall", "function_call", "toolrequest", "server_tool_use", "tool-call":
		if opt.IncludeTools {
			name, args := b.Name, b.Input
			if len(args) == 0 {
				args = b.Args
			}
			if b.Function != nil {
				name, args = b.Function.Name, b.Function.Args
			}
			return strings.TrimSpace("[tool " + name + "] " + string(args)), ""
		}
		return "", ToolCall
	case "tool_result", "toolresult", "function_call_output", "toolresponse", "tool-result", "web_search_tool_result":
		if opt.IncludeTools {
			c := b.Content
			if len(c) == 0 {
				c = b.Output
			}
			t, _ := partsProse(c, Options{})
			return t, ""
		}
		return "", ToolResult
	}
	return "", Unknown
}

// roleOf maps the role names agents write to ours ("" for others).
func roleOf(s string) string {
	switch strings.ToLower(s) {
	case "user", "human", "prompt":
		return RoleUser
	case "assistant", "ai", "model", "agent", "bot", "gemini":
		return RoleAssistant
	}
	return ""
}

// userItem is a user message's item after the agent's harness content
// (harness.go, harness_agents.go) is cut away: left out as injected when
// nothing else remains.
func userItem(k Kind, m Message) item {
	orig := strings.TrimSpace(m.Text)
	m.Text, _ = cleanText(k, RoleUser, orig)
	if m.Text == "" && orig != "" {
		return drop(Injected)
	}
	return keep(m)
}
