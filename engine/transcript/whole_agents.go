package transcript

import (
	"bufio"
	"encoding/json"
	"io"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// readWhole reads a transcript written whole (rewritten on every turn):
// nothing when stamp is as the cursor left it, else parse and deliver what
// follows the messages delivered before. A document that does not parse
// (torn by a writer, damaged) is counted malformed and what was delivered
// before stands.
func (r *run) readWhole(stamp string, parse func() (wholeDoc, error)) error {
	if r.wholeUnchanged(stamp) {
		return nil
	}
	doc, err := parse()
	if err != nil {
		if r.ctx.Err() != nil {
			return r.ctx.Err()
		}
		r.startCount(1) // one more record left out, added to what was counted before
		r.count(Malformed)
		r.next = r.prev
		return nil
	}
	return r.deliverWhole(doc, stamp)
}

// Continue keeps ~/.continue/sessions/<sessionId>.json: {sessionId, title,
// workspaceDirectory, history:[{message:{role, content}, contextItems}]}
// with roles user, assistant, thinking, tool and system, content a string
// or a list of {type:"text"} / {type:"imageUrl"} parts. contextItems (files
// and snippets the user attached) are context, not prose. sessions.json
// beside them is the index. (As continuedev/continue's core/util/history.ts
// and core/index.d.ts Session/ChatHistoryItem write them.)
func readContinue(r *run) error {
	return r.readWhole(fileStamp(r.path), func() (wholeDoc, error) {
		var f struct {
			SessionID string `json:"sessionId"`
			Title     string `json:"title"`
			Workspace string `json:"workspaceDirectory"`
			History   []struct {
				Message struct {
					ID      string          `json:"id"`
					Role    string          `json:"role"`
					Content json.RawMessage `json:"content"`
				} `json:"message"`
				ContextItems []json.RawMessage `json:"contextItems"`
			} `json:"history"`
		}
		if err := readJSONDoc(r.path, maxDoc, &f); err != nil {
			return wholeDoc{}, err
		}
		doc := wholeDoc{Session: Session{ID: f.SessionID, Summary: f.Title, Project: fileURIPath(f.Workspace), Ended: r.fi.ModTime().UTC()}}
		for i, h := range f.History {
			id := h.Message.ID
			if id == "" {
				id = "h" + strconv.Itoa(i)
			}
			switch h.Message.Role {
			case "thinking":
				doc.Items = append(doc.Items, drop(Thinking))
				continue
			}
			doc.Items = append(doc.Items, chatItem(r.opt, Continue, id, h.Message.Role, h.Message.Content, time.Time{}))
		}
		return doc, nil
	})
}

// Amp keeps $XDG_DATA_HOME/amp/threads/T-<id>.json: {id, created (Unix
// ms), title, messages:[{role, messageId, content:[blocks], meta:{sentAt}}],
// env:{initial:{trees:[{displayName, uri}]}}} with Anthropic-style blocks.
// (As agentsview's internal/parser/amp.go reads it.)
func readAmp(r *run) error {
	return r.readWhole(fileStamp(r.path), func() (wholeDoc, error) {
		var f struct {
			ID       string `json:"id"`
			Created  int64  `json:"created"`
			Title    string `json:"title"`
			Messages []struct {
				Role      string          `json:"role"`
				MessageID json.Number     `json:"messageId"`
				Content   json.RawMessage `json:"content"`
				Meta      struct {
					SentAt json.Number `json:"sentAt"`
				} `json:"meta"`
			} `json:"messages"`
			Env struct {
				Initial struct {
					Trees []struct {
						DisplayName string `json:"displayName"`
						URI         string `json:"uri"`
					} `json:"trees"`
				} `json:"initial"`
			} `json:"env"`
		}
		if err := readJSONDoc(r.path, maxDoc, &f); err != nil {
			return wholeDoc{}, err
		}
		doc := wholeDoc{Session: Session{ID: f.ID, Summary: f.Title}}
		if f.Created > 0 {
			doc.Session.Started = time.UnixMilli(f.Created).UTC()
		}
		if t := f.Env.Initial.Trees; len(t) > 0 {
			doc.Session.Project = fileURIPath(t[0].URI)
			if doc.Session.Project == "" {
				doc.Session.Project = t[0].DisplayName
			}
		}
		for i, m := range f.Messages {
			id := m.MessageID.String()
			if id == "" {
				id = "m" + strconv.Itoa(i)
			}
			doc.Items = append(doc.Items, chatItem(r.opt, Amp, id, m.Role, m.Content, parseTime(m.Meta.SentAt)))
		}
		return doc, nil
	})
}

// fileURIPath turns a file:// URI into a path ("" for other URIs; a plain
// path is returned as it is).
func fileURIPath(s string) string {
	if s == "" || !strings.Contains(s, "://") {
		return s
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "file" {
		return ""
	}
	p := u.Path
	if len(p) > 2 && p[0] == '/' && p[2] == ':' {
		p = p[1:] // file:///C:/Users/… on Windows
	}
	return p
}

// Cursor CLI (cursor-agent) keeps ~/.cursor/projects/<slug>/agent-transcripts/
// <id>.txt: "user:" and "assistant:" lines open each turn; a user's words
// sit inside <user_query>, beside injected <user_info>, <attached_files> and
// similar blocks; an assistant's turn holds "[Thinking]", "[Tool call]" and
// "[Tool result]" sections (indented bodies) beside its prose. Newer
// versions write <id>.jsonl, {role, message:{content}} a line. (As
// agentsview's internal/parser/cursor.go reads both.)
func cursorCLIMatch(p []string) bool {
	return len(p) == 3 && p[1] == "agent-transcripts" && (strings.HasSuffix(p[2], ".txt") || strings.HasSuffix(p[2], ".jsonl"))
}

const cursorCLIMax = 64 << 20

func readCursorCLI(r *run) error {
	return r.readWhole(fileStamp(r.path), func() (wholeDoc, error) {
		f, err := r.open()
		if err != nil {
			return wholeDoc{}, err
		}
		defer f.Close()
		slug := filepath.Base(filepath.Dir(filepath.Dir(r.path)))
		doc := wholeDoc{Session: Session{Project: slug, Started: r.fi.ModTime().UTC(), Ended: r.fi.ModTime().UTC()}}
		br := bufio.NewReader(io.LimitReader(f, cursorCLIMax))
		if strings.HasSuffix(r.path, ".jsonl") {
			return cursorCLIJSONL(r, br, doc)
		}
		return cursorCLIText(r, br, doc)
	})
}

func cursorCLIJSONL(r *run, br *bufio.Reader, doc wholeDoc) (wholeDoc, error) {
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 0, 64<<10), r.opt.MaxLineBytes)
	for n := 0; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var rec struct {
			Role    string `json:"role"`
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal([]byte(line), &rec) != nil {
			doc.Items = append(doc.Items, drop(Malformed))
			continue
		}
		it := chatItem(r.opt, CursorCLI, "m"+strconv.Itoa(n), rec.Role, rec.Message.Content, time.Time{})
		if it.Msg.Role == RoleUser {
			it.Msg.Text = userQuery(it.Msg.Text)
		}
		doc.Items = append(doc.Items, it)
	}
	return doc, sc.Err()
}

