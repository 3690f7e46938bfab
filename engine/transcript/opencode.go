package transcript

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// OpenCode keeps its data in $XDG_DATA_HOME/opencode (~/.local/share/opencode
// on every OS). Newer versions use one SQLite database, opencode.db: tables
// project(id, worktree), session(id, project_id, parent_id, title,
// time_created, time_updated), message(id, session_id, time_created,
// data) and part(id, message_id, session_id, time_created, data), data
// being JSON ({role} for a message; {type, text, synthetic} for a part).
// Older versions write the same records as files: storage/session/
// <projectID>/<sessionID>.json, storage/message/<sessionID>/<messageID>.json
// and storage/part/<messageID>/<partID>.json, with storage/project/<id>.json
// naming the worktree. A message's prose is its text parts; reasoning
// parts are thinking, tool parts tool calls, synthetic text parts (the
// harness's notes) injected; step-start, step-finish, snapshot, patch,
// file, agent and compaction parts carry no prose. A session with a parent
// is a subagent's. (As agentsview's internal/parser/opencode.go reads the
// database, and sst/opencode's packages/opencode/src/session/message-v2.ts
// defines the parts.)

func openCodeMatch(p []string) bool {
	if len(p) == 1 {
		return p[0] == "opencode.db"
	}
	return len(p) == 4 && p[0] == "storage" && p[1] == "session" && strings.HasSuffix(p[3], ".json")
}

type openCodePart struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	Synthetic bool   `json:"synthetic"`
	Tool      string `json:"tool"`
}

// openCodeItem is one message's record: its text parts' prose.
func openCodeItem(id, role string, ts time.Time, parts []openCodePart, sidechain bool, opt Options) item {
	r := roleOf(role)
	if r == "" {
		return drop(Unknown)
	}
	if sidechain && !opt.IncludeSubagents {
		return drop(Sidechain)
	}
	var texts []string
	why := Empty
	for _, p := range parts {
		switch p.Type {
		case "text":
			if p.Synthetic {
				why = first(why, Injected)
				continue
			}
			texts = append(texts, p.Text)
		case "reasoning":
			why = first(why, Thinking)
		case "tool":
			why = first(why, ToolCall)
			if opt.IncludeTools {
				texts = append(texts, "[tool "+p.Tool+"]")
			}
		default:
			why = first(why, Meta)
		}
	}
	m := Message{ID: id, Role: r, Timestamp: ts, Text: strings.Join(texts, "\n")}
	if strings.TrimSpace(m.Text) == "" {
		return drop(why)
	}
	if r == RoleUser {
		return userItem(OpenCode, m)
	}
	return keep(m)
}

// readOpenCodeTree reads one session of the file layout.
func readOpenCodeTree(r *run) error {
	return r.readWhole(fileStamp(r.path), func() (wholeDoc, error) {
		var s struct {
			ID        string `json:"id"`
			ProjectID string `json:"projectID"`
			Directory string `json:"directory"`
			ParentID  string `json:"parentID"`
			Title     string `json:"title"`
			Time      struct {
				Created json.Number `json:"created"`
				Updated json.Number `json:"updated"`
			} `json:"time"`
		}
		if err := readJSONDoc(r.path, 16<<20, &s); err != nil {
			return wholeDoc{}, err
		}
		storage := filepath.Dir(filepath.Dir(filepath.Dir(r.path)))
		doc := wholeDoc{Session: Session{ID: s.ID, Summary: s.Title, Project: s.Directory,
			Started: parseTime(s.Time.Created), Ended: parseTime(s.Time.Updated)}}
		if doc.Session.Project == "" {
			var p struct {
				Worktree string `json:"worktree"`
			}
			if readJSONDoc(filepath.Join(storage, "project", s.ProjectID+".json"), 1<<20, &p) == nil {
				doc.Session.Project = p.Worktree
			}
		}
		for _, mf := range sortedJSON(filepath.Join(storage, "message", s.ID)) {
			var m struct {
				ID   string `json:"id"`
				Role string `json:"role"`
				Time struct {
					Created json.Number `json:"created"`
				} `json:"time"`
			}
			if readJSONDoc(mf, 16<<20, &m) != nil {
				doc.Items = append(doc.Items, drop(Malformed))
				continue
			}
			var parts []openCodePart
			for _, pf := range sortedJSON(filepath.Join(storage, "part", m.ID)) {
				var p openCodePart
				if readJSONDoc(pf, 64<<20, &p) == nil {
					parts = append(parts, p)
				}
			}
			doc.Items = append(doc.Items, openCodeItem(m.ID, m.Role, parseTime(m.Time.Created), parts, s.ParentID != "", r.opt))
		}
		return doc, nil
	})
}

