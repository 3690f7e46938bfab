package transcript

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
)

// Gemini CLI keeps ~/.gemini/tmp/<project>/chats/session-<time>-<id8>.json:
// one JSON document {sessionId, projectHash, startTime, lastUpdated, messages}
// rewritten whole on every turn. Messages have type "user" or "gemini" (also
// info, error and warning notices), content as a string or a list of parts,
// and "thoughts" and "toolCalls" beside the content. The project folder is
// named by the SHA-256 of the project path (newer versions: a short slug), and
// holds the path itself in .project_root.
//
// Newer versions append instead (session-*.jsonl, and subagents under
// chats/<parentSessionId>/<id>.jsonl), as gemini-cli's
// packages/core/src/services/chatRecordingService.ts (loadConversationRecord)
// reads them: a metadata line {sessionId, projectHash, ...}; message records
// (a later record with the same id replaces the earlier one); {"$rewindTo": id},
// which drops that message and every later one (all of them if the id is
// unknown); and {"$set": {...}} metadata patches, where a non-empty
// $set.messages replaces the message list.

type geminiMsg struct {
	ID        string          `json:"id"`
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Content   json.RawMessage `json:"content"`
	Thoughts  json.RawMessage `json:"thoughts"`
	ToolCalls []struct {
		Name   string          `json:"name"`
		Args   json.RawMessage `json:"args"`
		Result json.RawMessage `json:"result"`
	} `json:"toolCalls"`
}

// geminiMessage turns one record into a Message and, when it holds no text
// to keep, says why.
func geminiMessage(m geminiMsg, index int, sessionID string, opt Options) (Message, Reason) {
	out := Message{ID: m.ID, Timestamp: parseTime(m.Timestamp)}
	if out.ID == "" {
		out.ID = fmt.Sprintf("%s#%d", sessionID, index)
	}
	switch m.Type {
	case "user":
		out.Role = RoleUser
	case "gemini", "model":
		out.Role = RoleAssistant
	default:
		return out, Injected // info, error, warning: client notices
	}
	parts := []string{}
	t, harnessed := cleanText(Gemini, out.Role, partsText(m.Content))
	if t != "" {
		parts = append(parts, t)
	}
	if opt.IncludeTools {
		for _, c := range m.ToolCalls {
			parts = append(parts, strings.TrimSpace("[tool "+c.Name+"] "+string(c.Args)))
			if len(c.Result) > 0 && string(c.Result) != "null" {
				parts = append(parts, string(c.Result))
			}
		}
	}
	out.Text = strings.Join(parts, "\n")
	switch {
	case out.Text != "":
		return out, ""
	case harnessed:
		return out, Injected
	case len(m.ToolCalls) > 0:
		return out, ToolCall
	case len(m.Thoughts) > 0 && string(m.Thoughts) != "null" && string(m.Thoughts) != "[]":
		return out, Thinking
	}
	return out, Empty
}

