package transcript

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Crush (charmbracelet/crush) keeps a crush.db in each project's data
// folder (<project>/.crush/ by default) and lists the projects in
// projects.json in its global data folder ($CRUSH_GLOBAL_DATA,
// $XDG_DATA_HOME/crush, ~/.local/share/crush; %LOCALAPPDATA%\crush on
// Windows): {projects:[{path, data_dir, last_accessed}]}. The database
// holds sessions(id, parent_session_id, title, …, created_at, updated_at)
// and messages(id, session_id, role, parts, model, created_at, …,
// is_summary_message); parts is a JSON list of {type, data}: text
// ({text}) is prose, reasoning ({thinking}) thinking, tool_call and
// tool_result tool traffic, finish, image_url, binary and shell_command no
// prose. A summary message is the harness's compaction of what came
// before; a session with a parent is a sub-agent's. (As crush's
// internal/db/migrations/*.sql, internal/message/message.go marshalParts
// and internal/projects/projects.go write them.)

func crushMatch(p []string) bool { return p[len(p)-1] == "crush.db" }

// crushProjects lists the crush.db of every project projects.json names.
func crushProjects(global string) ([]string, []Skip) {
	var list struct {
		Projects []struct {
			Path    string `json:"path"`
			DataDir string `json:"data_dir"`
		} `json:"projects"`
	}
	pj := filepath.Join(global, "projects.json")
	if err := readJSONDoc(pj, 16<<20, &list); err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, []Skip{{Path: pj, Reason: "unreadable: " + err.Error()}}
	}
	var out []string
	var skips []Skip
	for _, p := range list.Projects {
		dir := p.DataDir
		if dir == "" {
			dir = filepath.Join(p.Path, ".crush")
		}
		db := filepath.Join(dir, "crush.db")
		fi, err := os.Lstat(db)
		switch {
		case err != nil:
			continue // a project since deleted
		case !fi.Mode().IsRegular():
			skips = append(skips, Skip{Path: db, Reason: "not a regular file (not followed)"})
		default:
			out = append(out, db)
		}
	}
	return out, skips
}

type crushPart struct {
	Type string `json:"type"`
	Data struct {
		Text string `json:"text"`
	} `json:"data"`
}

var extractCrush = sqliteExtractor(func(ctx context.Context, db *sql.DB, path string, opt Options, emit func(string, wholeDoc) error) error {
	project := filepath.Dir(filepath.Dir(path))
	type sess struct {
		id, parent, title string
		created, updated  float64
	}
	all, err := queryAll(ctx, db, `SELECT id, COALESCE(parent_session_id,''), COALESCE(title,''), created_at, updated_at FROM sessions ORDER BY created_at`,
		func(rows *sql.Rows, s *sess) error {
			return rows.Scan(&s.id, &s.parent, &s.title, &s.created, &s.updated)
		})
	if err != nil {
		return err
	}
	summary := "0"
	if hasColumn(ctx, db, "messages", "is_summary_message") {
		summary = "is_summary_message"
	}
	for _, s := range all {
		doc := wholeDoc{Session: Session{ID: s.id, Project: project, Summary: s.title, Started: parseTime(s.created), Ended: parseTime(s.updated)}, Subagent: s.parent != ""}
		doc.Items, err = sessionItems(ctx, db, `SELECT id, role, parts, created_at, `+summary+` FROM messages WHERE session_id = ? ORDER BY created_at, rowid`, s.id,
			func(rows *sql.Rows) (item, error) {
				var id, role, parts string
				var created float64
				var isSummary int
				if err := rows.Scan(&id, &role, &parts, &created, &isSummary); err != nil {
					return item{}, err
				}
				return crushItem(id, role, parts, parseTime(created), isSummary != 0), nil
			})
		if err != nil {
			return err
		}
		if err := emit(s.id, doc); err != nil {
			return err
		}
	}
	return nil
})

func crushItem(id, role, raw string, ts time.Time, summary bool) item {
	var parts []crushPart
	if json.Unmarshal([]byte(raw), &parts) != nil {
		return drop(Malformed)
	}
	switch {
	case summary:
		return drop(Injected)
	case role == "tool":
		return drop(ToolResult)
	case role == "system":
		return drop(Injected)
	}
	var texts []string
	why := Empty
	for _, p := range parts {
		switch p.Type {
		case "text":
			texts = append(texts, p.Data.Text)
		case "reasoning":
			why = first(why, Thinking)
		case "tool_call":
			why = first(why, ToolCall)
		case "tool_result":
			why = first(why, ToolResult)
		default:
			why = first(why, Meta)
		}
	}
	m := Message{ID: id, Role: roleOf(role), Timestamp: ts, Text: strings.Join(texts, "\n")}
	if m.Role == "" {
		return drop(Unknown)
	}
	if strings.TrimSpace(m.Text) == "" {
		return drop(why)
	}
	if m.Role == RoleUser {
		return userItem(Crush, m)
	}
	return keep(m)
}
