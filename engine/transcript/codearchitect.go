package transcript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// CodeArchitect (codearchitect-mcp's store_session) writes one folder per
// stored conversation, ~/.codearchitect/sessions/<YYYY-MM-DD>/<topic>/, with
// summary.md and full.md, each written once (src/store-session/
// SessionStoreManager.ts and markdown-formatter.ts in tairqaldy/codearchitect-mcp).
// full.md starts "# <topic> - Full Context" and "**Date:** <ISO time>", then
// holds the conversation twice: "## Full Conversation (JSON)" with a ```json
// array of {"role","content"} objects, and "## Human-Readable Format" with
// "**USER:**" / "**ASSISTANT:**" blocks separated by "---". Older versions
// wrote only "## Conversation" with such blocks (or plain text). Messages
// carry no time of their own: each gets the file's Date, and an id from its
// place ("m1", "m2", …). The session is the topic folder: its id is
// "<date>/<topic>", its summary the "## Short Summary" of summary.md.
//
// What was assumed (the format has no spec beyond that code): roles are the
// JSON ones (user, assistant; others are skipped); without a JSON block the
// "**ROLE:**" markers are used; a full.md with neither is one user message.

// caFullMax bounds how much of a full.md (or summary.md) is read.
const caFullMax = 64 << 20

func readCodeArchitect(r *run) error {
	full := filepath.Join(r.path, "full.md")
	fi, err := statRegular(r.src.dir(), full)
	if err != nil {
		return fmt.Errorf("full.md: %w", err)
	}
	sumFi, _ := statRegular(r.src.dir(), filepath.Join(r.path, "summary.md"))
	r.fi = fi
	var sumStamp string
	if sumFi != nil {
		sumStamp = fmt.Sprint(sumFi.Size(), sumFi.ModTime().UnixNano())
	}
	if r.unchanged() && string(r.prev.Extra) == strconvQuote(sumStamp) {
		r.next = r.prev
		return nil
	}
	rel := filepath.Base(filepath.Dir(r.path)) + "/" + filepath.Base(r.path)
	// Rewritten whole, it is counted whole: one record per message block.
	r.startCount(0)
	f, err := r.openFile(full)
	if err != nil {
		return fmt.Errorf("full.md: %w", err)
	}
	msgs, date, err := codeArchitectMessages(f, &r.cov)
	f.Close()
	if err != nil {
		return err
	}
	// Rewritten whole: deliver what follows the messages delivered before, if
	// those are unchanged; else start over.
	count, prefix := 0, ""
	resuming := r.prev.V == stateVersion && r.prev.Count > 0
	for i, m := range msgs {
		prefix = prefixHash(prefix, m)
		count = i + 1
		if resuming && count == r.prev.Count && prefix != r.prev.Prefix {
			resuming = false
			break
		}
	}
	if resuming && count < r.prev.Count {
		resuming = false
	}
	start := 0
	if resuming {
		start = r.prev.Count
		r.next.Messages = r.prev.Messages
	} else if err := r.restart(); err != nil {
		return err
	}
	for _, m := range msgs[start:] {
		if m.Timestamp.IsZero() {
			m.Timestamp = date
		}
		if err := r.emit(m); err != nil {
			return err
		}
	}
	s := &r.next.Session
	s.ID = rel
	s.Path = r.path
	s.Project = ""
	s.Started, s.Ended = date, date
	s.Summary = codeArchitectSummary(r, filepath.Join(r.path, "summary.md"))
	r.next.Count, r.next.Prefix = count, prefix
	r.next.Extra = json.RawMessage(strconvQuote(sumStamp))
	r.cur = Cursor{Size: fi.Size(), ModTime: fi.ModTime(), Offset: fi.Size()}
	return nil
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

var caRole = regexp.MustCompile(`^\*\*([A-Za-z]+):\*\*\s*(.*)$`)

// codeArchitectMessages reads full.md line by line: the JSON block if there
// is one, else the **ROLE:** blocks. It counts each message block in cov.
func codeArchitectMessages(f io.Reader, cov *Coverage) ([]Message, time.Time, error) {
	br := bufio.NewReader(io.LimitReader(f, caFullMax))
	p := &caParse{cov: cov}
	for {
		line, err := br.ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, p.date, err
		}
		if p.line(strings.TrimRight(line, "\r\n")) {
			return p.conversation(br)
		}
		if err != nil {
			break
		}
	}
	p.flush()
	if len(p.msgs) == 0 {
		if t := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(strings.Join(p.plain, "\n")), "---")); t != "" {
			p.add(RoleUser, t)
		}
	}
	return p.msgs, p.date, nil
}

