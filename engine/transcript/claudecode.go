package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"regexp"
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

// claudeRecord is one line, decoded once for the tree, the coverage count
// and the text alike; C is how its message content is held.
type claudeRecord[C any] struct {
	claudeNode
	SessionID         string        `json:"sessionId"`
	CWD               string        `json:"cwd"`
	Timestamp         string        `json:"timestamp"`
	IsMeta            bool          `json:"isMeta"`
	IsCompactSummary  bool          `json:"isCompactSummary"`
	IsAPIErrorMessage bool          `json:"isApiErrorMessage"`
	VisibleOnly       bool          `json:"isVisibleInTranscriptOnly"`
	Message           *claudeMsg[C] `json:"message"`
}

type claudeMsg[C any] struct {
	ID      string `json:"id"`
	Role    string `json:"role"`
	Model   string `json:"model"`
	Content C      `json:"content"`
}

// claudeBlock is one content block. Input and Content are tool traffic,
// kept as the bytes they were read from (valid only while the line is).
type claudeBlock struct {
	Type    string  `json:"type"`
	Text    string  `json:"text"`
	Name    string  `json:"name"`
	Input   rawSpan `json:"input"`
	Content rawSpan `json:"content"`
}

// rawSpan is a JSON value left undecoded and uncopied: tool inputs and
// outputs are most of a transcript's bytes and none of its prose.
type rawSpan []byte

func (s *rawSpan) UnmarshalJSON(b []byte) error {
	*s = b
	return nil
}

// claudeContent is a message's content: a string (str) or blocks.
type claudeContent struct {
	str    string
	isStr  bool
	blocks []claudeBlock
}

// claudeLine is a decoded line.
type claudeLine struct {
	claudeRecord[struct{}]
	content claudeContent
}

// decodeClaude decodes a line once: with jscan (jsonscan.go) when the line
// has the shape Claude Code writes, else with encoding/json.
func decodeClaude(line []byte, in *strIntern) (claudeLine, error) {
	if l, ok := scanClaude(line, in); ok {
		return l, nil
	}
	return decodeClaudeJSON(line)
}

// The JSON names of claudeRecord's, claudeMsg's and claudeBlock's fields,
// in the order scanClaude numbers them.
var (
	claudeRecordFields = jsonFields{"type", "uuid", "parentUuid", "logicalParentUuid", "isSidechain", "sessionId", "cwd",
		"timestamp", "isMeta", "isCompactSummary", "isApiErrorMessage", "isVisibleInTranscriptOnly", "message"}
	claudeMsgFields   = jsonFields{"id", "role", "model", "content"}
	claudeBlockFields = jsonFields{"type", "text", "name", "input", "content"}
)

// scanClaude is decodeClaudeJSON in one pass over the line, without
// decoding what the record does not keep (progress data, tool results'
// copies, usage, signatures); ok is false when encoding/json must decide.
// in, if set, interns the strings that repeat.
func scanClaude(line []byte, in *strIntern) (l claudeLine, ok bool) {
	s := jscan{b: line, in: in}
	ok = s.members(claudeRecordFields, func(f int) bool {
		switch f {
		case 0:
			return s.shared(&l.Type)
		case 1:
			return s.id(&l.UUID, false)
		case 2:
			if s.null() {
				return true
			}
			var p string
			l.ParentUUID = &p
			return s.id(&p, false)
		case 3:
			return s.getString(&l.LogicalParentUUID)
		case 4:
			return s.getBool(&l.IsSidechain)
		case 5:
			return s.shared(&l.SessionID)
		case 6:
			return s.shared(&l.CWD)
		case 7:
			return s.getString(&l.Timestamp)
		case 8:
			return s.getBool(&l.IsMeta)
		case 9:
			return s.getBool(&l.IsCompactSummary)
		case 10:
			return s.getBool(&l.IsAPIErrorMessage)
		case 11:
			return s.getBool(&l.VisibleOnly)
		default:
			return scanClaudeMsg(&s, &l)
		}
	})
	return l, ok && s.end()
}

// scanClaudeMsg reads a record's message (null or an object).
func scanClaudeMsg(s *jscan, l *claudeLine) bool {
	if s.null() {
		return true
	}
	m := &claudeMsg[struct{}]{}
	l.Message = m
	return s.members(claudeMsgFields, func(f int) bool {
		switch f {
		case 0:
			return s.id(&m.ID, true)
		case 1:
			return s.shared(&m.Role)
		case 2:
			return s.shared(&m.Model)
		default:
			return scanClaudeContent(s, &l.content)
		}
	})
}

// scanClaudeContent reads a message's content: a string, blocks or null.
func scanClaudeContent(s *jscan, c *claudeContent) bool {
	switch {
	case s.null():
		return true
	case s.i < len(s.b) && s.b[s.i] == '"':
		c.isStr = true
		return s.getString(&c.str)
	case !s.array():
		return false
	}
	c.blocks = []claudeBlock{}
	for first := true; ; first = false {
		done, ok := s.elem(first)
		if !ok {
			return false
		}
		if done {
			return true
		}
		var b claudeBlock
		if !scanClaudeBlock(s, &b) {
			return false
		}
		c.blocks = append(c.blocks, b)
	}
}