// cursorCLIText splits the plain transcript into turns and each turn into
// its parts.
func cursorCLIText(r *run, br *bufio.Reader, doc wholeDoc) (wholeDoc, error) {
	var role string
	var lines []string
	n := 0
	flush := func() {
		if role == "" {
			return
		}
		id := "m" + strconv.Itoa(n)
		n++
		if role == RoleUser {
			doc.Items = append(doc.Items, userItem(CursorCLI, Message{ID: id, Role: role, Text: userQuery(strings.Join(lines, "\n"))}))
		} else {
			text, why := cursorAssistant(lines, r.opt)
			if text == "" {
				doc.Items = append(doc.Items, drop(why))
			} else {
				doc.Items = append(doc.Items, keep(Message{ID: id, Role: role, Text: text}))
			}
		}
		role, lines = "", nil
	}
	for {
		line, err := br.ReadString('\n')
		t := strings.TrimRight(line, "\r\n")
		switch strings.TrimSpace(t) {
		case "user:":
			flush()
			role = RoleUser
		case "assistant:":
			flush()
			role = RoleAssistant
		default:
			if role != "" {
				lines = append(lines, t)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return doc, err
		}
	}
	flush()
	return doc, nil
}

// userQuery is the text inside <user_query>, else the text itself.
func userQuery(t string) string {
	if i := strings.Index(t, "<user_query>"); i >= 0 {
		if j := strings.Index(t[i:], "</user_query>"); j >= 0 {
			return strings.TrimSpace(t[i+len("<user_query>") : i+j])
		}
	}
	return t
}

// cursorAssistant keeps an assistant turn's prose: a "[Thinking]", "[Tool
// call]" or "[Tool result]" marker starts a section that runs while its
// lines are indented or blank.
func cursorAssistant(lines []string, opt Options) (string, Reason) {
	var out []string
	why := Empty
	in := Reason("")
	for _, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "[Thinking]"):
			in, why = Thinking, first(why, Thinking)
			continue
		case strings.HasPrefix(t, "[Tool call]"):
			in, why = ToolCall, first(why, ToolCall)
			if opt.IncludeTools {
				out = append(out, t)
			}
			continue
		case strings.HasPrefix(t, "[Tool result]"):
			in, why = ToolResult, first(why, ToolResult)
			continue
		}
		if in != "" && (t == "" || l[0] == ' ' || l[0] == '\t') {
			if opt.IncludeTools && in != Thinking && t != "" {
				out = append(out, t)
			}
			continue
		}
		in = ""
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n")), why
}

