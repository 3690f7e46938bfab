package transcript

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
)

// Cline, and its forks Roo Code and Kilo Code, keep one folder per task in
// the editor's globalStorage: <User>/globalStorage/<extension id>/tasks/
// <taskId>/ with api_conversation_history.json (the model's context:
// Anthropic messages whose user turns carry <environment_details> and tool
// results as text), ui_messages.json (what the chat panel shows) and
// task_metadata.json (files in context). The panel's list is the cleaner
// record of prose: [{ts, type:"say"|"ask", say|ask, text, partial}]. The
// first say "text" is the task the user gave; later say "text" is the
// assistant's prose; say "user_feedback" is the user's reply; say
// "completion_result" and ask "followup" (its text a {question} object in
// newer versions) are the assistant's; say "reasoning" is thinking; tool,
// command, api_req_*, checkpoint, browser and MCP records are not prose.
// The task's folder (cwd) is in state/taskHistory.json when that file
// exists (HistoryItem.cwdOnTaskInitialization, Roo's workspace). (As
// cline/cline's src/shared/ExtensionMessage.ts ClineMessage and
// src/core/storage/disk.ts write them.)

type clineMsg struct {
	Ts   json.Number `json:"ts"`
	Type string      `json:"type"`
	Say  string      `json:"say"`
	Ask  string      `json:"ask"`
	Text string      `json:"text"`
}

func readClineTask(r *run) error {
	ui := filepath.Join(r.path, "ui_messages.json")
	return r.readWhole(fileStamp(ui), func() (wholeDoc, error) {
		var msgs []clineMsg
		if err := readJSONDoc(ui, maxDoc, &msgs); err != nil {
			return wholeDoc{}, err
		}
		id := filepath.Base(r.path)
		doc := wholeDoc{Session: Session{ID: id, Project: clineProject(filepath.Dir(filepath.Dir(r.path)), id)}}
		task := true
		for i, m := range msgs {
			mid := m.Ts.String()
			if mid == "" {
				mid = "i" + strconv.Itoa(i)
			}
			msg := Message{ID: mid + "/" + m.Type + m.Say + m.Ask, Timestamp: parseTime(m.Ts), Text: m.Text}
			var it item
			switch {
			case m.Type == "say" && (m.Say == "text" || m.Say == "task") && task:
				msg.Role, task = RoleUser, false
				it = userItem(r.src.Kind, msg)
			case m.Type == "say" && m.Say == "user_feedback":
				msg.Role = RoleUser
				it = userItem(r.src.Kind, msg)
			case m.Type == "say" && (m.Say == "text" || m.Say == "completion_result"):
				msg.Role = RoleAssistant
				it = keep(msg)
			case m.Type == "ask" && m.Ask == "followup":
				msg.Role, msg.Text = RoleAssistant, followupQuestion(m.Text)
				it = keep(msg)
			case m.Say == "reasoning":
				it = drop(Thinking)
			case m.Say == "tool" || m.Ask == "tool" || m.Say == "command" || m.Ask == "command" ||
				m.Say == "browser_action" || m.Say == "browser_action_launch" || m.Ask == "browser_action_launch" ||
				m.Say == "use_mcp_server" || m.Ask == "use_mcp_server" || m.Say == "codebase_search_result":
				it = drop(ToolCall)
			case m.Say == "command_output" || m.Ask == "command_output" || m.Say == "mcp_server_response" ||
				m.Say == "browser_action_result" || m.Say == "diff_error":
				it = drop(ToolResult)
			case m.Say == "error" || m.Say == "api_req_retried" || m.Ask == "api_req_failed" || m.Ask == "mistake_limit_reached":
				it = drop(Injected)
			case m.Type == "say" || m.Type == "ask":
				it = drop(Meta) // api_req_started, checkpoint_created, resume_task, completion_result asks…
			default:
				it = drop(Unknown)
			}
			doc.Items = append(doc.Items, it)
		}
		return doc, nil
	})
}

// followupQuestion is a followup ask's question: newer versions write
// {"question": …, "options": […]}, older ones the question itself.
func followupQuestion(t string) string {
	var q struct {
		Question string `json:"question"`
	}
	if strings.HasPrefix(strings.TrimSpace(t), "{") && json.Unmarshal([]byte(t), &q) == nil {
		return q.Question
	}
	return t
}

// clineProject finds the task's folder in the extension's task history.
func clineProject(ext, id string) string {
	var hist []struct {
		ID        string `json:"id"`
		Cwd       string `json:"cwdOnTaskInitialization"`
		Workspace string `json:"workspace"`
	}
	if readJSONDoc(filepath.Join(ext, "state", "taskHistory.json"), 64<<20, &hist) != nil {
		return ""
	}
	for _, h := range hist {
		if h.ID == id {
			if h.Cwd != "" {
				return h.Cwd
			}
			return h.Workspace
		}
	}
	return ""
}
