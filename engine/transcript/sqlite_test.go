package transcript

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// listDir names a folder's entries.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func gooseMessages(t *testing.T, home string, opt Options) []string {
	got, _, _, skips := readKind(t, home, Goose, opt, nil)
	for _, s := range skips {
		t.Errorf("skipped %s: %s", s.Path, s.Reason)
	}
	return got
}

// A database the agent closed cleanly has no -wal or -shm; a read-only open
// of it would create both. Reading it must leave the folder as it was.
func TestSQLiteReadLeavesNoFiles(t *testing.T) {
	home := fakeHome(t, "goose")
	dir := filepath.Join(home, ".local/share/goose/sessions")
	before := listDir(t, dir)
	if slices.Contains(before, "sessions.db-wal") || slices.Contains(before, "sessions.db-shm") {
		t.Fatalf("fixture left WAL files: %v", before)
	}
	if got := gooseMessages(t, home, Options{Scratch: t.TempDir()}); len(got) != 4 {
		t.Fatalf("got %d messages: %v", len(got), got)
	}
	if after := listDir(t, dir); !slices.Equal(before, after) {
		t.Errorf("folder changed: before %v, after %v", before, after)
	}
}

// With the agent writing in WAL mode (up to 400 commits, one a row, while
// mnemo reads five times), reads see what it committed, create nothing in
// its folder and never make it wait.
func TestSQLiteReadWithWriterActive(t *testing.T) {
	home := fakeHome(t, "goose")
	dir := filepath.Join(home, ".local/share/goose/sessions")
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "sessions.db")+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	insert := func(i int) error {
		content := fmt.Sprintf(`[{"type":"text","text":"gooseplover writer %d"}]`, i)
		_, err := db.Exec(`INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp) VALUES (?, '20251201_1', 'assistant', ?, ?)`,
			fmt.Sprintf("w%d", i), content, 1764590500+i)
		return err
	}
	if err := insert(0); err != nil {
		t.Fatal(err)
	}
	before := listDir(t, dir) // the writer's own -wal and -shm are there now
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var werr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 1; i <= 400; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := insert(i); err != nil {
				werr = err // busy_timeout(0): any lock mnemo held would show here
				return
			}
		}
	}()
	opt := Options{Scratch: t.TempDir()}
	for n := 0; n < 5; n++ {
		got := gooseMessages(t, home, opt)
		if len(got) < 5 || !strings.Contains(strings.Join(got, "\n"), "gooseplover writer 0") {
			t.Errorf("read %d: %d messages, want the 4 of the fixture and the writer's committed ones", n, len(got))
		}
	}
	close(stop)
	wg.Wait()
	if werr != nil {
		t.Errorf("the writer failed while mnemo read: %v", werr)
	}
	if after := listDir(t, dir); !slices.Equal(before, after) {
		t.Errorf("folder changed: before %v, after %v", before, after)
	}
}

// A rollback-journal database whose writer holds an exclusive lock
// mid-transaction is read as last committed, and the writer commits after.
func TestSQLiteReadWhileLocked(t *testing.T) {
	home := fakeHome(t, "goose")
	path := filepath.Join(home, ".local/share/goose/sessions/sessions.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("PRAGMA journal_mode=DELETE"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, `INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp) VALUES ('x', '20251201_1', 'user', '[{"type":"text","text":"uncommitted words"}]', 1764590999)`); err != nil {
		t.Fatal(err)
	}
	got := gooseMessages(t, home, Options{Scratch: t.TempDir()})
	if len(got) != 4 || strings.Contains(strings.Join(got, "\n"), "uncommitted") {
		t.Errorf("read under an exclusive lock: %v", got)
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		t.Errorf("the writer could not commit after mnemo read: %v", err)
	}
}

// A damaged database is reported, never fatal, and what was read of it
// before stands.
func TestSQLiteDamaged(t *testing.T) {
	home := fakeHome(t, "goose")
	opt := Options{Scratch: t.TempDir()}
	if got := gooseMessages(t, home, opt); len(got) != 4 {
		t.Fatalf("first read: %v", got)
	}
	path := filepath.Join(home, ".local/share/goose/sessions/sessions.db")
	if err := os.WriteFile(path, bytes.Repeat([]byte("not a database "), 500), 0o644); err != nil {
		t.Fatal(err)
	}
	ageExtraction(t, opt, Goose, path)
	var src Source
	for _, s := range DefaultSourcesFor("linux", home, func(string) string { return "" }) {
		if s.Kind == Goose {
			src = s
		}
	}
	paths, skips, err := src.Discover(context.Background(), opt)
	if err != nil {
		t.Fatalf("discover failed: %v", err)
	}
	if len(skips) != 1 || skips[0].Path != path || !strings.HasPrefix(skips[0].Reason, "unreadable: ") {
		t.Errorf("skips %v, want the damaged database reported", skips)
	}
	if !slices.Contains(paths, containedPath(path, "20251201_1")) {
		t.Errorf("the session read before is no longer listed: %v", paths)
	}
}