// caParse is the state of a read of full.md: the messages so far, the one
// being gathered (role, text), and where in the file the read is.
type caParse struct {
	cov      *Coverage
	date     time.Time
	msgs     []Message
	role     string
	text     []string
	inBody   bool
	jsonSeen bool
	plain    []string
}

// line takes one line of the file; it reports whether the JSON
// conversation starts after it.
func (p *caParse) line(t string) (conversation bool) {
	switch {
	case strings.HasPrefix(t, "**Date:**") && p.date.IsZero():
		p.date = parseTime(strings.TrimSpace(strings.TrimPrefix(t, "**Date:**")))
	case strings.HasPrefix(t, "## Full Conversation (JSON)"):
		p.jsonSeen = true
	case p.jsonSeen && t == "```json":
		return true
	case strings.HasPrefix(t, "## Conversation") || strings.HasPrefix(t, "## Human-Readable Format"):
		p.inBody = true
	case p.inBody && strings.HasPrefix(t, "*Generated by CodeArchitect"):
		p.inBody = false
	case p.inBody:
		if m := caRole.FindStringSubmatch(t); m != nil {
			p.flush()
			p.role = m[1]
			p.text = append(p.text, m[2])
		} else if p.role != "" {
			p.text = append(p.text, t)
		} else {
			p.plain = append(p.plain, t)
		}
	}
	return false
}

// conversation decodes the JSON conversation in place (the decoder stops
// at its end): when there is one, it is the session.
func (p *caParse) conversation(br io.Reader) ([]Message, time.Time, error) {
	var arr []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.NewDecoder(br).Decode(&arr); err != nil {
		return nil, p.date, fmt.Errorf("full.md: the JSON conversation does not parse")
	}
	for _, m := range arr {
		t, _ := blocksText(m.Content, Options{}, CodeArchitect, m.Role)
		p.add(m.Role, t)
	}
	return p.msgs, p.date, nil
}

func (p *caParse) add(role string, t string) {
	t = strings.TrimSpace(t)
	switch strings.ToLower(role) {
	case "user", "human":
		role = RoleUser
	case "assistant", "ai", "cursor", "copilot", "model":
		role = RoleAssistant
	default:
		p.cov.Count(Unknown)
		return
	}
	if t == "" {
		p.cov.Count(Empty)
		return
	}
	p.cov.CountIndexed()
	p.msgs = append(p.msgs, Message{ID: fmt.Sprintf("m%d", len(p.msgs)+1), Role: role, Text: t})
}

// flush closes the message being gathered.
func (p *caParse) flush() {
	if p.role != "" {
		p.add(p.role, strings.TrimSuffix(strings.TrimSpace(strings.Join(p.text, "\n")), "---"))
	}
	p.role, p.text = "", nil
}

// codeArchitectSummary is summary.md's "## Short Summary" section (the whole
// body when there is none), "" when there is no summary.md.
func codeArchitectSummary(r *run, path string) string {
	b, ok := r.readSmall(path, caFullMax)
	if !ok {
		return ""
	}
	if i := bytes.Index(b, []byte("## Short Summary")); i >= 0 {
		rest := b[i+len("## Short Summary"):]
		if j := bytes.Index(rest, []byte("\n---")); j >= 0 {
			rest = rest[:j]
		}
		return strings.TrimSpace(string(rest))
	}
	return strings.TrimSpace(string(b))
}
