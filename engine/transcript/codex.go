package transcript

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Codex writes $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl,
// append-only, one {"timestamp","type","payload"} record per line:
// session_meta (id, cwd), turn_context, response_item (messages, reasoning,
// function calls and their output), event_msg (UI events, among them a copy of
// every user and assistant message) and compacted. The messages are indexed
// from response_item only, so each is indexed once; developer messages and the
// environment and instructions Codex injects as user messages are left out.
// Files from before mid-2025 have no envelope: a first {id, timestamp,
// instructions} line, then bare response items.

type codexLine struct {
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
	// The envelope-less form puts these on the line itself.
	ID   string `json:"id"`
	Role string `json:"role"`
}

type codexItem struct {
	Type      string `json:"type"`
	Role      string `json:"role"`
	ID        string `json:"id"`
	CWD       string `json:"cwd"`
	Timestamp string `json:"timestamp"`
	Content   []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Input     string          `json:"input"`
	Output    json.RawMessage `json:"output"`
}

// codexInjected matches the context Codex sends as user messages.
var codexInjected = regexp.MustCompile(`^\s*(<environment_context>|<user_instructions>|<permissions instructions>|<INSTRUCTIONS>|<user_shell_command>|<turn_aborted>|# AGENTS\.md instructions)`)

func readCodex(r *run) error {
	from, err := r.begin()
	if err != nil || from < 0 {
		return err
	}
	end, err := r.lines(from, func(line []byte, at int64) error {
		var l codexLine
		if err := json.Unmarshal(line, &l); err != nil {
			r.res.Malformed++
			return nil
		}
		payload := l.Payload
		kind := l.Type
		switch {
		case len(payload) == 0 && (l.Type == "message" || l.Type == "reasoning" || strings.HasPrefix(l.Type, "function_call")):
			payload, kind = line, "response_item" // envelope-less form
		case len(payload) == 0 && l.Type == "" && l.ID != "":
			payload, kind = line, "session_meta"
		}
		var it codexItem
		if len(payload) > 0 && payload[0] == '{' {
			if err := json.Unmarshal(payload, &it); err != nil {
				r.res.Malformed++
				return nil
			}
		}
		s := &r.next.Session
		switch kind {
		case "session_meta":
			if s.ID == "" {
				s.ID = it.ID
			}
			if s.Project == "" {
				s.Project = it.CWD
			}
			return nil
		case "turn_context":
			if s.Project == "" {
				s.Project = it.CWD
			}
			return nil
		case "event_msg", "compacted":
			return nil // copies of messages, UI events, compaction summaries
		case "response_item":
		default:
			if l.Type != "" || len(line) > 0 && !strings.Contains(string(line), `"record_type"`) {
				r.res.Ignored++
			}
			return nil
		}
		ts := parseTime(l.Timestamp)
		id := "L" + strconv.FormatInt(at, 10)
		switch it.Type {
		case "message":
			if it.Role != RoleUser && it.Role != RoleAssistant {
				return nil // developer and system prompts
			}
			var parts []string
			for _, c := range it.Content {
				switch c.Type {
				case "input_text", "output_text", "text":
					if it.Role == RoleUser && codexInjected.MatchString(c.Text) {
						continue
					}
					if t := strings.TrimSpace(c.Text); t != "" {
						parts = append(parts, t)
					}
				case "input_image":
					parts = append(parts, "[image]")
				}
			}
			if len(parts) == 0 || len(parts) == 1 && parts[0] == "[image]" {
				return nil
			}
			return r.emit(Message{ID: id, Role: it.Role, Timestamp: ts, Text: strings.Join(parts, "\n")})
		case "function_call", "custom_tool_call", "local_shell_call":
			if !r.opt.IncludeTools {
				return nil
			}
			args := it.Arguments
			if args == "" {
				args = it.Input
			}
			return r.emit(Message{ID: id, Role: RoleAssistant, Timestamp: ts, Text: strings.TrimSpace("[tool " + it.Name + "] " + args)})
		case "function_call_output", "custom_tool_call_output":
			if !r.opt.IncludeTools {
				return nil
			}
			return r.emit(Message{ID: id, Role: RoleUser, Timestamp: ts, Text: codexOutput(it.Output)})
		}
		return nil
	})
	if err != nil {
		return err
	}
	if r.next.Session.ID == "" {
		r.next.Session.ID = codexIDFromName(r.path)
	}
	return r.settle(end)
}

// codexOutput unwraps a function_call_output: a string, often itself JSON
// holding {"output": ...}.
func codexOutput(raw json.RawMessage) string {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return strings.TrimSpace(string(raw))
	}
	var inner struct {
		Output string `json:"output"`
	}
	if json.Unmarshal([]byte(s), &inner) == nil && inner.Output != "" {
		return strings.TrimSpace(inner.Output)
	}
	return strings.TrimSpace(s)
}

// codexIDFromName takes the uuid at the end of rollout-<time>-<uuid>.jsonl.
func codexIDFromName(path string) string {
	base := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	if len(base) >= 36 {
		return base[len(base)-36:]
	}
	return base
}