func first(cur, r Reason) Reason {
	if cur == Empty {
		return r
	}
	return cur
}

// Aider appends to .aider.chat.history.md in the project folder: "# aider
// chat started at <time>" opens each run, "#### " prefixes each line of
// what the user typed, "> " prefixes the tool's own output (commands run,
// files added, warnings, token reports), and the assistant's replies are
// the plain markdown between. (As Aider-AI/aider's aider/io.py writes it:
// user_input, tool_output with blockquote, ai_output.)
func aiderMatch(p []string) bool { return p[len(p)-1] == ".aider.chat.history.md" }

func readAider(r *run) error {
	return r.readWhole(fileStamp(r.path), func() (wholeDoc, error) {
		f, err := r.open()
		if err != nil {
			return wholeDoc{}, err
		}
		defer f.Close()
		doc := wholeDoc{Session: Session{ID: filepath.Base(filepath.Dir(r.path)), Project: filepath.Dir(r.path), Ended: r.fi.ModTime().UTC()}}
		br := bufio.NewReader(io.LimitReader(f, cursorCLIMax))
		var role string
		var text []string
		var at time.Time
		flush := func() {
			if role != "" {
				id := "m" + strconv.Itoa(len(doc.Items))
				doc.Items = append(doc.Items, keep(Message{ID: id, Role: role, Timestamp: at, Text: strings.Join(text, "\n")}))
			}
			role, text = "", nil
		}
		for {
			line, err := br.ReadString('\n')
			t := strings.TrimRight(line, "\r\n")
			switch {
			case strings.HasPrefix(t, "# aider chat started at "):
				flush()
				at = parseLocalTime(strings.TrimPrefix(t, "# aider chat started at "))
				if doc.Session.Started.IsZero() {
					doc.Session.Started = at
				}
				doc.Items = append(doc.Items, drop(Meta))
			case strings.HasPrefix(t, "#### ") || t == "####":
				if role != RoleUser {
					flush()
					role = RoleUser
				}
				text = append(text, strings.TrimPrefix(strings.TrimPrefix(t, "####"), " "))
			case strings.HasPrefix(t, "> ") || t == ">":
				if role != "" {
					flush()
				}
				doc.Items = append(doc.Items, drop(ToolResult))
			case strings.TrimSpace(t) == "":
				if role != "" {
					text = append(text, "")
				}
			default:
				if role != RoleAssistant {
					flush()
					role = RoleAssistant
				}
				text = append(text, t)
			}
			if err != nil {
				break
			}
		}
		flush()
		return doc, nil
	})
}

// parseLocalTime reads "2006-01-02 15:04:05" in the local zone (Aider
// writes local time).
func parseLocalTime(s string) time.Time {
	t, err := time.ParseInLocation("2006-01-02 15:04:05", strings.TrimSpace(s), time.Local)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}