// scanClaudeBlock reads one content block, which must be an object.
func scanClaudeBlock(s *jscan, b *claudeBlock) bool {
	return s.members(claudeBlockFields, func(f int) bool {
		var ok bool
		switch f {
		case 0:
			ok = s.shared(&b.Type)
		case 1:
			ok = s.getString(&b.Text)
		case 2:
			ok = s.shared(&b.Name)
		case 3:
			b.Input, ok = s.raw()
		default:
			b.Content, ok = s.raw()
		}
		return ok
	})
}

// decodeClaudeJSON decodes a line with encoding/json. Content is mostly
// blocks, decoded in the same pass; a string (or anything else) is a type
// error there, and only then is the line decoded again with the content
// held raw.
func decodeClaudeJSON(line []byte) (claudeLine, error) {
	var rec claudeRecord[[]claudeBlock]
	err := json.Unmarshal(line, &rec)
	var te *json.UnmarshalTypeError
	if err != nil && errors.As(err, &te) && (te.Field == "message.content" || strings.HasPrefix(te.Field, "message.content.")) {
		return decodeClaudeRaw(line)
	}
	if err != nil {
		return claudeLine{}, err
	}
	l := claudeLine{claudeRecord: header(rec)}
	if rec.Message != nil {
		l.content.blocks = rec.Message.Content
	}
	return l, nil
}

// decodeClaudeRaw decodes a line whose content is not blocks: a string,
// else blocks that do not decode (no prose), as the content says.
func decodeClaudeRaw(line []byte) (claudeLine, error) {
	var rec claudeRecord[json.RawMessage]
	if err := json.Unmarshal(line, &rec); err != nil {
		return claudeLine{}, err
	}
	l := claudeLine{claudeRecord: header(rec)}
	if rec.Message == nil {
		return l, nil
	}
	if json.Unmarshal(rec.Message.Content, &l.content.str) == nil {
		l.content.isStr = true
	} else if json.Unmarshal(rec.Message.Content, &l.content.blocks) != nil {
		l.content.blocks = nil
	}
	return l, nil
}

// header is a record without its content.
func header[C any](rec claudeRecord[C]) claudeRecord[struct{}] {
	h := claudeRecord[struct{}]{claudeNode: rec.claudeNode, SessionID: rec.SessionID, CWD: rec.CWD, Timestamp: rec.Timestamp,
		IsMeta: rec.IsMeta, IsCompactSummary: rec.IsCompactSummary, IsAPIErrorMessage: rec.IsAPIErrorMessage, VisibleOnly: rec.VisibleOnly}
	if m := rec.Message; m != nil {
		h.Message = &claudeMsg[struct{}]{ID: m.ID, Role: m.Role, Model: m.Model}
	}
	return h
}

func readClaude(r *run) error { return readTree(r, claudeTree) }

// claudeTree is how Claude Code's lines make a tree.
var claudeTree = treeFormat{record: claudeRecordOf,
	idKey: `"uuid":"`, parentKey: `"parentUuid":"`, rewinds: true, start: claudeQueueStart}

// claudeBookkeeping are the record types without a uuid that hold no message.
var claudeBookkeeping = map[string]bool{"summary": true, "file-history-snapshot": true}

// claudeRecordOf is a line's place in the tree and what it holds.
func claudeRecordOf(r *run, line []byte, at int64) (treeNode, treeEntry) {
	l, err := decodeClaude(line, &r.intern)
	if err != nil {
		return treeNode{}, treeEntry{Why: Malformed}
	}
	if l.UUID == "" {
		if l.Type == "queue-operation" {
			return claudeQueueRecord(r, line, at, l.Timestamp)
		}
		if claudeBookkeeping[l.Type] {
			return treeNode{}, treeEntry{Why: Meta}
		}
		return treeNode{}, treeEntry{Why: Unknown}
	}
	sub := r.claudeSub()
	if l.IsSidechain && !sub.is {
		return treeNode{}, treeEntry{Why: Sidechain} // a subagent's lines inside the main transcript
	}
	n := treeNode{ID: l.UUID, Parent: l.parent(), OK: true, Assistant: l.Type == "assistant"}
	e := treeEntry{ID: l.UUID, TS: parseTime(l.Timestamp), Project: l.CWD}
	if l.SessionID != "" {
		e.SessionID = l.SessionID
		if sub.is {
			// A subagent's lines carry its parent's sessionId: give it its own.
			if sub.parent != l.SessionID {
				sub.parent, sub.id = l.SessionID, l.SessionID+"/"+strings.TrimSuffix(filepath.Base(r.path), ".jsonl")
			}
			e.SessionID = sub.id
		}
	}
	if l.Message == nil || (l.Type != "user" && l.Type != "assistant") {
		return n, e
	}
	e.Msg = true
	e.Role = RoleUser
	if l.Type == "assistant" {
		e.Role = RoleAssistant
		e.Reply = l.Message.ID
	} else if r.queue != nil {
		r.queue.sentAsRecord(l.content, at)
	}
	var prompt bool
	e.Text, e.Why, prompt = claudeText(l, r.opt)
	if l.Type == "user" {
		prose := e.Text
		if r.opt.IncludeTools {
			prose, _, prompt = claudeText(l, Options{})
		}
		// A prompt, not the words given with a rejected tool call, is what
		// a rewind repeats.
		n.Prose = prose != "" && prompt
	}
	return n, e
}

