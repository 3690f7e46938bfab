package transcript

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Goose (block/goose) keeps its sessions in sessions.db in its data folder
// (~/.local/share/goose/sessions on Linux and macOS,
// %APPDATA%\Block\goose\data\sessions on Windows): sessions(id, name,
// description, working_dir, created_at, updated_at, …, parent_session_id)
// and messages(id, message_id, session_id, role, content_json,
// created_timestamp (Unix seconds), metadata_json). content_json is a
// list of typed parts: text is prose; toolRequest, toolResponse,
// frontendToolRequest and toolConfirmationRequest are tool traffic;
// thinking and redactedThinking are thinking; the rest (notifications,
// summarisation markers) are not prose. A message whose metadata says
// userVisible false is the harness's (a compaction summary) and left out.
// Older versions wrote one <session>.jsonl per session in the same folder:
// a metadata line ({working_dir, description, …}) and one message a line
// ({role, created, content}). (As block/goose's crates/goose/src/session/
// session_manager.rs and conversation/message.rs write them.)

func gooseMatch(p []string) bool {
	return len(p) == 1 && (p[0] == "sessions.db" || strings.HasSuffix(p[0], ".jsonl"))
}

// gooseItem is one Goose message's record.
func gooseItem(id, role string, content json.RawMessage, created int64, meta string, opt Options) item {
	if meta != "" {
		var m struct {
			UserVisible *bool `json:"userVisible"`
		}
		if json.Unmarshal([]byte(meta), &m) == nil && m.UserVisible != nil && !*m.UserVisible {
			return drop(Injected)
		}
	}
	var ts time.Time
	if created > 0 {
		ts = time.Unix(created, 0).UTC()
	}
	return chatItem(opt, Goose, id, role, content, ts)
}

func readGooseJSONL(r *run) error {
	return r.readWhole(fileStamp(r.path), func() (wholeDoc, error) {
		f, err := r.open()
		if err != nil {
			return wholeDoc{}, err
		}
		defer f.Close()
		doc := wholeDoc{Session: Session{ID: strings.TrimSuffix(filepath.Base(r.path), ".jsonl")}}
		sc := bufio.NewScanner(io.LimitReader(f, maxDoc))
		sc.Buffer(make([]byte, 0, 64<<10), r.opt.MaxLineBytes)
		for n := 0; sc.Scan(); n++ {
			var rec struct {
				ID          string          `json:"id"`
				Role        string          `json:"role"`
				Created     int64           `json:"created"`
				Content     json.RawMessage `json:"content"`
				WorkingDir  string          `json:"working_dir"`
				Description string          `json:"description"`
			}
			if json.Unmarshal(sc.Bytes(), &rec) != nil {
				doc.Items = append(doc.Items, drop(Malformed))
				continue
			}
			if rec.Role == "" {
				doc.Session.Project, doc.Session.Summary = rec.WorkingDir, rec.Description
				doc.Items = append(doc.Items, drop(Meta))
				continue
			}
			id := rec.ID
			if id == "" {
				id = "l" + strconv.Itoa(n)
			}
			doc.Items = append(doc.Items, gooseItem(id, rec.Role, rec.Content, rec.Created, "", r.opt))
		}
		return doc, sc.Err()
	})
}

var extractGoose = sqliteExtractor(func(ctx context.Context, db *sql.DB, path string, opt Options, emit func(string, wholeDoc) error) error {
	parent := "''"
	if hasColumn(ctx, db, "sessions", "parent_session_id") {
		parent = "COALESCE(parent_session_id,'')"
	}
	type sess struct{ id, name, desc, dir, created, updated, parent string }
	all, err := queryAll(ctx, db, `SELECT id, COALESCE(name,''), COALESCE(description,''), COALESCE(working_dir,''),
		COALESCE(CAST(created_at AS TEXT),''), COALESCE(CAST(updated_at AS TEXT),''), `+parent+` FROM sessions`,
		func(rows *sql.Rows, s *sess) error {
			return rows.Scan(&s.id, &s.name, &s.desc, &s.dir, &s.created, &s.updated, &s.parent)
		})
	if err != nil {
		return err
	}
	meta := "''"
	if hasColumn(ctx, db, "messages", "metadata_json") {
		meta = "COALESCE(metadata_json,'')"
	}
	msgID := "CAST(id AS TEXT)"
	if hasColumn(ctx, db, "messages", "message_id") {
		msgID = "COALESCE(message_id, CAST(id AS TEXT))"
	}
	for _, s := range all {
		title := s.name
		if title == "" {
			title = s.desc
		}
		doc := wholeDoc{Session: Session{ID: s.id, Project: s.dir, Summary: title, Started: parseTime(s.created), Ended: parseTime(s.updated)}, Subagent: s.parent != ""}
		doc.Items, err = sessionItems(ctx, db, `SELECT `+msgID+`, role, content_json, created_timestamp, `+meta+` FROM messages WHERE session_id = ? ORDER BY created_timestamp, id`, s.id,
			func(rows *sql.Rows) (item, error) {
				var id, role, content, md string
				var created int64
				if err := rows.Scan(&id, &role, &content, &created, &md); err != nil {
					return item{}, err
				}
				return gooseItem(id, role, json.RawMessage(content), created, md, opt), nil
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
