package transcript

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
)

// Qwen Code is a fork of Gemini CLI. Older versions keep Gemini's layout
// under ~/.qwen/tmp/<project hash>/chats/session-*.json (read by the Gemini
// reader). Newer ones append ~/.qwen/projects/<project>/chats/<sessionId>.jsonl:
// one record a line, {uuid, parentUuid, sessionId, timestamp, type, cwd,
// message:{role, parts}}, type user, assistant, tool_result or system;
// parts are Gemini's ({text}, {text, thought:true}, {functionCall},
// {functionResponse}, {inlineData}). The active branch is the chain of
// parentUuid links back from the last record: records left behind by a
// retry or an edit are on abandoned branches. Not every user record is the
// user's: notifications, finished background tasks and cron prompts are
// user-role records with provenance "system" (or a subtype naming them),
// and goal records carry provenance goal_control or goal_runtime; a
// message typed while tools ran is subtype mid_turn_user_message, its
// words in systemPayload.displayText (the parts hold them behind a
// "[User message received during tool execution]: " label). Records with
// isSidechain are a subagent's, written into the same file. (As
// QwenLM/qwen-code's packages/core/src/services/chatRecordingService.ts
// writes it.)

func qwenMatch(p []string) bool {
	if len(p) != 4 || p[2] != "chats" {
		return false
	}
	b := p[3]
	switch p[0] {
	case "tmp":
		return strings.HasPrefix(b, "session-") && (strings.HasSuffix(b, ".json") || strings.HasSuffix(b, ".jsonl"))
	case "projects":
		return strings.HasSuffix(b, ".jsonl")
	}
	return false
}

func readQwen(r *run) error {
	if rel, ok := r.src.rel(r.path); ok && strings.HasPrefix(rel, "tmp/") {
		return readGemini(r)
	}
	return r.readWhole(fileStamp(r.path), func() (wholeDoc, error) { return qwenTree(r) })
}

type qwenRecord struct {
	UUID       string `json:"uuid"`
	ParentUUID string `json:"parentUuid"`
	SessionID  string `json:"sessionId"`
	Timestamp  string `json:"timestamp"`
	Type       string `json:"type"`
	Cwd        string `json:"cwd"`
	Subtype    string `json:"subtype"`
	Provenance string `json:"provenance"`
	Sidechain  bool   `json:"isSidechain"`
	Payload    struct {
		DisplayText string `json:"displayText"`
	} `json:"systemPayload"`
	Message struct {
		Role  string          `json:"role"`
		Parts json.RawMessage `json:"parts"`
	} `json:"message"`
}

func qwenTree(r *run) (wholeDoc, error) {
	f, err := r.open()
	if err != nil {
		return wholeDoc{}, err
	}
	defer f.Close()
	var recs []qwenRecord
	var doc wholeDoc
	sc := bufio.NewScanner(io.LimitReader(f, maxDoc))
	sc.Buffer(make([]byte, 0, 64<<10), r.opt.MaxLineBytes)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var rec qwenRecord
		if json.Unmarshal([]byte(line), &rec) != nil {
			doc.Items = append(doc.Items, drop(Malformed))
			continue
		}
		recs = append(recs, rec)
	}
	if err := sc.Err(); err != nil {
		return doc, err
	}
	// The active branch: back from the last record along parentUuid.
	on := map[string]bool{}
	byID := map[string]int{}
	for i, rec := range recs {
		byID[rec.UUID] = i
	}
	// A subagent's records share the file; the session's branch ends at
	// its own last record.
	last := len(recs) - 1
	for last >= 0 && recs[last].Sidechain {
		last--
	}
	if n := len(recs); last >= 0 {
		for i, hops := last, 0; i >= 0 && hops <= n; hops++ {
			on[recs[i].UUID] = true
			j, ok := byID[recs[i].ParentUUID]
			if !ok || recs[i].ParentUUID == "" {
				break
			}
			i = j
		}
	}
	for _, rec := range recs {
		s := &doc.Session
		if s.ID == "" {
			s.ID = rec.SessionID
		}
		if s.Project == "" {
			s.Project = rec.Cwd
		}
		doc.Items = append(doc.Items, qwenItem(r, rec, on[rec.UUID]))
	}
	return doc, nil
}

func qwenItem(r *run, rec qwenRecord, active bool) item {
	switch rec.Type {
	case "user", "assistant":
	case "tool_result":
		return drop(ToolResult)
	case "system":
		return drop(Meta)
	default:
		return drop(Unknown)
	}
	if rec.Sidechain {
		return drop(Sidechain)
	}
	if !active {
		return drop(Abandoned)
	}
	if rec.Type == "user" && qwenInjected(rec) {
		return drop(Injected)
	}
	text := partsText(rec.Message.Parts)
	if rec.Subtype == "mid_turn_user_message" {
		text = qwenMidTurn(rec, text)
	}
	m := Message{ID: rec.UUID, Role: roleOf(rec.Type), Timestamp: parseTime(rec.Timestamp), Text: text}
	if strings.TrimSpace(text) == "" {
		if strings.Contains(string(rec.Message.Parts), `"functionCall"`) {
			return drop(ToolCall)
		}
		if strings.Contains(string(rec.Message.Parts), `"thought"`) {
			return drop(Thinking)
		}
		return drop(Empty)
	}
	if m.Role == RoleUser {
		return userItem(Qwen, m)
	}
	return keep(m)
}

// qwenInjected tells the user-role records Qwen Code writes for itself
// (notifications, cron prompts, goal bookkeeping) from the user's own.
func qwenInjected(rec qwenRecord) bool {
	switch rec.Provenance {
	case "system", "goal_control", "goal_runtime", "tool_result":
		return true
	}
	switch rec.Subtype {
	case "notification", "background_task_completed", "cron":
		return true
	}
	return false
}

// qwenMidTurnLabel is what Qwen Code puts before a message typed while
// tools ran, in the text the model sees.
const qwenMidTurnLabel = "[User message received during tool execution]:"

// qwenMidTurn gives the user's words of a mid-turn message: the display
// text when recorded, else the parts without the label.
func qwenMidTurn(rec qwenRecord, text string) string {
	if d := strings.TrimSpace(rec.Payload.DisplayText); d != "" {
		return d
	}
	t := strings.TrimSpace(text)
	return strings.TrimSpace(strings.TrimPrefix(t, qwenMidTurnLabel))
}
