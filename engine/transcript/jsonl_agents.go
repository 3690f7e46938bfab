package transcript

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"strings"
	"time"
)

// Factory Droid keeps ~/.factory/sessions/<workspace slug>/<id>.jsonl:
// {"type":"session_start", id, title, cwd} first, then {"type":"message",
// id, timestamp, message:{role, content}} with Anthropic-style content
// blocks (text, tool_use, tool_result, thinking); todo_state and other
// records carry no prose. A <id>.settings.json beside it holds the model.
// (As franken_agent_detection's src/connectors/factory.rs reads it.)
func readFactory(r *run) error {
	return r.readJSONLines(func(line []byte, at int64) item {
		var rec struct {
			Type      string `json:"type"`
			ID        string `json:"id"`
			Title     string `json:"title"`
			Cwd       string `json:"cwd"`
			Timestamp string `json:"timestamp"`
			Message   struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(line, &rec) != nil {
			return drop(Malformed)
		}
		s := &r.next.Session
		switch rec.Type {
		case "session_start":
			s.ID, s.Summary = rec.ID, rec.Title
			if rec.Cwd != "" {
				s.Project = rec.Cwd
			}
			return drop(Meta)
		case "message":
			return chatItem(r.opt, Factory, rec.ID, rec.Message.Role, rec.Message.Content, parseTime(rec.Timestamp))
		case "todo_state", "compaction_state", "session_end", "summary":
			return drop(Meta)
		}
		return drop(Unknown)
	})
}

// chatItem is the item of one chat-API message (role + content blocks).
func chatItem(opt Options, k Kind, id, role string, content json.RawMessage, ts time.Time) item {
	t, why := partsProse(content, opt)
	m := Message{ID: id, Role: roleOf(role), Timestamp: ts}
	switch {
	case m.Role == "":
		switch strings.ToLower(role) {
		case "system", "developer":
			return drop(Injected)
		case "tool", "function":
			if opt.IncludeTools {
				m.Role, m.Text = RoleUser, t
				return keep(m)
			}
			return drop(ToolResult)
		}
		return drop(Unknown)
	case t == "":
		return drop(why)
	}
	m.Text = t
	if m.Role == RoleUser {
		return userItem(k, m)
	}
	return keep(m)
}

// Kimi CLI keeps ~/.kimi/sessions/<md5 of the work folder>/<session>/
// context.jsonl: the model's context as OpenAI-style messages {role,
// content, tool_calls} (content a string or a list of {type:"text"} and
// {type:"think"} parts), plus bookkeeping lines whose role starts with "_"
// (_system_prompt, _checkpoint, _usage). ~/.kimi/kimi.json lists the work folders, which
// name the project. (As MoonshotAI/kimi-cli's src/kimi_cli/soul/context.py
// and metadata.py write them.)
func kimiMatch(p []string) bool { return len(p) == 3 && p[2] == "context.jsonl" }

func readKimi(r *run) error {
	defer func() {
		s := &r.next.Session
		if s.ID == "" {
			s.ID = filepath.Base(filepath.Dir(r.path))
		}
		if s.Project == "" {
			s.Project = kimiProject(r.src.dir(), filepath.Base(filepath.Dir(filepath.Dir(r.path))))
		}
	}()
	n := 0
	return r.readJSONLines(func(line []byte, at int64) item {
		var rec struct {
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			ToolCalls json.RawMessage `json:"tool_calls"`
		}
		if json.Unmarshal(line, &rec) != nil {
			return drop(Malformed)
		}
		n++
		if strings.HasPrefix(rec.Role, "_") {
			return drop(Meta)
		}
		it := chatItem(r.opt, Kimi, "", rec.Role, rec.Content, time.Time{})
		if it.Msg.Text == "" && it.Why == Empty && len(rec.ToolCalls) > 2 {
			return drop(ToolCall)
		}
		return it
	})
}

// kimiProject finds the work folder whose md5 names the session's folder.
func kimiProject(sessions, hash string) string {
	var meta struct {
		WorkDirs []struct {
			Path string `json:"path"`
		} `json:"work_dirs"`
	}
	if readJSONDoc(filepath.Join(filepath.Dir(sessions), "kimi.json"), 16<<20, &meta) != nil {
		return hash
	}
	for _, w := range meta.WorkDirs {
		sum := md5.Sum([]byte(w.Path))
		if hex.EncodeToString(sum[:]) == hash {
			return w.Path
		}
	}
	return hash
}

// Kiro CLI keeps ~/.kiro/sessions/cli/<uuid>.jsonl, records {version,
// kind, data}: Prompt (the user's, data.meta.timestamp in epoch seconds),
// AssistantMessage and ToolResults, whose data.content is a list of
// {kind, data} blocks (text, thinking, toolUse, toolResult); a <uuid>.json
// beside it holds session_id, cwd and title. (As cass's
// src/connectors/kiro.rs describes the store.)
func readKiro(r *run) error {
	defer func() {
		s := &r.next.Session
		if s.Project == "" {
			var meta struct {
				SessionID string `json:"session_id"`
				Cwd       string `json:"cwd"`
				Title     string `json:"title"`
			}
			if readJSONDoc(strings.TrimSuffix(r.path, ".jsonl")+".json", 16<<20, &meta) == nil {
				s.Project, s.Summary = meta.Cwd, meta.Title
				if meta.SessionID != "" {
					s.ID = meta.SessionID
				}
			}
		}
	}()
	return r.readJSONLines(func(line []byte, at int64) item {
		var rec struct {
			Kind string `json:"kind"`
			Data struct {
				Content []struct {
					Kind string          `json:"kind"`
					Data json.RawMessage `json:"data"`
				} `json:"content"`
				Meta struct {
					Timestamp json.Number `json:"timestamp"`
				} `json:"meta"`
			} `json:"data"`
		}
		if json.Unmarshal(line, &rec) != nil {
			return drop(Malformed)
		}
		var role string
		switch rec.Kind {
		case "Prompt":
			role = RoleUser
		case "AssistantMessage":
			role = RoleAssistant
		case "ToolResults":
			return drop(ToolResult)
		default:
			return drop(Unknown)
		}
		var parts []string
		why := Empty
		for _, c := range rec.Data.Content {
			switch c.Kind {
			case "text":
				var s string
				if json.Unmarshal(c.Data, &s) != nil {
					var o struct {
						Data string `json:"data"`
					}
					json.Unmarshal(c.Data, &o)
					s = o.Data
				}
				parts = append(parts, s)
			case "thinking":
				why = Thinking
			case "toolUse":
				why = ToolCall
			case "toolResult":
				why = ToolResult
			}
		}
		m := Message{Role: role, Timestamp: parseTime(rec.Data.Meta.Timestamp), Text: strings.Join(parts, "\n")}
		if strings.TrimSpace(m.Text) == "" {
			return drop(why)
		}
		if role == RoleUser {
			return userItem(Kiro, m)
		}
		return keep(m)
	})
}
