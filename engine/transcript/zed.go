package transcript

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// Zed keeps its agent threads in threads/threads.db in its data folder
// (~/.local/share/zed on Linux, ~/Library/Application Support/Zed on macOS,
// %LOCALAPPDATA%\Zed on Windows): threads(id, summary, updated_at,
// data_type, data), data being the thread as JSON, zstd-compressed when
// data_type is "zstd"; later columns parent_id (set on a subagent's
// thread) and folder_paths (the work folders, sorted, one a line) name
// the sub-agent's parent and the project. The current form (version 0.3.0) is {title,
// messages:[{"User":{id, content:[{"Text":…}|{"Mention":…}|{"Image":…}]}} |
// {"Agent":{content:[{"Text":…}|{"Thinking":…}|{"RedactedThinking":…}|
// {"ToolUse":…}], tool_results}} | "Resume"]}; the older form has
// messages:[{id, role, segments:[{type:"text"|"thinking"|"redacted_thinking",
// text}], tool_uses, tool_results, context, is_hidden}]. Mentions are the
// files and symbols the user attached: context, not prose. (As
// zed-industries/zed's crates/agent/src/db.rs (ThreadsDatabase, DbThread)
// and the older crates/agent/src/thread_store.rs SerializedThread write
// them.)

func zedMatch(p []string) bool { return len(p) == 1 && p[0] == "threads.db" }

// zedMaxThread bounds one thread's decompressed JSON.
const zedMaxThread = 256 << 20

var extractZed = sqliteExtractor(func(ctx context.Context, db *sql.DB, path string, opt Options, emit func(string, wholeDoc) error) error {
	rows, err := zedRows(ctx, db)
	if err != nil {
		return err
	}
	defer rows.Close()
	dec, err := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(zedMaxThread))
	if err != nil {
		return err
	}
	defer dec.Close()
	for rows.Next() {
		var id, summary, updated, typ, parent, folders string
		var data []byte
		if err := rows.Scan(&id, &summary, &updated, &typ, &data, &parent, &folders); err != nil {
			return err
		}
		doc := wholeDoc{Session: Session{ID: id, Summary: summary, Ended: parseTime(updated)}, Subagent: parent != ""}
		if f, _, _ := strings.Cut(folders, "\n"); f != "" {
			doc.Session.Project = f
		}
		raw, err := zedJSON(dec, typ, data)
		if err == nil {
			err = zedThread(raw, opt, &doc)
		}
		if err != nil {
			doc.Items = []item{drop(Malformed)}
		}
		if err := emit(id, doc); err != nil {
			return err
		}
	}
	return rows.Err()
})

// zedRows selects every thread with its parent (a subagent's thread) and
// work folders, which databases written before Zed added those columns
// lack: they read as empty.
func zedRows(ctx context.Context, db *sql.DB) (*sql.Rows, error) {
	cols := map[string]bool{}
	info, err := db.QueryContext(ctx, `SELECT name FROM pragma_table_info('threads')`)
	if err != nil {
		return nil, err
	}
	for info.Next() {
		var name string
		if err := info.Scan(&name); err != nil {
			info.Close()
			return nil, err
		}
		cols[name] = true
	}
	info.Close()
	if err := info.Err(); err != nil {
		return nil, err
	}
	opt := func(col string) string {
		if cols[col] {
			return "COALESCE(" + col + ",'')"
		}
		return "''"
	}
	return db.QueryContext(ctx, `SELECT id, COALESCE(summary,''), COALESCE(updated_at,''), COALESCE(data_type,'json'), data, `+
		opt("parent_id")+`, `+opt("folder_paths")+` FROM threads`)
}

func zedJSON(dec *zstd.Decoder, typ string, data []byte) ([]byte, error) {
	switch typ {
	case "json":
		return data, nil
	case "zstd":
		if err := dec.Reset(bytes.NewReader(data)); err != nil {
			return nil, err
		}
		return io.ReadAll(io.LimitReader(dec, zedMaxThread))
	}
	return nil, fmt.Errorf("unknown data type %q", typ)
}

// zedThread reads either form of a thread.
func zedThread(raw []byte, opt Options, doc *wholeDoc) error {
	var t struct {
		Title    string            `json:"title"`
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return err
	}
	if t.Title != "" {
		doc.Session.Summary = t.Title
	}
	for i, m := range t.Messages {
		doc.Items = append(doc.Items, zedMessage(m, "m"+strconv.Itoa(i), opt))
	}
	return nil
}

func zedMessage(raw json.RawMessage, id string, opt Options) item {
	var cur struct {
		User *struct {
			ID      string                       `json:"id"`
			Content []map[string]json.RawMessage `json:"content"`
		} `json:"User"`
		Agent *struct {
			Content []map[string]json.RawMessage `json:"content"`
		} `json:"Agent"`
		// The older form.
		Role     string `json:"role"`
		Hidden   bool   `json:"is_hidden"`
		Segments []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"segments"`
	}
	if json.Unmarshal(raw, &cur) != nil {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return drop(Meta) // "Resume"
		}
		return drop(Malformed)
	}
	switch {
	case cur.User != nil:
		if cur.User.ID != "" {
			id = cur.User.ID
		}
		t, why := zedContent(cur.User.Content, opt)
		return zedItem(Message{ID: id, Role: RoleUser, Text: t}, why)
	case cur.Agent != nil:
		t, why := zedContent(cur.Agent.Content, opt)
		return zedItem(Message{ID: id, Role: RoleAssistant, Text: t}, why)
	case cur.Role != "":
		if cur.Hidden || cur.Role == "system" {
			return drop(Injected)
		}
		var texts []string
		why := Empty
		for _, s := range cur.Segments {
			if s.Type == "text" {
				texts = append(texts, s.Text)
			} else {
				why = first(why, Thinking)
			}
		}
		return zedItem(Message{ID: id, Role: roleOf(cur.Role), Text: strings.Join(texts, "\n")}, why)
	}
	return drop(Unknown)
}

func zedItem(m Message, why Reason) item {
	if m.Role == "" {
		return drop(Unknown)
	}
	if strings.TrimSpace(m.Text) == "" {
		return drop(why)
	}
	return keep(m)
}

// zedContent joins a message's Text blocks; the other blocks say why there
// is none.
func zedContent(blocks []map[string]json.RawMessage, opt Options) (string, Reason) {
	var texts []string
	why := Empty
	for _, b := range blocks {
		for k, v := range b {
			switch k {
			case "Text":
				var s string
				if json.Unmarshal(v, &s) == nil {
					texts = append(texts, s)
				}
			case "Thinking", "RedactedThinking":
				why = first(why, Thinking)
			case "ToolUse":
				why = first(why, ToolCall)
				if opt.IncludeTools {
					texts = append(texts, "[tool] "+string(v))
				}
			case "Mention":
				why = first(why, Injected)
			case "Image":
				texts = append(texts, "[image]")
			default:
				why = first(why, Unknown)
			}
		}
	}
	t := strings.TrimSpace(strings.Join(texts, "\n"))
	if t == "[image]" {
		return "", why
	}
	return t, why
}