// ageExtraction makes a container's last extraction old enough to be due again.
func ageExtraction(t *testing.T, opt Options, k Kind, c string) {
	t.Helper()
	dir := scratchDir(opt, k, c)
	idx := loadIndex(dir)
	idx.At = time.Time{}
	b, _ := json.Marshal(idx)
	if err := writeAtomic(filepath.Join(dir, "index.json"), b); err != nil {
		t.Fatal(err)
	}
}

// A container that changed again soon after an extraction is read as
// extracted until ten times the extraction's duration has passed; then the
// change is read.
func TestContainerRateLimit(t *testing.T) {
	home := fakeHome(t, "goose")
	opt := Options{Scratch: t.TempDir()}
	_, cursors, _, _ := readKind(t, home, Goose, opt, nil)
	path := filepath.Join(home, ".local/share/goose/sessions/sessions.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp) VALUES ('late', '20251201_1', 'user', '[{"type":"text","text":"gooseplover late words"}]', 1764591000)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	dir := scratchDir(opt, Goose, path)
	idx := loadIndex(dir)
	idx.At, idx.Took = time.Now(), time.Hour // the next extraction is far off
	b, _ := json.Marshal(idx)
	if err := writeAtomic(filepath.Join(dir, "index.json"), b); err != nil {
		t.Fatal(err)
	}
	got, cursors, _, _ := readKind(t, home, Goose, opt, cursors)
	if len(got) != 0 {
		t.Errorf("read before the extraction was due: %v", got)
	}
	ageExtraction(t, opt, Goose, path)
	got, _, _, _ = readKind(t, home, Goose, opt, cursors)
	if len(got) != 1 || got[0] != "user: gooseplover late words" {
		t.Errorf("read once due: %v, want the new message", got)
	}
}

// Zed compresses most threads with zstd.
func TestZedZstd(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, ".local/share/zed/threads")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	thread, _ := json.Marshal(map[string]any{"title": "t", "messages": []any{
		map[string]any{"User": map[string]any{"id": "u", "content": []any{map[string]any{"Text": "compressed words"}}}},
	}})
	enc, _ := zstd.NewWriter(nil)
	blob := enc.EncodeAll(thread, nil)
	err := buildDB(filepath.Join(dir, "threads.db"), "CREATE TABLE threads (id TEXT PRIMARY KEY, summary TEXT NOT NULL, updated_at TEXT NOT NULL, data_type TEXT NOT NULL, data BLOB NOT NULL)")
	if err != nil {
		t.Fatal(err)
	}
	db, _ := sql.Open("sqlite", "file:"+filepath.Join(dir, "threads.db"))
	if _, err := db.Exec("INSERT INTO threads VALUES ('z', 't', '2025-12-01T00:00:00Z', 'zstd', ?)", blob); err != nil {
		t.Fatal(err)
	}
	db.Close()
	got, _, _, _ := readKind(t, home, Zed, Options{Scratch: t.TempDir()}, nil)
	if len(got) != 1 || got[0] != "user: compressed words" {
		t.Errorf("got %v", got)
	}
}

// TestZedThreadColumns: the columns Zed added to threads name a thread's
// project (folder_paths) and mark a subagent's thread (parent_id), which is
// read only when subagents are asked for.
func TestZedThreadColumns(t *testing.T) {
	ctx := context.Background()
	home := fakeHome(t, "zed")
	for _, sub := range []bool{false, true} {
		opt := Options{Scratch: t.TempDir(), IncludeSubagents: sub}
		projects := map[string]string{}
		for _, src := range DefaultSourcesFor("linux", home, func(string) string { return "" }) {
			if src.Kind != Zed {
				continue
			}
			paths, _, err := src.Discover(ctx, opt)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range paths {
				res, err := Read(ctx, src, p, Cursor{}, opt, Handler{})
				if err != nil {
					t.Fatalf("read %s: %v", p, err)
				}
				projects[res.Session.ID] = res.Session.Project
			}
		}
		if projects["th-new"] != "/home/dev/orchard" {
			t.Errorf("subagents %v: th-new project = %q, want /home/dev/orchard (from folder_paths)", sub, projects["th-new"])
		}
		if _, ok := projects["th-old"]; !ok {
			t.Errorf("subagents %v: th-old (no folder_paths) not read: %v", sub, projects)
		}
		if _, ok := projects["th-sub"]; ok != sub {
			t.Errorf("subagents %v: th-sub read = %v", sub, ok)
		}
	}
}
