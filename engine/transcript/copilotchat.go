package transcript

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
)

// GitHub Copilot Chat keeps each chat of a VS Code window in
// <User>/workspaceStorage/<hash>/chatSessions/<sessionId>.json (chats opened
// with no folder: <User>/globalStorage/emptyWindowChatSessions/), a
// document {version, sessionId, creationDate, lastMessageDate, customTitle,
// requests:[{requestId, message:{text, parts}, response:[items], timestamp}]}
// rewritten whole. A response item with no kind (or kind markdownContent)
// is the reply's markdown; thinking, toolInvocationSerialized,
// prepareToolInvocation, textEditGroup, codeblockUri, inlineReference,
// undoStop, progress and confirmation items are not prose. Newer versions
// write <sessionId>.jsonl instead: an operation log whose first line
// (kind 0) is the whole document and whose later lines set (kind 1), push
// onto (kind 2, cutting the array at i first when i is given) or delete
// (kind 3) the value at key path k. The window's folder is in
// workspace.json beside chatSessions. (As agentsview's
// internal/parser/vscode_copilot.go reads both forms.)

func copilotChatMatch(p []string) bool {
	b := p[len(p)-1]
	if !strings.HasSuffix(b, ".json") && !strings.HasSuffix(b, ".jsonl") {
		return false
	}
	switch len(p) {
	case 4:
		return p[0] == "workspaceStorage" && p[2] == "chatSessions"
	case 3:
		return p[0] == "globalStorage" && p[1] == "emptyWindowChatSessions"
	}
	return false
}

type copilotChatDoc struct {
	SessionID       string        `json:"sessionId"`
	CreationDate    json.Number   `json:"creationDate"`
	LastMessageDate json.Number   `json:"lastMessageDate"`
	CustomTitle     string        `json:"customTitle"`
	Requests        []copilotTurn `json:"requests"`
}

type copilotTurn struct {
	RequestID string `json:"requestId"`
	Message   struct {
		Text string `json:"text"`
	} `json:"message"`
	Response  []json.RawMessage `json:"response"`
	Timestamp json.Number       `json:"timestamp"`
}

func readCopilotChat(r *run) error {
	return r.readWhole(fileStamp(r.path), func() (wholeDoc, error) {
		var d copilotChatDoc
		var err error
		if strings.HasSuffix(r.path, ".jsonl") {
			err = replayOpLog(r, &d)
		} else {
			err = readJSONDoc(r.path, maxDoc, &d)
		}
		if err != nil {
			return wholeDoc{}, err
		}
		doc := wholeDoc{Session: Session{ID: d.SessionID, Summary: d.CustomTitle,
			Started: parseTime(d.CreationDate), Ended: parseTime(d.LastMessageDate)}}
		if len(strings.Split(filepath.ToSlash(r.path), "/")) > 3 && filepath.Base(filepath.Dir(r.path)) == "chatSessions" {
			doc.Session.Project = workspaceFolder(filepath.Dir(filepath.Dir(r.path)))
		}
		for i, q := range d.Requests {
			id := q.RequestID
			if id == "" {
				id = "r" + strconv.Itoa(i)
			}
			ts := parseTime(q.Timestamp)
			doc.Items = append(doc.Items, keep(Message{ID: id + "/q", Role: RoleUser, Timestamp: ts, Text: q.Message.Text}))
			text, why := copilotResponse(q.Response, r.opt)
			if text == "" {
				doc.Items = append(doc.Items, drop(why))
				continue
			}
			doc.Items = append(doc.Items, keep(Message{ID: id + "/a", Role: RoleAssistant, Timestamp: ts, Text: text}))
		}
		return doc, nil
	})
}

