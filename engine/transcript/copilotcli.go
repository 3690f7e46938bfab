package transcript

import (
	"bufio"
	"encoding/json"
	"path/filepath"
	"strings"
)

// GitHub Copilot CLI keeps ~/.copilot/session-state/<id>/events.jsonl (and,
// in older versions, ~/.copilot/session-state/<id>.jsonl), one event a
// line: {type, data, id, timestamp, parentId}. session.start names the
// session and its context.cwd; user.message holds the prompt (data.content;
// transformedContent is the prompt with the harness's additions, not
// kept); assistant.message the reply (data.content, with toolRequests and
// reasoningText beside it); tool.execution_*, assistant.reasoning, turn,
// hook, model and compaction events carry no prose. workspace.yaml beside
// events.jsonl names the cwd too. (As agentsview's internal/parser/copilot.go
// reads the format.)

func copilotCLIMatch(p []string) bool {
	switch len(p) {
	case 1:
		return strings.HasSuffix(p[0], ".jsonl")
	case 2:
		return p[1] == "events.jsonl"
	}
	return false
}

type copilotEvent struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	Timestamp string `json:"timestamp"`
	Data      struct {
		SessionID string `json:"sessionId"`
		Content   string `json:"content"`
		Context   struct {
			Cwd string `json:"cwd"`
		} `json:"context"`
		ToolRequests []struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"toolRequests"`
		Result json.RawMessage `json:"result"`
	} `json:"data"`
}

func readCopilotCLI(r *run) error {
	defer func() {
		if s := &r.next.Session; s.Project == "" && filepath.Base(r.path) == "events.jsonl" {
			s.Project = yamlField(filepath.Join(filepath.Dir(r.path), "workspace.yaml"), "cwd")
		}
		if s := &r.next.Session; s.ID == "" && filepath.Base(r.path) == "events.jsonl" {
			s.ID = filepath.Base(filepath.Dir(r.path))
		}
	}()
	return r.readJSONLines(func(line []byte, at int64) item {
		var e copilotEvent
		if json.Unmarshal(line, &e) != nil {
			return drop(Malformed)
		}
		ts := parseTime(e.Timestamp)
		s := &r.next.Session
		switch e.Type {
		case "session.start":
			if e.Data.SessionID != "" {
				s.ID = e.Data.SessionID
			}
			if e.Data.Context.Cwd != "" {
				s.Project = e.Data.Context.Cwd
			}
			return drop(Meta)
		case "user.message":
			return keep(Message{ID: e.ID, Role: RoleUser, Timestamp: ts, Text: e.Data.Content})
		case "assistant.message":
			text := e.Data.Content
			if r.opt.IncludeTools {
				for _, t := range e.Data.ToolRequests {
					text += "\n[tool " + t.Name + "] " + string(t.Arguments)
				}
			}
			if strings.TrimSpace(text) == "" && len(e.Data.ToolRequests) > 0 {
				return drop(ToolCall)
			}
			return keep(Message{ID: e.ID, Role: RoleAssistant, Timestamp: ts, Text: text})
		case "tool.execution_complete":
			if r.opt.IncludeTools {
				t, _ := partsProse(e.Data.Result, Options{})
				return keep(Message{ID: e.ID, Role: RoleUser, Timestamp: ts, Text: t})
			}
			return drop(ToolResult)
		case "tool.execution_start", "tool.execution_partial_result", "tool.user_requested":
			return drop(ToolCall)
		case "assistant.reasoning":
			return drop(Thinking)
		case "session.info", "session.error", "session.model_change", "session.truncation", "session.resume",
			"assistant.turn_start", "assistant.turn_end", "assistant.usage", "abort", "session.compaction_start",
			"session.compaction_complete", "hook.start", "hook.end", "session.idle", "session.usage_info":
			return drop(Meta)
		case "system.message":
			return drop(Injected)
		}
		return drop(Unknown)
	})
}

// yamlField reads one top-level "key: value" of a small YAML file (bounded).
func yamlField(path, key string) string {
	f, _, err := openRegular("", path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 0; sc.Scan() && n < 1000; n++ {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key && !strings.HasPrefix(k, " ") {
			return strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return ""
}
