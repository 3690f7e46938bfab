package transcript

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Cursor keeps its chats in SQLite key-value databases named state.vscdb:
// <User>/globalStorage/state.vscdb and <User>/workspaceStorage/<id>/
// state.vscdb. In the table cursorDiskKV, composerData:<composerId> holds a
// chat's header ({composerId, name, createdAt, lastUpdatedAt,
// fullConversationHeadersOnly:[{bubbleId, type}]}) and
// bubbleId:<composerId>:<bubbleId> each message ({type: 1 user | 2
// assistant, text, thinking, toolFormerData, …}); older versions hold the
// bubbles inline (conversation:[…]). The oldest chat panel kept
// workbench.panel.aichat.view.aichat.chatdata in ItemTable: {tabs:[{tabId,
// chatTitle, bubbles:[{type:"user"|"ai", text}]}]}. A bubble's thinking and
// its tool calls (toolFormerData) are not prose. A workspace database's
// folder is in workspace.json beside it. (As cass's
// franken_agent_detection src/connectors/cursor.rs reads the store.)

func cursorMatch(p []string) bool {
	switch len(p) {
	case 2:
		return p[0] == "globalStorage" && p[1] == "state.vscdb"
	case 3:
		return p[0] == "workspaceStorage" && p[2] == "state.vscdb"
	}
	return false
}

type cursorBubble struct {
	BubbleID string          `json:"bubbleId"`
	Type     json.RawMessage `json:"type"`
	Text     string          `json:"text"`
	RawText  string          `json:"rawText"`
	Thinking json.RawMessage `json:"thinking"`
	Tool     json.RawMessage `json:"toolFormerData"`
	Created  json.RawMessage `json:"createdAt"`
	TS       json.RawMessage `json:"timestamp"`
}

func (b cursorBubble) item(id string, opt Options) item {
	role := ""
	switch strings.Trim(string(b.Type), `"`) {
	case "1", "user":
		role = RoleUser
	case "2", "ai", "assistant":
		role = RoleAssistant
	default:
		return drop(Unknown)
	}
	text := b.Text
	if text == "" {
		text = b.RawText
	}
	var ts any
	json.Unmarshal(b.Created, &ts)
	if ts == nil {
		json.Unmarshal(b.TS, &ts)
	}
	m := Message{ID: id, Role: role, Timestamp: parseTime(ts), Text: text}
	if strings.TrimSpace(text) == "" {
		switch {
		case len(b.Tool) > 4:
			if opt.IncludeTools {
				m.Text = "[tool] " + string(b.Tool)
				return keep(m)
			}
			return drop(ToolCall)
		case len(b.Thinking) > 4:
			return drop(Thinking)
		}
		return drop(Empty)
	}
	return keep(m)
}

var extractCursor = sqliteExtractor(func(ctx context.Context, db *sql.DB, path string, opt Options, emit func(string, wholeDoc) error) error {
	project := ""
	if filepath.Base(filepath.Dir(filepath.Dir(path))) == "workspaceStorage" {
		project = workspaceFolder(filepath.Dir(path))
	}
	if hasTable(ctx, db, "cursorDiskKV") {
		if err := cursorComposers(ctx, db, project, opt, emit); err != nil {
			return err
		}
	}
	if hasTable(ctx, db, "ItemTable") {
		return cursorChatPanel(ctx, db, project, opt, emit)
	}
	return nil
})