// sortedJSON lists a folder's *.json files by name (OpenCode's ids sort by time).
func sortedJSON(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".json") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out
}

var extractOpenCode = sqliteExtractor(func(ctx context.Context, db *sql.DB, path string, opt Options, emit func(string, wholeDoc) error) error {
	worktrees := map[string]string{}
	if rows, err := db.QueryContext(ctx, "SELECT id, worktree FROM project"); err == nil {
		for rows.Next() {
			var id, wt string
			if rows.Scan(&id, &wt) == nil {
				worktrees[id] = wt
			}
		}
		rows.Close()
	}
	rows, err := db.QueryContext(ctx, `SELECT id, COALESCE(project_id,''), COALESCE(parent_id,''), COALESCE(title,''), time_created, time_updated FROM session ORDER BY time_created`)
	if err != nil {
		return err
	}
	type sess struct {
		id, project, parent, title string
		created, updated           int64
	}
	var all []sess
	for rows.Next() {
		var s sess
		if err := rows.Scan(&s.id, &s.project, &s.parent, &s.title, &s.created, &s.updated); err != nil {
			rows.Close()
			return err
		}
		all = append(all, s)
	}
	rows.Close()
	for _, s := range all {
		doc := wholeDoc{Session: Session{ID: s.id, Project: worktrees[s.project], Summary: s.title,
			Started: time.UnixMilli(s.created).UTC(), Ended: time.UnixMilli(s.updated).UTC()}}
		doc.Subagent = s.parent != ""
		if err := openCodeDBMessages(ctx, db, s.id, false, opt, &doc); err != nil {
			return err
		}
		if err := emit(s.id, doc); err != nil {
			return err
		}
	}
	return nil
})

func openCodeDBMessages(ctx context.Context, db *sql.DB, sid string, sidechain bool, opt Options, doc *wholeDoc) error {
	parts := map[string][]openCodePart{}
	prow, err := db.QueryContext(ctx, `SELECT message_id, COALESCE(data,'{}') FROM part WHERE session_id = ? ORDER BY time_created, id`, sid)
	if err != nil {
		return err
	}
	for prow.Next() {
		var mid, data string
		if prow.Scan(&mid, &data) != nil {
			continue
		}
		var p openCodePart
		if json.Unmarshal([]byte(data), &p) == nil {
			parts[mid] = append(parts[mid], p)
		}
	}
	prow.Close()
	mrow, err := db.QueryContext(ctx, `SELECT id, data, time_created FROM message WHERE session_id = ? ORDER BY time_created, id`, sid)
	if err != nil {
		return err
	}
	defer mrow.Close()
	for mrow.Next() {
		var id, data string
		var created int64
		if mrow.Scan(&id, &data, &created) != nil {
			doc.Items = append(doc.Items, drop(Malformed))
			continue
		}
		var m struct {
			Role string `json:"role"`
		}
		if json.Unmarshal([]byte(data), &m) != nil {
			doc.Items = append(doc.Items, drop(Malformed))
			continue
		}
		doc.Items = append(doc.Items, openCodeItem(id, m.Role, time.UnixMilli(created).UTC(), parts[id], sidechain, opt))
	}
	return mrow.Err()
}
