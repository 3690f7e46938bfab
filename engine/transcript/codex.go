package transcript

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Codex writes $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl,
// append-only, one {"timestamp","type","payload"} record per line:
// session_meta (id, cwd), turn_context, response_item (messages, reasoning,
// function calls and their output), event_msg (UI events, among them a copy of
// every user and assistant message) and compacted. The messages are indexed
// from response_item only, so each is indexed once; developer messages and the
// environment and instructions Codex injects as user messages are left out.
// A rollback appends event_msg {"type":"thread_rolled_back","num_turns":n}:
// the last n user turns are gone. Files from before mid-2025 have no envelope: a first {id, timestamp,
// instructions} line, then bare response items.

type codexLine struct {
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
	// The envelope-less form puts these on the line itself, beside
	// {"record_type":"state"} lines.
	ID         string `json:"id"`
	Role       string `json:"role"`
	RecordType string `json:"record_type"`
}

type codexItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	ID        string          `json:"id"`
	CWD       string          `json:"cwd"`
	Timestamp string          `json:"timestamp"`
	Content   []codexPart     `json:"content"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Input     string          `json:"input"`
	Output    json.RawMessage `json:"output"`
}

// codexPart is one part of a message's content.
type codexPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func readCodex(r *run) error {
	from, err := r.begin()
	if err != nil || from < 0 {
		return err
	}
	dropped, from, err := codexRollbacks(r, from)
	if err != nil {
		return err
	}
	r.startCount(from)
	// Envelope-less rollouts (before mid-2025) stamp only their first line:
	// a message without a time takes the latest time seen before it, else
	// the session's, else the date in the file's name, else its mtime.
	last := r.next.Session.Ended
	if last.IsZero() {
		last = codexFileTime(r)
	}
	end, err := r.lines(from, func(line []byte, at int64) error {
		return codexTake(r, line, at, dropped, &last)
	})
	if err != nil {
		return err
	}
	if r.next.Session.ID == "" {
		r.next.Session.ID = codexIDFromName(r.path)
	}
	return r.settle(end)
}

// codexRollbackKey is what a rollback event's line is told by, before it
// is parsed: in the new bytes and lines (codexRollbacks) and in the
// replay (codexDropped), which must look for the same bytes.
var codexRollbackKey = []byte(`"thread_rolled_back"`)

// codexRollbacks finds the spans of the turns rolled back, and where the
// read must start: from, or 0 after Reset if a delivered turn was rolled
// back. A rollback (Esc-Esc, /undo) is appended as an event naming how many
// user turns it drops; the dropped messages must not be delivered, and if
// some were, the session starts over. Finding one costs a scan of the new
// lines for the word, not a parse; replaying them reads the whole file.
func codexRollbacks(r *run, from int64) ([][2]int64, int64, error) {
	// The bytes first, in large blocks: most files have no rollback.
	if may, err := r.contains(from, codexRollbackKey); err != nil || !may {
		return nil, from, err
	}
	rolled := false
	if _, err := r.lines(from, func(line []byte, _ int64) error {
		rolled = rolled || bytes.Contains(line, codexRollbackKey)
		return nil
	}); err != nil || !rolled {
		return nil, from, err
	}
	dropped, err := codexDropped(r)
	if err != nil {
		return nil, from, err
	}
	for _, d := range dropped {
		if d[0] < from { // a delivered turn was rolled back
			return dropped, 0, r.restart()
		}
	}
	return dropped, from, nil
}

// codexTake counts one line and delivers its message, if any; last is the
// latest time seen, which a line without one takes.
func codexTake(r *run, line []byte, at int64, dropped [][2]int64, last *time.Time) error {
	kind, it, ts, ok := codexParse(line, &r.intern)
	if !ok {
		r.count(Malformed)
		return nil
	}
	if kind == "session_meta" && ts.IsZero() {
		ts = parseTime(it.Timestamp)
	}
	if ts.IsZero() {
		ts = *last
	} else {
		*last = ts
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
		r.count(Meta)
		return nil
	case "turn_context":
		if s.Project == "" {
			s.Project = it.CWD
		}
		r.count(Meta)
		return nil
	case "event_msg":
		r.count(codexEventReason(it.Type))
		return nil
	case "compacted", "state":
		r.count(Meta) // a compaction's summary; an old rollout's state marker
		return nil
	case "response_item":
	default:
		r.count(Unknown)
		return nil
	}
	for _, d := range dropped {
		if d[0] <= at && at < d[1] {
			r.count(Abandoned) // rolled back
			return nil
		}
	}
	m, why := codexMessage(it, ts, at, r.opt)
	return r.countMessage(m, why)
}

// codexParse reads one line: its record kind (session_meta, response_item,
// event_msg, …; the envelope-less form mapped onto these), the item, and its
// time. ok is false for a line that does not parse.
// in, if set, interns the strings that repeat.
func codexParse(line []byte, in *strIntern) (kind string, it codexItem, ts time.Time, ok bool) {
	l, it, ok := scanCodexLine(line, in)
	if !ok {
		return codexParseJSON(line)
	}
	payload, kind := codexPayload(line, l)
	if len(l.Payload) == 0 && len(payload) > 0 && payload[0] == '{' {
		// The envelope-less form: the line is the item.
		s := jscan{b: payload, in: in}
		if !scanCodexItem(&s, &it) || !s.end() {
			return codexParseJSON(line)
		}
	}
	return kind, it, parseTime(l.Timestamp), true
}

// codexPayload is the part of a line that holds its item, and the line's
// record kind.
func codexPayload(line []byte, l codexLine) (json.RawMessage, string) {
	payload, kind := l.Payload, l.Type
	switch {
	case len(payload) == 0 && (l.Type == "message" || l.Type == "reasoning" || strings.HasPrefix(l.Type, "function_call")):
		payload, kind = line, "response_item" // envelope-less form
	case len(payload) == 0 && l.Type == "" && l.ID != "":
		payload, kind = line, "session_meta"
	case len(payload) == 0 && l.Type == "" && l.RecordType != "":
		kind = "state"
	}
	return payload, kind
}

// The JSON names of codexLine's, codexItem's and codexPart's fields, in
// the order scanCodexLine and scanCodexItem number them.
var (
	codexLineFields = jsonFields{"timestamp", "type", "payload", "id", "role", "record_type"}
	codexItemFields = jsonFields{"type", "role", "id", "cwd", "timestamp", "content", "name", "arguments", "input", "output"}
	codexPartFields = jsonFields{"type", "text"}
)

// scanCodexLine is json.Unmarshal of a line into a codexLine, and of its
// payload, if an object, into a codexItem, in one pass (jsonscan.go); ok is
// false when encoding/json must decide.
func scanCodexLine(line []byte, in *strIntern) (l codexLine, it codexItem, ok bool) {
	s := jscan{b: line, in: in}
	ok = s.members(codexLineFields, func(f int) bool {
		switch f {
		case 0:
			return s.getString(&l.Timestamp)
		case 1:
			return s.shared(&l.Type)
		case 2:
			start, ok := s.i, false
			if s.i < len(s.b) && s.b[s.i] == '{' {
				ok = scanCodexItem(&s, &it)
			} else {
				ok = s.skip()
			}
			l.Payload = line[start:s.i] // a null too, as json.RawMessage keeps it
			return ok
		case 3:
			return s.getString(&l.ID)
		case 4:
			return s.shared(&l.Role)
		default:
			return s.shared(&l.RecordType)
		}
	})
	return l, it, ok && s.end()
}

// scanCodexItem is json.Unmarshal of the object at s.i into *it; false
// when encoding/json must decide.
func scanCodexItem(s *jscan, it *codexItem) bool {
	return s.members(codexItemFields, func(f int) bool {
		var ok bool
		switch f {
		case 0:
			ok = s.shared(&it.Type)
		case 1:
			ok = s.shared(&it.Role)
		case 2:
			ok = s.getString(&it.ID)
		case 3:
			ok = s.shared(&it.CWD)
		case 4:
			ok = s.getString(&it.Timestamp)
		case 5:
			ok = scanCodexContent(s, &it.Content)
		case 6:
			ok = s.shared(&it.Name)
		case 7:
			ok = s.getString(&it.Arguments)
		case 8:
			ok = s.getString(&it.Input)
		default:
			it.Output, ok = s.raw()
		}
		return ok
	})
}

// scanCodexContent reads a message's content parts (or null).
func scanCodexContent(s *jscan, parts *[]codexPart) bool {
	if s.null() {
		return true
	}
	if !s.array() {
		return false
	}
	*parts = []codexPart{}
	for first := true; ; first = false {
		done, ok := s.elem(first)
		if !ok {
			return false
		}
		if done {
			return true
		}
		var p codexPart
		ok = s.members(codexPartFields, func(f int) bool {
			if f == 0 {
				return s.shared(&p.Type)
			}
			return s.getString(&p.Text)
		})
		if !ok {
			return false
		}
		*parts = append(*parts, p)
	}
}

// codexParseJSON is codexParse with encoding/json.
func codexParseJSON(line []byte) (kind string, it codexItem, ts time.Time, ok bool) {
	var l codexLine
	if err := json.Unmarshal(line, &l); err != nil {
		return "", it, ts, false
	}
	payload, kind := codexPayload(line, l)
	if len(payload) > 0 && payload[0] == '{' {
		if err := json.Unmarshal(payload, &it); err != nil {
			return "", it, ts, false
		}
	}
	return kind, it, parseTime(l.Timestamp), true
}

// codexEventReason is why an event_msg is left out: the user's and the
// agent's messages and reasoning are echoed there, beside UI events.
func codexEventReason(typ string) Reason {
	switch typ {
	case "user_message", "agent_message":
		return Duplicate
	case "agent_reasoning", "agent_reasoning_raw_content":
		return Thinking
	}
	return Meta
}

// codexMessage is the message a response item holds under opt; with no
// text, why it holds none.
func codexMessage(it codexItem, ts time.Time, at int64, opt Options) (Message, Reason) {
	m := Message{ID: "L" + strconv.FormatInt(at, 10), Timestamp: ts}
	switch it.Type {
	case "message":
		if it.Role != RoleUser && it.Role != RoleAssistant {
			return Message{}, Injected // developer and system prompts
		}
		m.Role = it.Role
		var parts []string
		why := Empty
		for _, c := range it.Content {
			switch c.Type {
			case "input_text", "output_text", "text":
				t, harnessed := cleanText(Codex, it.Role, c.Text)
				if t == "" && harnessed {
					why = Injected
				}
				if t != "" {
					parts = append(parts, t)
				}
			case "input_image":
				parts = append(parts, "[image]")
			}
		}
		if len(parts) == 0 || len(parts) == 1 && parts[0] == "[image]" {
			return Message{}, why
		}
		m.Text = strings.Join(parts, "\n")
		return m, ""
	case "reasoning":
		return Message{}, Thinking
	case "web_search_call":
		return Message{}, ToolCall
	case "function_call", "custom_tool_call", "local_shell_call":
		if !opt.IncludeTools {
			return Message{}, ToolCall
		}
		args := it.Arguments
		if args == "" {
			args = it.Input
		}
		m.Role, m.Text = RoleAssistant, strings.TrimSpace("[tool "+it.Name+"] "+args)
		return m, ""
	case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
		if !opt.IncludeTools {
			return Message{}, ToolResult
		}
		m.Role, m.Text = RoleUser, codexOutput(it.Output)
		return m, ToolResult
	}
	return Message{}, Unknown
}

// codexDropped replays the rollbacks of the whole file: a turn starts at a
// user message of the user's own (not injected context); thread_rolled_back
// {num_turns: n} drops the last n turns still standing, up to the event. It
// returns the dropped byte ranges.
func codexDropped(r *run) ([][2]int64, error) {
	var turns []int64
	var dropped [][2]int64
	_, err := r.lines(0, func(line []byte, at int64) error {
		kind, it, ts, ok := codexParse(line, &r.intern)
		if !ok {
			return nil
		}
		if kind == "event_msg" && bytes.Contains(line, codexRollbackKey) {
			var ev struct {
				Payload struct {
					Type     string `json:"type"`
					NumTurns int    `json:"num_turns"`
				} `json:"payload"`
			}
			if json.Unmarshal(line, &ev) == nil && ev.Payload.Type == "thread_rolled_back" && ev.Payload.NumTurns > 0 {
				n := min(ev.Payload.NumTurns, len(turns))
				if n > 0 {
					dropped = append(dropped, [2]int64{turns[len(turns)-n], at})
					turns = turns[:len(turns)-n]
				}
			}
			return nil
		}
		if kind == "response_item" && it.Type == "message" && it.Role == RoleUser {
			if m, _ := codexMessage(it, ts, at, Options{}); m.Text != "" {
				turns = append(turns, at)
			}
		}
		return nil
	})
	return dropped, err
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

// codexNameTime is the time in rollout-YYYY-MM-DDThh-mm-ss-<uuid>.jsonl.
var codexNameTime = regexp.MustCompile(`rollout-(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})`)

// codexFileTime is the time a rollout's name gives, else its mtime.
func codexFileTime(r *run) time.Time {
	if m := codexNameTime.FindStringSubmatch(filepath.Base(r.path)); m != nil {
		if t, err := time.Parse("2006-01-02T15:04:05", m[1]+"T"+m[2]+":"+m[3]+":"+m[4]); err == nil {
			return t.UTC()
		}
	}
	return r.fi.ModTime().UTC()
}

// codexIDFromName takes the uuid at the end of rollout-<time>-<uuid>.jsonl.
func codexIDFromName(path string) string {
	base := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	if len(base) >= 36 {
		return base[len(base)-36:]
	}
	return base
}
