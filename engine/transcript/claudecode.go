package transcript

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
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

// claudeTailMax bounds the remembered end of the active branch.
const claudeTailMax = 64

// claudeExtra is the Claude Code part of a cursor's state.
type claudeExtra struct {
	// Tail is the active branch from the last record back to (and including)
	// the last delivered message: a later line may attach anywhere on it
	// without abandoning anything delivered.
	Tail []string `json:"tail,omitempty"`
	// The reply (message.id) delivered last, which a later line may continue.
	Group claudeGroup `json:"group"`
}

type claudeGroup struct {
	MsgID   string    `json:"msgId,omitempty"`
	ID      string    `json:"id,omitempty"`
	TS      time.Time `json:"ts"`
	Offsets []int64   `json:"offsets,omitempty"` // lines holding its text
	Open    bool      `json:"open,omitempty"`
}

func readClaude(r *run) error {
	from, err := r.begin()
	if err != nil || from < 0 {
		return err
	}
	var ex claudeExtra
	if from > 0 && len(r.prev.Extra) > 0 {
		if err := json.Unmarshal(r.prev.Extra, &ex); err != nil {
			from = 0
		}
	}
	if from > 0 {
		ok, err := claudeRead(r, from, &ex, true)
		if err != nil || ok {
			return err
		}
		// The new lines leave the branch we delivered (a rewind): start over.
		if err := r.restart(); err != nil {
			return err
		}
		r.res.Malformed, r.res.TooLong, r.res.Ignored = 0, 0, 0
	}
	ex = claudeExtra{}
	_, err = claudeRead(r, 0, &ex, false)
	return err
}

// claudeRead reads the lines from `from` in two passes: the first maps the
// tree (uuids and parents only), the second delivers the messages on the
// active branch. When resuming, it returns false, having delivered nothing,
// if the branch does not continue the one delivered before.
func claudeRead(r *run, from int64, ex *claudeExtra, resuming bool) (bool, error) {
	parents := map[string]string{}
	var leaf string
	end, err := r.lines(from, func(line []byte, at int64) error {
		var n claudeNode
		if err := json.Unmarshal(line, &n); err != nil {
			r.res.Malformed++
			return nil
		}
		if n.UUID == "" {
			switch n.Type {
			case "summary", "file-history-snapshot", "queue-operation":
			default:
				r.res.Ignored++
			}
			return nil
		}
		if n.IsSidechain && !isSubagentPath(r.path) {
			return nil
		}
		parents[n.UUID] = n.parent()
		leaf = n.UUID
		return nil
	})
	if err != nil {
		return false, err
	}
	// The active branch within the region, and where it leaves the region.
	branch := map[string]bool{}
	exit := ""
	for u := leaf; u != ""; {
		if branch[u] {
			break // a cycle: the file is damaged; keep what we have
		}
		p, ok := parents[u]
		if !ok {
			exit = u
			break
		}
		branch[u] = true
		u = p
	}
	var oldTail []string
	if resuming && leaf != "" {
		i := slices.Index(ex.Tail, exit)
		if i < 0 {
			return false, nil
		}
		oldTail = ex.Tail[i:]
	} else if resuming {
		oldTail = ex.Tail
	}

	// Second pass: deliver. g is the reply being assembled; dirty means it
	// holds text not yet delivered by this read.
	g := ex.Group
	var groupText []string
	if resuming && g.Open && len(oldTail) > 0 && oldTail[0] == exit && leaf != "" {
		// The open reply may continue: re-read the text already delivered for
		// it, so that it is delivered whole again under the same id.
		for _, off := range g.Offsets {
			rec, err := claudeRecordAt(r.path, off, r.opt.MaxLineBytes)
			if err != nil {
				return false, nil // the file changed under us: start over
			}
			if t := claudeText(rec, r.opt); t != "" {
				groupText = append(groupText, t)
			}
		}
	} else if leaf != "" {
		g = claudeGroup{}
	}
	dirty, inGroup := false, g.Open
	lastDelivered := ""
	flush := func() error {
		if !dirty {
			return nil
		}
		dirty = false
		lastDelivered = g.ID
		return r.emit(Message{ID: g.ID, Role: RoleAssistant, Timestamp: g.TS, Text: strings.Join(groupText, "\n\n")})
	}
	if len(branch) > 0 {
		_, err = r.lines(from, func(line []byte, at int64) error {
			var rec claudeRecord
			if err := json.Unmarshal(line, &rec); err != nil || !branch[rec.UUID] {
				return nil
			}
			s := &r.next.Session
			if s.ID == "" {
				s.ID = rec.SessionID
			}
			if s.Project == "" {
				s.Project = rec.CWD
			}
			if rec.Message == nil || (rec.Type != "user" && rec.Type != "assistant") {
				inGroup = false
				return nil
			}
			t := claudeText(rec, r.opt)
			msgID := rec.UUID
			if rec.Message.ID != "" {
				msgID = rec.Message.ID
			}
			if rec.Type == "assistant" && g.ID != "" && msgID == g.MsgID {
				inGroup = true
				if t != "" {
					groupText = append(groupText, t)
					g.Offsets = append(g.Offsets, at)
					dirty = true
				}
				return nil
			}
			// A new reply or a user line closes the open reply.
			if err := flush(); err != nil {
				return err
			}
			g, groupText, inGroup = claudeGroup{}, nil, false
			ts := parseTime(rec.Timestamp)
			if rec.Type == "assistant" {
				g = claudeGroup{MsgID: msgID, ID: rec.UUID, TS: ts}
				inGroup = true
				if t != "" {
					groupText = append(groupText, t)
					g.Offsets = append(g.Offsets, at)
					dirty = true
				}
				return nil
			}
			if t == "" {
				return nil
			}
			lastDelivered = rec.UUID
			return r.emit(Message{ID: rec.UUID, Role: RoleUser, Timestamp: ts, Text: t})
		})
		if err != nil {
			return true, err
		}
	}
	if err := flush(); err != nil {
		return true, err
	}
	if leaf != "" {
		// The reply stays open only if the branch ends in it.
		g.Open = inGroup && g.ID != ""
	}
	ex.Group = g

	// Remember the branch from its end back to the last delivered message:
	// a later line may attach anywhere on it without abandoning a message.
	var tail []string
	found := false
	for u := leaf; u != "" && branch[u] && len(tail) < claudeTailMax; u = parents[u] {
		tail = append(tail, u)
		if u == lastDelivered {
			found = true
			break
		}
	}
	if !found && (leaf == "" || !branch[lastDelivered]) {
		for _, u := range oldTail {
			if len(tail) >= claudeTailMax {
				break
			}
			tail = append(tail, u)
			if u == lastDelivered {
				break
			}
		}
	}
	ex.Tail = tail
	if r.next.Session.ID == "" {
		r.next.Session.ID = strings.TrimSuffix(filepath.Base(r.path), ".jsonl")
	}
	raw, err := json.Marshal(ex)
	if err != nil {
		return true, err
	}
	r.next.Extra = raw
	return true, r.settle(end)
}