// cursorComposers reads the composerData chats.
func cursorComposers(ctx context.Context, db *sql.DB, project string, opt Options, emit func(string, wholeDoc) error) error {
	rows, err := db.QueryContext(ctx, `SELECT key, value FROM cursorDiskKV WHERE key >= 'composerData:' AND key < 'composerData;'`)
	if err != nil {
		return err
	}
	type composer struct {
		key   string
		value []byte
	}
	var all []composer
	for rows.Next() {
		var c composer
		if rows.Scan(&c.key, &c.value) == nil {
			all = append(all, c)
		}
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return err
	}
	rows.Close()
	for _, c := range all {
		id := strings.TrimPrefix(c.key, "composerData:")
		var h struct {
			Name         string          `json:"name"`
			Created      json.RawMessage `json:"createdAt"`
			Updated      json.RawMessage `json:"lastUpdatedAt"`
			Headers      []cursorBubble  `json:"fullConversationHeadersOnly"`
			Conversation []cursorBubble  `json:"conversation"`
		}
		doc := wholeDoc{Session: Session{ID: id, Project: project}}
		if json.Unmarshal(c.value, &h) != nil {
			doc.Items = []item{drop(Malformed)}
			if err := emit(id, doc); err != nil {
				return err
			}
			continue
		}
		doc.Session.Summary = h.Name
		doc.Session.Started, doc.Session.Ended = rawTime(h.Created), rawTime(h.Updated)
		if len(h.Headers) > 0 {
			if err := cursorBubbles(ctx, db, id, h.Headers, opt, &doc); err != nil {
				return err
			}
		} else {
			for i, b := range h.Conversation {
				bid := b.BubbleID
				if bid == "" {
					bid = "b" + strconv.Itoa(i)
				}
				doc.Items = append(doc.Items, b.item(bid, opt))
			}
		}
		if len(doc.Items) == 0 {
			continue // an empty composer Cursor opened and never used
		}
		if err := emit(id, doc); err != nil {
			return err
		}
	}
	return nil
}

// cursorBubbles reads a composer's bubbles in the order its headers list them.
func cursorBubbles(ctx context.Context, db *sql.DB, cid string, headers []cursorBubble, opt Options, doc *wholeDoc) error {
	prefix := "bubbleId:" + cid + ":"
	rows, err := db.QueryContext(ctx, `SELECT key, value FROM cursorDiskKV WHERE key >= ? AND key < ?`, prefix, "bubbleId:"+cid+";")
	if err != nil {
		return err
	}
	defer rows.Close()
	byID := map[string][]byte{}
	for rows.Next() {
		var k string
		var v []byte
		if rows.Scan(&k, &v) == nil {
			byID[strings.TrimPrefix(k, prefix)] = v
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, hd := range headers {
		v, ok := byID[hd.BubbleID]
		if !ok {
			doc.Items = append(doc.Items, drop(Empty)) // listed, never written
			continue
		}
		var b cursorBubble
		if json.Unmarshal(v, &b) != nil {
			doc.Items = append(doc.Items, drop(Malformed))
			continue
		}
		if len(b.Type) == 0 {
			b.Type = hd.Type
		}
		doc.Items = append(doc.Items, b.item(hd.BubbleID, opt))
	}
	return nil
}

// cursorChatPanel reads the oldest chat panel's tabs.
func cursorChatPanel(ctx context.Context, db *sql.DB, project string, opt Options, emit func(string, wholeDoc) error) error {
	var v []byte
	err := db.QueryRowContext(ctx, `SELECT value FROM ItemTable WHERE key = 'workbench.panel.aichat.view.aichat.chatdata'`).Scan(&v)
	if err == sql.ErrNoRows {
		return nil
	}
	if err != nil {
		return err
	}
	var data struct {
		Tabs []struct {
			TabID   string         `json:"tabId"`
			Title   string         `json:"chatTitle"`
			Bubbles []cursorBubble `json:"bubbles"`
		} `json:"tabs"`
	}
	if json.Unmarshal(v, &data) != nil {
		return nil
	}
	for i, t := range data.Tabs {
		id := t.TabID
		if id == "" {
			id = "tab" + strconv.Itoa(i)
		}
		doc := wholeDoc{Session: Session{ID: "aichat-" + id, Project: project, Summary: t.Title}}
		for j, b := range t.Bubbles {
			doc.Items = append(doc.Items, b.item("b"+strconv.Itoa(j), opt))
		}
		if len(doc.Items) > 0 {
			if err := emit("aichat-"+id, doc); err != nil {
				return err
			}
		}
	}
	return nil
}

func rawTime(raw json.RawMessage) time.Time {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return time.Time{}
	}
	return parseTime(v)
}
