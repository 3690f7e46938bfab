package transcript

import (
	"encoding/json"
	"strconv"
	"strings"
)

// The generic JSONL source reads any folder of *.jsonl files holding one
// message per line:
//
//	{"session_id": "...", "role": "user", "content": "...", "timestamp": "...", "project": "...", "agent": "..."}
//
// One file is one session, as exporters such as pond write them: the session
// id, project and agent are the first line's (the file name when the lines
// carry no id). A line naming another session is not silently merged: it is
// counted in Result.Ignored. content may be a string or a list of
// {"type":"text","text":...} blocks; role user/human and assistant/ai/model
// are kept, tool lines only under IncludeTools, system lines never. An "id"
// (or "message_id") names the message; else its place in the file does.

type jsonlLine struct {
	SessionID  string          `json:"session_id"`
	SessionID2 string          `json:"sessionId"`
	ID         string          `json:"id"`
	MessageID  string          `json:"message_id"`
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Timestamp  any             `json:"timestamp"`
	Project    string          `json:"project"`
	Agent      string          `json:"agent"`
}

func readJSONL(r *run) error {
	from, err := r.begin()
	if err != nil || from < 0 {
		return err
	}
	r.startCount(from)
	end, err := r.lines(from, func(line []byte, at int64) error {
		var l jsonlLine
		if err := json.Unmarshal(line, &l); err != nil {
			r.count(Malformed)
			return nil
		}
		sid := l.SessionID
		if sid == "" {
			sid = l.SessionID2
		}
		s := &r.next.Session
		if s.ID == "" && sid != "" {
			s.ID = sid
		}
		if sid != "" && sid != s.ID {
			r.count(Foreign) // another session's line in this file
			return nil
		}
		if s.Project == "" {
			s.Project = l.Project
		}
		if s.Agent == "" && l.Agent != "" {
			s.Agent = Kind(l.Agent)
		}
		var role string
		switch strings.ToLower(l.Role) {
		case "user", "human":
			role = RoleUser
		case "assistant", "ai", "model", "bot":
			role = RoleAssistant
		case "tool", "function":
			if !r.opt.IncludeTools {
				r.count(ToolResult)
				return nil
			}
			role = RoleUser
		case "system", "developer":
			r.count(Injected)
			return nil
		default:
			r.count(Unknown)
			return nil
		}
		id := l.ID
		if id == "" {
			id = l.MessageID
		}
		if id == "" {
			id = "L" + strconv.FormatInt(at, 10)
		}
		text, why := blocksText(l.Content, r.opt, JSONL, role)
		return r.countMessage(Message{ID: id, Role: role, Timestamp: parseTime(l.Timestamp), Text: text}, why)
	})
	if err != nil {
		return err
	}
	return r.settle(end)
}