// claudeRecordAt reads the record on the line starting at off.
func claudeRecordAt(path string, off int64, max int) (claudeRecord, error) {
	var rec claudeRecord
	f, err := os.Open(path)
	if err != nil {
		return rec, err
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return rec, err
	}
	br := bufio.NewReader(io.LimitReader(f, int64(max)+1))
	line, err := br.ReadBytes('\n')
	if err != nil && err != io.EOF {
		return rec, err
	}
	if err := json.Unmarshal(line, &rec); err != nil {
		return rec, fmt.Errorf("line at %d: %w", off, err)
	}
	return rec, nil
}

// claudeInjected matches user "messages" the harness writes itself: slash
// command echoes, local command output, hook output and interruption notes.
var claudeInjected = regexp.MustCompile(`^\s*(<command-name>|<command-message>|<command-args>|<local-command-stdout>|<local-command-stderr>|<bash-input>|<bash-stdout>|<bash-stderr>|<user-prompt-submit-hook>|Caveat: The messages below were generated|\[Request interrupted by user)`)

// systemReminder is harness context the client splices into user turns.
var systemReminder = regexp.MustCompile(`(?s)<system-reminder>.*?</system-reminder>`)

// claudeText is the prose of one record under opt ("" if none).
func claudeText(rec claudeRecord, opt Options) string {
	if rec.Message == nil || rec.IsMeta || rec.IsCompactSummary || rec.IsAPIErrorMessage || rec.VisibleOnly {
		return ""
	}
	if rec.Type == "assistant" && rec.Message.Model == "<synthetic>" {
		return ""
	}
	user := rec.Type == "user"
	clean := func(s string) string {
		if user {
			s = systemReminder.ReplaceAllString(s, "")
			if claudeInjected.MatchString(s) {
				return ""
			}
		}
		return strings.TrimSpace(s)
	}
	var s string
	if err := json.Unmarshal(rec.Message.Content, &s); err == nil {
		return clean(s)
	}
	var blocks []struct {
		Type    string          `json:"type"`
		Text    string          `json:"text"`
		Name    string          `json:"name"`
		Input   json.RawMessage `json:"input"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(rec.Message.Content, &blocks); err != nil {
		return ""
	}
	var parts []string
	for _, b := range blocks {
		var t string
		switch b.Type {
		case "text":
			t = clean(b.Text)
		case "image":
			t = "[image]"
		case "tool_use":
			if opt.IncludeTools {
				t = strings.TrimSpace("[tool " + b.Name + "] " + string(b.Input))
			}
		case "tool_result":
			if opt.IncludeTools {
				t = toolResultText(b.Content)
			}
		}
		if t != "" {
			parts = append(parts, t)
		}
	}
	// An image alone is not prose worth a message.
	if len(parts) == 1 && parts[0] == "[image]" {
		return ""
	}
	return strings.Join(parts, "\n")
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
