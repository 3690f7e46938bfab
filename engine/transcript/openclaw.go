package transcript

import (
	"encoding/json"
	"strconv"
	"strings"
)

// OpenClaw keeps each agent's sessions as
// ~/.openclaw/agents/<agentId>/sessions/<sessionId>.jsonl (state folder
// $OPENCLAW_STATE_DIR; Telegram topics as <sessionId>-topic-<threadId>.jsonl),
// beside a sessions.json store — docs.openclaw.ai/reference/session-management-compaction
// ("Transcript (<sessionId>.jsonl): append-only transcript with tree structure
// (entries have id + parentId)", "On-disk locations"). The transcript is pi's
// session format (pi-mono packages/coding-agent/docs/session.md): a header
// {"type":"session","version":3,"id","timestamp","cwd"} outside the tree, then
// entries {type, id, parentId, timestamp}: "message" entries hold an
// AgentMessage (role user, assistant, toolResult, bashExecution, custom,
// branchSummary, compactionSummary), beside model_change,
// thinking_level_change, compaction, branch_summary, custom, custom_message,
// label and session_info entries. The conversation is the path from the last
// entry back to the root. User content is a string or text/image blocks;
// assistant content is text, thinking and toolCall blocks. Version 1 files
// (linear, no ids) are migrated by pi when it opens them; their entries are
// counted as ignored here.

type openclawEntry struct {
	Type      string  `json:"type"`
	ID        string  `json:"id"`
	ParentID  *string `json:"parentId"`
	Timestamp string  `json:"timestamp"`
	CWD       string  `json:"cwd"`
	Message   *struct {
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		ToolName  string          `json:"toolName"`
		Command   string          `json:"command"`
		Output    string          `json:"output"`
		Timestamp any             `json:"timestamp"`
	} `json:"message"`
}

func readOpenClaw(r *run) error {
	return readTree(r, treeFormat{record: openclawRecord, idKey: `"id":"`, parentKey: `"parentId":"`, retries: true})
}

var openclawKnown = map[string]bool{
	"message": true, "model_change": true, "thinking_level_change": true, "compaction": true,
	"branch_summary": true, "custom": true, "custom_message": true, "label": true, "session_info": true,
}

// openclawRecord decodes a line once for its place in the tree and what it
// holds. A line that does not decode whole may still name its place.
func openclawRecord(r *run, line []byte, at int64) (treeNode, treeEntry) {
	var e openclawEntry
	if err := json.Unmarshal(line, &e); err != nil {
		return openclawNode(line, at), treeEntry{Why: Malformed}
	}
	return openclawNodeOf(e.Type, e.ID, e.ParentID, at), openclawMessage(r, e, at)
}

// openclawNode reads only the tree fields of a line.
func openclawNode(line []byte, at int64) treeNode {
	var e struct {
		Type     string  `json:"type"`
		ID       string  `json:"id"`
		ParentID *string `json:"parentId"`
	}
	if err := json.Unmarshal(line, &e); err != nil {
		return treeNode{}
	}
	return openclawNodeOf(e.Type, e.ID, e.ParentID, at)
}

func openclawNodeOf(typ, id string, parent *string, at int64) treeNode {
	if !openclawKnown[typ] {
		return treeNode{} // the header, or unknown: counted by openclawMessage
	}
	n := treeNode{ID: id, OK: true}
	if id == "" {
		n.ID = piLineID(at) // version 1: no ids, one entry after another
	}
	if parent != nil {
		n.Parent = *parent
	}
	return n
}

// piLineID names an entry of a version 1 file, which has no ids, by its place.
func piLineID(at int64) string { return "L" + strconv.FormatInt(at, 10) }

func openclawMessage(r *run, e openclawEntry, at int64) treeEntry {
	if e.Type == "session" {
		return treeEntry{Why: Meta, SessionID: e.ID, Project: e.CWD}
	}
	if !openclawKnown[e.Type] {
		return treeEntry{Why: Unknown}
	}
	if e.ID == "" {
		e.ID = piLineID(at)
	}
	out := treeEntry{ID: e.ID, TS: parseTime(e.Timestamp)}
	if e.Type == "custom_message" {
		out.Why = Injected // an extension's message to the model
		return out
	}
	if e.Type != "message" || e.Message == nil {
		return out
	}
	m := e.Message
	if out.TS.IsZero() {
		out.TS = parseTime(m.Timestamp)
	}
	switch m.Role {
	case "user":
		out.Msg, out.Role = true, RoleUser
		out.Text, out.Why = blocksText(m.Content, r.opt, r.src.Kind, RoleUser)
	case "assistant":
		out.Msg, out.Role = true, RoleAssistant
		out.Text, out.Why = blocksText(m.Content, r.opt, r.src.Kind, RoleAssistant)
	case "toolResult":
		out.Msg, out.Role, out.Why = true, RoleUser, ToolResult
		if r.opt.IncludeTools {
			out.Text, _ = blocksText(m.Content, Options{}, JSONL, RoleUser)
		}
	case "bashExecution":
		out.Msg, out.Role, out.Why = true, RoleUser, ToolResult
		if r.opt.IncludeTools {
			out.Text = strings.TrimSpace("[bash] " + m.Command + "\n" + m.Output)
		}
	case "custom":
		out.Why = Injected // an extension's message to the model
	default:
		out.Why = Meta // branch and compaction summaries
	}
	return out
}

// blocksText flattens pi / OpenClaw content: a string, or text, image,
// thinking and toolCall blocks (tool calls only under IncludeTools), each
// text cleaned by kind's harness table for role. With no text it gives the
// reason of the first block that held none.
func blocksText(raw json.RawMessage, opt Options, kind Kind, role string) (string, Reason) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		t, harnessed := cleanText(kind, role, s)
		if t == "" && harnessed {
			return "", Injected
		}
		return t, Empty
	}
	var blocks []struct {
		Type      string          `json:"type"`
		Text      string          `json:"text"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return "", Empty
	}
	var parts []string
	var why Reason
	leftOut := func(r Reason) {
		if why == "" {
			why = r
		}
	}
	for _, b := range blocks {
		switch b.Type {
		case "text":
			t, harnessed := cleanText(kind, role, b.Text)
			if t != "" {
				parts = append(parts, t)
			} else if harnessed {
				leftOut(Injected)
			}
		case "image":
			parts = append(parts, "[image]")
		case "thinking", "reasoning":
			leftOut(Thinking)
		case "toolCall":
			if opt.IncludeTools {
				parts = append(parts, strings.TrimSpace("[tool "+b.Name+"] "+string(b.Arguments)))
			} else {
				leftOut(ToolCall)
			}
		}
	}
	if why == "" {
		why = Empty
	}
	if len(parts) == 1 && parts[0] == "[image]" {
		return "", why
	}
	return strings.Join(parts, "\n"), why
}