var (
	// claudeRejection is the result Claude Code writes for a tool call the
	// user rejected with words of their own; the words follow it.
	claudeRejection = regexp.MustCompile(`(?s)^The user doesn't want to proceed with this tool use\..*?To tell you how to proceed, the user said:\n(.*)$`)
	// claudeRejectionKey is looked for in a tool result's bytes before
	// they are decoded.
	claudeRejectionKey = []byte("the user said:")
)

// claudeText is the prose of one record under opt ("" if none) and, when
// there is none, why; prompt says whether some of it is not a tool
// result's (the words given with a rejection are).
func claudeText(l claudeLine, opt Options) (string, Reason, bool) {
	text, why, p := claudeTextOf(l, opt)
	return text, why, p.prompt
}

func claudeTextOf(l claudeLine, opt Options) (string, Reason, claudeProse) {
	var p claudeProse
	switch {
	case l.Message == nil:
		return "", Meta, p
	case l.IsCompactSummary || l.VisibleOnly:
		return "", Meta, p
	case l.IsMeta || l.IsAPIErrorMessage:
		return "", Injected, p
	case l.Type == "assistant" && l.Message.Model == "<synthetic>":
		return "", Injected, p
	}
	p.role = RoleAssistant
	if l.Type == "user" {
		p.role = RoleUser
	}
	if l.content.isStr {
		if t := p.clean(l.content.str); t != "" {
			p.prompt = true
			text, why := p.done([]string{t})
			return text, why, p
		}
		text, why := p.done(nil)
		return text, why, p
	}
	var parts []string
	for _, b := range l.content.blocks {
		if t := p.block(b, opt); t != "" {
			parts = append(parts, t)
		}
	}
	text, why := p.done(parts)
	return text, why, p
}

// claudeProse gathers one record's prose and the first reason something
// in it was left out; prompt is set by prose that is not a tool result's.
type claudeProse struct {
	role   string
	why    Reason
	prompt bool
}

func (p *claudeProse) leftOut(r Reason) {
	if p.why == "" {
		p.why = r
	}
}

func (p *claudeProse) clean(s string) string {
	t, harnessed := cleanText(ClaudeCode, p.role, s)
	if t == "" && harnessed {
		p.leftOut(Injected)
	}
	return t
}

// block is one content block's prose under opt.
func (p *claudeProse) block(b claudeBlock, opt Options) string {
	switch b.Type {
	case "text":
		t := p.clean(b.Text)
		p.prompt = p.prompt || t != ""
		return t
	case "image":
		return "[image]"
	case "thinking", "redacted_thinking":
		p.leftOut(Thinking)
	case "tool_use", "server_tool_use":
		if opt.IncludeTools {
			return strings.TrimSpace("[tool " + b.Name + "] " + string(b.Input))
		}
		p.leftOut(ToolCall)
	case "tool_result", "web_search_tool_result":
		if opt.IncludeTools {
			return toolResultText(json.RawMessage(b.Content))
		}
		// Tool output is left undecoded unless it may be a rejection.
		if p.role == RoleUser && bytes.Contains(b.Content, claudeRejectionKey) {
			if m := claudeRejection.FindStringSubmatch(toolResultText(json.RawMessage(b.Content))); m != nil {
				if w := p.clean(m[1]); w != "" {
					return w // the user's words, given with the rejection
				}
			}
		}
		p.leftOut(ToolResult)
	}
	return ""
}

func (p *claudeProse) done(parts []string) (string, Reason) {
	if p.why == "" {
		p.why = Empty
	}
	// An image alone is not prose worth a message.
	if len(parts) == 1 && parts[0] == "[image]" {
		return "", p.why
	}
	return strings.Join(parts, "\n"), p.why
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

// claudeSubagent says whether a read's transcript is a subagent's, and
// the session id its lines are given for the parent's they name.
type claudeSubagent struct {
	known, is  bool
	parent, id string
}

// claudeSub is what the read knows of its transcript being a subagent's.
func (r *run) claudeSub() *claudeSubagent {
	if !r.sub.known {
		r.sub = claudeSubagent{known: true, is: isSubagentPath(r.path)}
	}
	return &r.sub
}

// isSubagentPath reports whether path is a Claude Code subagent transcript.
func isSubagentPath(path string) bool {
	return filepath.Base(filepath.Dir(path)) == "subagents"
}