// partsText flattens a Gemini content value: a string, or a list of parts of
// which only text counts (inline data becomes "[image]").
func partsText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	var parts []struct {
		Text       *string         `json:"text"`
		InlineData json.RawMessage `json:"inlineData"`
		Thought    bool            `json:"thought"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return ""
	}
	var out []string
	for _, p := range parts {
		switch {
		case p.Thought:
		case p.Text != nil:
			out = append(out, *p.Text)
		case len(p.InlineData) > 0:
			out = append(out, "[image]")
		}
	}
	if len(out) == 1 && out[0] == "[image]" {
		return ""
	}
	return strings.Join(out, "\n")
}

// geminiProject fills the session's project from the chat's project folder.
func geminiProject(r *run, fileHash string) {
	s := &r.next.Session
	dir := filepath.Dir(r.path)
	for i := 0; i < 3 && filepath.Base(dir) != "chats"; i++ {
		dir = filepath.Dir(dir)
	}
	projDir := filepath.Dir(dir)
	folder := filepath.Base(projDir)
	if b, ok := r.readSmall(filepath.Join(projDir, ".project_root"), 4<<10); ok {
		if p := strings.TrimSpace(string(b)); p != "" {
			s.Project = p
			sum := sha256.Sum256([]byte(p))
			s.ProjectHash = hex.EncodeToString(sum[:])
			return
		}
	}
	switch {
	case isSHA256Hex(folder):
		s.ProjectHash = folder
	case isSHA256Hex(fileHash):
		s.ProjectHash = fileHash
	}
	s.Project = s.ProjectHash
	if s.Project == "" {
		s.Project = folder
	}
}

var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

func isSHA256Hex(s string) bool { return sha256Hex.MatchString(s) }

// prefixHash chains a delivered message into a running hash, so a rewrite of
// a whole-file transcript can be told from growth without keeping the text.
func prefixHash(prev string, m Message) string {
	h := sha256.New()
	io.WriteString(h, prev)
	io.WriteString(h, "\x00"+m.ID+"\x00"+m.Role+"\x00"+m.Text)
	return hex.EncodeToString(h.Sum(nil))
}

func readGemini(r *run) error {
	if r.unchanged() {
		r.next = r.prev
		return nil
	}
	if strings.HasSuffix(r.path, ".jsonl") {
		return readGeminiJSONL(r)
	}
	// A whole-file transcript: read the messages in order, check the ones
	// delivered before are unchanged (prefix hash), deliver the rest. If the
	// prefix changed, start over with Reset.
	resuming := r.prev.V == stateVersion && r.prev.Count > 0
	r.next = state{}
	ok, err := geminiWhole(r, resuming)
	if err != nil || ok {
		return err
	}
	if err := r.restart(); err != nil {
		return err
	}
	_, err = geminiWhole(r, false)
	return err
}

// geminiWhole streams one whole-file transcript. When resuming it delivers
// only messages past the previous count, and returns false (having delivered
// nothing) if the messages delivered before changed.
func geminiWhole(r *run, resuming bool) (bool, error) {
	f, err := r.open()
	if err != nil {
		return false, err
	}
	defer f.Close()
	// Each value is bounded like a JSONL line: one message of 200 MB is
	// counted too long, not held.
	p := &geminiPass{r: r, capped: &capReader{r: io.LimitReader(f, r.fi.Size())}, resuming: resuming, verified: !resuming}
	p.capped.allow(r.opt.MaxLineBytes)
	p.dec = json.NewDecoder(bufio.NewReaderSize(p.capped, 64<<10))
	// Every record is counted on every changed read: the file is rewritten
	// whole, so what it holds is counted whole (Coverage.Whole).
	r.startCount(0)
	if t, err := p.dec.Token(); err != nil || t != json.Delim('{') {
		return p.malformed(err)
	}
	for p.dec.More() {
		if err := r.ctx.Err(); err != nil {
			return false, err
		}
		p.capped.allow(r.opt.MaxLineBytes)
		t, err := p.dec.Token()
		if err != nil {
			return p.malformed(err)
		}
		if key, _ := t.(string); key == "messages" {
			if stop, ok, err := p.messages(); stop {
				return ok, err
			}
		} else if err := p.field(key); err != nil {
			return p.malformed(err)
		}
	}
	if !p.verified {
		return false, nil // fewer messages than before: rewound
	}
	p.finish()
	return true, nil
}

// geminiPass is the state of one pass over a whole-file transcript.
type geminiPass struct {
	r      *run
	capped *capReader
	dec    *json.Decoder
	head   struct {
		SessionID   string
		ProjectHash string
		Summary     string
	}
	count, index int
	prefix       string
	// verified: the messages delivered before were found unchanged (or
	// there were none: not resuming).
	resuming, verified bool
}

// malformed ends a pass on a torn or damaged file: it keeps what was
// delivered, counts the damage, and lets the next read (after the writer
// finished) try again.
func (p *geminiPass) malformed(err error) (bool, error) {
	r := p.r
	if errors.Is(err, errValueTooLong) {
		r.count(TooLong)
	} else {
		r.count(Malformed)
	}
	if p.resuming && !p.verified {
		r.next = r.prev
		return true, nil
	}
	r.next.Count, r.next.Prefix = p.count, p.prefix
	return true, nil
}

// field reads the value of a top-level key other than messages.
func (p *geminiPass) field(key string) error {
	switch key {
	case "sessionId":
		return p.dec.Decode(&p.head.SessionID)
	case "projectHash":
		return p.dec.Decode(&p.head.ProjectHash)
	case "summary":
		return p.dec.Decode(&p.head.Summary)
	}
	var skip json.RawMessage
	return p.dec.Decode(&skip)
}

// messages reads the messages array; stop says the pass ends there, with
// ok and err as geminiWhole's answer.
func (p *geminiPass) messages() (stop, ok bool, err error) {
	if t, err := p.dec.Token(); err != nil || t != json.Delim('[') {
		ok, err := p.malformed(err)
		return true, ok, err
	}
	for p.dec.More() {
		if p.index%256 == 0 {
			if err := p.r.ctx.Err(); err != nil {
				return true, false, err
			}
		}
		p.capped.allow(p.r.opt.MaxLineBytes)
		var m geminiMsg
		if err := p.dec.Decode(&m); err != nil {
			ok, err := p.malformed(err)
			return true, ok, err
		}
		if stop, ok, err := p.message(m); stop {
			return true, ok, err
		}
	}
	if _, err := p.dec.Token(); err != nil { // ]
		ok, err := p.malformed(err)
		return true, ok, err
	}
	return false, false, nil
}

// message counts one message and delivers it if it is past what was
// delivered before; stop as for messages.
func (p *geminiPass) message(m geminiMsg) (stop, ok bool, err error) {
	r := p.r
	msg, why := geminiMessage(m, p.index, p.head.SessionID, r.opt)
	p.index++
	if msg.Text == "" {
		r.count(why)
		return false, false, nil
	}
	r.countIndexed()
	p.prefix = prefixHash(p.prefix, msg)
	p.count++
	if !p.verified {
		switch {
		case p.count < r.prev.Count:
		case p.prefix != r.prev.Prefix:
			return true, false, nil
		default:
			p.verified = true
			r.next.Session, r.next.Messages = r.prev.Session, r.prev.Messages
		}
		return false, false, nil
	}
	if err := r.emit(msg); err != nil {
		return true, true, err
	}
	return false, false, nil
}

// finish records the session and where the pass ended.
func (p *geminiPass) finish() {
	r := p.r
	s := &r.next.Session
	s.ID = p.head.SessionID
	if s.ID == "" {
		s.ID = strings.TrimSuffix(filepath.Base(r.path), ".json")
	}
	s.Summary = p.head.Summary
	geminiProject(r, p.head.ProjectHash)
	r.next.Count, r.next.Prefix = p.count, p.prefix
	r.cur.Offset, r.cur.Size, r.cur.ModTime = r.fi.Size(), r.fi.Size(), r.fi.ModTime()
}

// errValueTooLong is capReader's refusal.
var errValueTooLong = errors.New("value longer than the line bound")

// capReader passes at most the allowed bytes since the last allow, so that
// a decoder never holds more than one bounded value.
type capReader struct {
	r    io.Reader
	left int
}

func (c *capReader) allow(n int) { c.left = n + 128<<10 } // and the decoder's read-ahead

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, errValueTooLong
	}
	if len(p) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= n
	return n, err
}

// readGeminiJSONL reads the append-only form. New records are delivered as
// they come (a message re-recorded under the same id is delivered again and
// replaces the earlier one); a $rewindTo or a $set of the whole message list
// among them changes history, so the whole file is replayed after Reset.
func readGeminiJSONL(r *run) error {
	from, err := r.begin()
	if err != nil || from < 0 {
		return err
	}
	if from > 0 {
		ok, err := geminiReplay(r, from)
		if err != nil || ok {
			return err
		}
		if err := r.restart(); err != nil {
			return err
		}
		r.tooLong = nil
	}
	_, err = geminiReplay(r, 0)
	return err
}

type geminiRecord struct {
	geminiMsg
	RewindTo *string `json:"$rewindTo"`
	Set      *struct {
		Summary  *string           `json:"summary"`
		Messages []json.RawMessage `json:"messages"`
	} `json:"$set"`
	SessionID   string `json:"sessionId"`
	ProjectHash string `json:"projectHash"`
	Summary     string `json:"summary"`
}

// geminiReplay replays the records from `from`: a first pass finds the live
// messages (the last record of each id, in first-recorded order, minus rewound
// ones; a $set of the message list replaces all before it) and their offsets;
// a second delivers them. Resuming (from > 0), it returns false, having
// delivered nothing, if the records rewrite history delivered before.
func geminiReplay(r *run, from int64) (bool, error) {
	type live struct {
		id  string
		off int64
	}
	var order []live
	pos := map[string]int{}
	// gone says why a message record is not live.
	gone := map[int64]Reason{}
	var sets []int64
	rewrites := false
	if _, err := r.lines(from, func(line []byte, at int64) error {
		var rec geminiRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			return nil // counted by geminiLines
		}
		switch {
		case rec.RewindTo != nil:
			// Resuming, a rewind may drop messages delivered before (even one
			// re-recorded among the new lines): replay the whole file.
			rewrites = rewrites || from > 0
			i, ok := pos[*rec.RewindTo]
			if !ok {
				i = 0
			}
			for _, l := range order[i:] {
				delete(pos, l.id)
				gone[l.off] = Abandoned
			}
			order = order[:i]
		case rec.ID != "":
			if i, ok := pos[rec.ID]; ok {
				gone[order[i].off] = Duplicate
				order[i].off = at
			} else {
				pos[rec.ID] = len(order)
				order = append(order, live{rec.ID, at})
			}
		case rec.Set != nil && len(rec.Set.Messages) > 0:
			for _, l := range order {
				gone[l.off] = Duplicate
			}
			order, pos = nil, map[string]int{}
			sets = append(sets, at)
			rewrites = rewrites || from > 0
		}
		return nil
	}); err != nil {
		return false, err
	}
	if rewrites {
		return false, nil
	}
	keep := map[int64]bool{}
	for _, l := range order {
		keep[l.off] = true
	}
	if len(sets) > 0 {
		keep[sets[len(sets)-1]] = true
	}
	return true, geminiLines(r, from, keep, gone)
}

// geminiLines delivers the message records from `from` at the offsets in keep,
// and keeps the session metadata. gone says why a message record left out is.
func geminiLines(r *run, from int64, keep map[int64]bool, gone map[int64]Reason) error {
	index := r.next.Count
	r.startCount(from)
	end, err := r.lines(from, func(line []byte, at int64) error {
		var rec geminiRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			r.count(Malformed)
			return nil
		}
		s := &r.next.Session
		if rec.SessionID != "" && s.ID == "" {
			s.ID = rec.SessionID
		}
		if rec.ProjectHash != "" {
			s.ProjectHash = rec.ProjectHash // the file's own; geminiProject decides
		}
		if rec.Summary != "" && rec.ID == "" {
			s.Summary = rec.Summary
		}
		if rec.Set != nil && rec.Set.Summary != nil {
			s.Summary = *rec.Set.Summary
		}
		if !keep[at] {
			why, ok := gone[at]
			switch {
			case ok:
			case rec.Set != nil && len(rec.Set.Messages) > 0:
				why = Duplicate // a message list replaced by a later one
			default:
				why = Meta // the metadata line, $rewindTo, $set of metadata
			}
			r.count(why)
			return nil
		}
		if rec.Set != nil && len(rec.Set.Messages) > 0 {
			// One line holding the whole list: indexed if any message is.
			var why Reason
			indexed := false
			for _, raw := range rec.Set.Messages {
				var m geminiMsg
				if json.Unmarshal(raw, &m) != nil {
					continue
				}
				msg, w := geminiMessage(m, index, s.ID, r.opt)
				index++
				if msg.Text == "" {
					if why == "" {
						why = w
					}
					continue
				}
				indexed = true
				if err := r.emit(msg); err != nil {
					return err
				}
			}
			if indexed {
				r.countIndexed()
				return nil
			}
			return r.countMessage(Message{}, why)
		}
		msg, why := geminiMessage(rec.geminiMsg, index, s.ID, r.opt)
		index++
		return r.countMessage(msg, why)
	})
	if err != nil {
		return err
	}
	r.next.Count = index
	if r.next.Session.ID == "" {
		r.next.Session.ID = strings.TrimSuffix(filepath.Base(r.path), ".jsonl")
	}
	geminiProject(r, r.next.Session.ProjectHash)
	return r.settle(end)
}