// copilotResponse joins a response's markdown items.
func copilotResponse(items []json.RawMessage, opt Options) (string, Reason) {
	var b strings.Builder
	why := Empty
	for _, raw := range items {
		var it struct {
			Kind    string          `json:"kind"`
			Value   json.RawMessage `json:"value"`
			Content struct {
				Value string `json:"value"`
			} `json:"content"`
			ToolID string `json:"toolId"`
		}
		if json.Unmarshal(raw, &it) != nil {
			continue
		}
		switch it.Kind {
		case "", "markdownContent":
			var s string
			if json.Unmarshal(it.Value, &s) != nil {
				s = it.Content.Value
			}
			b.WriteString(s)
		case "thinking":
			why = first(why, Thinking)
		case "toolInvocationSerialized", "prepareToolInvocation", "toolInvocation":
			why = first(why, ToolCall)
			if opt.IncludeTools {
				b.WriteString("\n[tool " + it.ToolID + "]\n")
			}
		default:
			why = first(why, Meta)
		}
	}
	return strings.TrimSpace(b.String()), why
}

// workspaceFolder is the folder a workspaceStorage entry's workspace.json names.
func workspaceFolder(dir string) string {
	var ws struct {
		Folder    string `json:"folder"`
		Workspace string `json:"workspace"`
	}
	if readJSONDoc(filepath.Join(dir, "workspace.json"), 1<<20, &ws) != nil {
		return ""
	}
	if ws.Folder != "" {
		return fileURIPath(ws.Folder)
	}
	return fileURIPath(ws.Workspace)
}

// replayOpLog rebuilds a Copilot Chat document from its operation log.
func replayOpLog(r *run, d *copilotChatDoc) error {
	f, err := r.open()
	if err != nil {
		return err
	}
	defer f.Close()
	var doc any
	br := bufio.NewReaderSize(io.LimitReader(f, maxDoc), 64<<10)
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 0, 64<<10), r.opt.MaxLineBytes)
	for n := 0; sc.Scan(); n++ {
		if n%256 == 0 && r.ctx.Err() != nil {
			return r.ctx.Err()
		}
		var op struct {
			Kind int               `json:"kind"`
			K    []json.RawMessage `json:"k"`
			V    json.RawMessage   `json:"v"`
			I    *int              `json:"i"`
		}
		if json.Unmarshal(sc.Bytes(), &op) != nil {
			continue // a torn last line: the document up to it stands
		}
		var v any
		if len(op.V) > 0 {
			if err := json.Unmarshal(op.V, &v); err != nil {
				continue
			}
		}
		if op.Kind == 0 {
			doc = v
			continue
		}
		applyOp(&doc, op.Kind, keyPath(op.K), v, op.I)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if doc == nil {
		return fmt.Errorf("operation log without its initial document")
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, d)
}

func keyPath(raw []json.RawMessage) []string {
	out := make([]string, len(raw))
	for i, k := range raw {
		var s string
		if json.Unmarshal(k, &s) != nil {
			s = string(k)
		}
		out[i] = s
	}
	return out
}

// applyOp sets (1), pushes onto (2) or deletes (3) the value at path.
func applyOp(doc *any, kind int, path []string, v any, at *int) {
	if len(path) == 0 {
		if kind == 1 {
			*doc = v
		}
		return
	}
	parent := *doc
	for _, k := range path[:len(path)-1] {
		parent = child(parent, k)
	}
	last := path[len(path)-1]
	switch p := parent.(type) {
	case map[string]any:
		switch kind {
		case 1:
			p[last] = v
		case 2:
			p[last] = push(p[last], v, at)
		case 3:
			delete(p, last)
		}
	case []any:
		i, err := strconv.Atoi(last)
		if err != nil || i < 0 || i >= len(p) {
			return
		}
		switch kind {
		case 1:
			p[i] = v
		case 2:
			p[i] = push(p[i], v, at)
		}
	}
}

func child(n any, k string) any {
	switch c := n.(type) {
	case map[string]any:
		return c[k]
	case []any:
		if i, err := strconv.Atoi(k); err == nil && i >= 0 && i < len(c) {
			return c[i]
		}
	}
	return nil
}

func push(cur, v any, at *int) any {
	arr, _ := cur.([]any)
	if at != nil && *at >= 0 && *at < len(arr) {
		arr = arr[:*at]
	}
	if items, ok := v.([]any); ok {
		return append(arr, items...)
	}
	if v != nil {
		return append(arr, v)
	}
	return arr
}
