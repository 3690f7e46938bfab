package transcript

import (
	"encoding/json"
	"path/filepath"
	"strings"
)

// Claude Code writes ~/.claude/projects/<encoded cwd>/<sessionId>.jsonl, one
// JSON record per line. Records with a uuid form a tree by parentUuid (a
// compaction starts a new root that names its predecessor in
// logicalParentUuid); a rewind adds a second child to an earlier message, so
// the conversation is the path from the root to the last record. Assistant
// replies are written one content block per line, the lines sharing
// message.id; tool results ride on type "user" lines; "summary" and
// "file-history-snapshot" lines are bookkeeping. Subagents write their own
// transcripts under <sessionId>/subagents/agent-*.jsonl with isSidechain set.

// claudeNode is the little of a record needed to find the active branch.
type claudeNode struct {
	Type              string  `json:"type"`
	UUID              string  `json:"uuid"`
	ParentUUID        *string `json:"parentUuid"`
	LogicalParentUUID string  `json:"logicalParentUuid"`
	IsSidechain       bool    `json:"isSidechain"`
}

// parent is the record's parent in the conversation, following a compaction
// boundary back to what it summarised.
func (n claudeNode) parent() string {
	if n.ParentUUID != nil && *n.ParentUUID != "" {
		return *n.ParentUUID
	}
	return n.LogicalParentUUID
}

type claudeRecord struct {
	claudeNode
	SessionID         string     `json:"sessionId"`
	CWD               string     `json:"cwd"`
	Timestamp         string     `json:"timestamp"`
	IsMeta            bool       `json:"isMeta"`
	IsCompactSummary  bool       `json:"isCompactSummary"`
	IsAPIErrorMessage bool       `json:"isApiErrorMessage"`
	VisibleOnly       bool       `json:"isVisibleInTranscriptOnly"`
	Message           *claudeMsg `json:"message"`
}

type claudeMsg struct {
	ID      string          `json:"id"`
	Role    string          `json:"role"`
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"`
}

func readClaude(r *run) error {
	return readTree(r, treeFormat{node: claudeNodeOf, entry: claudeEntry,
		idKey: `"uuid":"`, parentKey: `"parentUuid":"`, rewinds: true})
}

func claudeNodeOf(r *run, line []byte, _ int64) treeNode {
	var rec claudeRecord
	if err := json.Unmarshal(line, &rec); err != nil || rec.UUID == "" {
		return treeNode{}
	}
	if rec.IsSidechain && !isSubagentPath(r.path) {
		return treeNode{} // a subagent's lines inside the main transcript
	}
	n := treeNode{ID: rec.UUID, Parent: rec.parent(), OK: true, Assistant: rec.Type == "assistant"}
	if rec.Type == "user" {
		t, _ := claudeText(rec, Options{})
		n.Prose = t != ""
	}
	return n
}

// claudeBookkeeping are the record types without a uuid that hold no message.
var claudeBookkeeping = map[string]bool{"summary": true, "file-history-snapshot": true, "queue-operation": true}

func claudeEntry(r *run, line []byte, _ int64) treeEntry {
	var rec claudeRecord
	if err := json.Unmarshal(line, &rec); err != nil {
		return treeEntry{Why: Malformed}
	}
	if rec.UUID == "" {
		if claudeBookkeeping[rec.Type] {
			return treeEntry{Why: Meta}
		}
		return treeEntry{Why: Unknown}
	}
	if rec.IsSidechain && !isSubagentPath(r.path) {
		return treeEntry{Why: Sidechain}
	}
	s := &r.next.Session
	if s.ID == "" && rec.SessionID != "" {
		s.ID = rec.SessionID
		if isSubagentPath(r.path) {
			// A subagent's lines carry its parent's sessionId: give it its own.
			s.ID += "/" + strings.TrimSuffix(filepath.Base(r.path), ".jsonl")
		}
	}
	if s.Project == "" {
		s.Project = rec.CWD
	}
	e := treeEntry{ID: rec.UUID, TS: parseTime(rec.Timestamp)}
	if rec.Message == nil || (rec.Type != "user" && rec.Type != "assistant") {
		return e
	}
	e.Msg = true
	e.Role = RoleUser
	if rec.Type == "assistant" {
		e.Role = RoleAssistant
		e.Reply = rec.Message.ID
	}
	e.Text, e.Why = claudeText(rec, r.opt)
	return e
}

// claudeText is the prose of one record under opt ("" if none) and, when
// there is none, why.
func claudeText(rec claudeRecord, opt Options) (string, Reason) {
	switch {
	case rec.Message == nil:
		return "", Meta
	case rec.IsCompactSummary || rec.VisibleOnly:
		return "", Meta
	case rec.IsMeta || rec.IsAPIErrorMessage:
		return "", Injected
	case rec.Type == "assistant" && rec.Message.Model == "<synthetic>":
		return "", Injected
	}
	role := RoleAssistant
	if rec.Type == "user" {
		role = RoleUser
	}
	var why Reason
	leftOut := func(r Reason) {
		if why == "" {
			why = r
		}
	}
	clean := func(s string) string {
		t, harnessed := cleanText(ClaudeCode, role, s)
		if t == "" && harnessed {
			leftOut(Injected)
		}
		return t
	}
	done := func(parts []string) (string, Reason) {
		if why == "" {
			why = Empty
		}
		// An image alone is not prose worth a message.
		if len(parts) == 1 && parts[0] == "[image]" {
			return "", why
		}
		return strings.Join(parts, "\n"), why
	}
	var s string
	if err := json.Unmarshal(rec.Message.Content, &s); err == nil {
		if t := clean(s); t != "" {
			return done([]string{t})
		}
		return done(nil)
	}
	var blocks []struct {
		Type    string          `json:"type"`
		Text    string          `json:"text"`
		Name    string          `json:"name"`
		Input   json.RawMessage `json:"input"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(rec.Message.Content, &blocks); err != nil {
		return done(nil)
	}
	var parts []string
	for _, b := range blocks {
		var t string
		switch b.Type {
		case "text":
			t = clean(b.Text)
		case "image":
			t = "[image]"
		case "thinking", "redacted_thinking":
			leftOut(Thinking)
		case "tool_use", "server_tool_use":
			if opt.IncludeTools {
				t = strings.TrimSpace("[tool " + b.Name + "] " + string(b.Input))
			} else {
				leftOut(ToolCall)
			}
		case "tool_result", "web_search_tool_result":
			if opt.IncludeTools {
				t = toolResultText(b.Content)
			} else {
				leftOut(ToolResult)
			}
		}
		if t != "" {
			parts = append(parts, t)
		}
	}
	return done(parts)
}

// toolResultText flattens a tool_result's content (a string or text blocks).
func toolResultText(raw json.RawMessage) string {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return strings.TrimSpace(s)
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return ""
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" && strings.TrimSpace(b.Text) != "" {
			parts = append(parts, strings.TrimSpace(b.Text))
		} else if b.Type == "image" {
			parts = append(parts, "[image]")
		}
	}
	return strings.Join(parts, "\n")
}

// isSubagentPath reports whether path is a Claude Code subagent transcript.
func isSubagentPath(path string) bool {
	return filepath.Base(filepath.Dir(path)) == "subagents"
}
