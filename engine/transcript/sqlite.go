package transcript

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"

	_ "modernc.org/sqlite" // pure-Go SQLite: no cgo in the default build
)

// Agents' SQLite databases are read from a private snapshot, never in
// place. Opening the agent's file, even read-only, is not harmless: on a
// WAL database SQLite creates the -wal and -shm files beside it when they
// are missing (the agent is not running) and writes its read marks into
// the agent's -shm when they are not; on a rollback-journal database a
// reader's shared lock makes the agent's next commit wait or fail with
// SQLITE_BUSY; and immutable=1 reads torn pages while the agent writes.
// A copy of the database, its -wal and its -journal takes no lock, creates
// nothing in the agent's folder and cannot block it; SQLite then recovers
// the copy (replays the WAL, rolls a hot journal back) in mnemo's scratch
// folder. A copy made while the agent checkpointed or committed to the
// database file is caught by comparing its stamp before and after, and
// made again.

// maxDatabaseBytes bounds the database (plus its WAL) copied for a read.
const maxDatabaseBytes = 8 << 30

// sqliteScratch names, in the scratch folder, the folders of database
// snapshots.
const sqliteScratch Kind = "sqlite"

// snapshotTries is how many times a copy torn by a concurrent write is
// made again before the read gives up until the next sync.
const snapshotTries = 4

// sqliteExtractor wraps a function that reads sessions from an open
// database into an extractor that works on a private snapshot.
func sqliteExtractor(fn func(ctx context.Context, db *sql.DB, path string, opt Options, emit func(string, wholeDoc) error) error) extractor {
	return func(ctx context.Context, path string, opt Options, emit func(string, wholeDoc) error) error {
		// The snapshot's whole folder goes with it, so that one found
		// later is known to be a crash's leftover (Extracts).
		base := scratchDir(opt, sqliteScratch, path)
		defer os.RemoveAll(base)
		dir := filepath.Join(base, "snap")
		snap, err := snapshot(ctx, path, dir)
		if err != nil {
			return err
		}
		db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: snap}).EscapedPath()+"?_pragma=busy_timeout(2000)&_pragma=query_only(1)")
		if err != nil {
			return fmt.Errorf("open snapshot: %w", err)
		}
		defer db.Close()
		db.SetMaxOpenConns(1)
		if err := db.PingContext(ctx); err != nil {
			return fmt.Errorf("open snapshot: %w", err)
		}
		if err := fn(ctx, db, path, opt, emit); err != nil {
			return fmt.Errorf("database: %w", err)
		}
		return nil
	}
}

// snapshot copies the database at path with its -wal and -journal into
// dir and returns the copy's path.
func snapshot(ctx context.Context, path, dir string) (string, error) {
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	dst := filepath.Join(dir, "db.sqlite")
	for try := 0; try < snapshotTries; try++ {
		before := stamps(path, path+"-journal")
		var total int64
		for _, suffix := range []string{"", "-wal", "-journal"} {
			n, err := copyFile(ctx, path+suffix, dst+suffix, maxDatabaseBytes-total)
			if err != nil {
				return "", err
			}
			total += n
		}
		// The WAL may have grown meanwhile: commits only append frames,
		// and SQLite's recovery of the copy stops at the first frame torn
		// or left from before a WAL reset. The database file itself (and a
		// rollback journal) must not have changed: that is a checkpoint or
		// a commit caught half-way.
		if stamps(path, path+"-journal") == before {
			return dst, nil
		}
	}
	return "", fmt.Errorf("the database kept changing while it was copied (%d tries); the next sync tries again", snapshotTries)
}

// copyFile copies src to dst (a missing src is no error and no file),
// refusing more than max bytes.
func copyFile(ctx context.Context, src, dst string, max int64) (int64, error) {
	os.Remove(dst)
	in, fi, err := openRegular("", src)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer in.Close()
	if fi.Size() > max {
		return 0, fmt.Errorf("%s: %d bytes, over the %d-byte limit for a database mnemo copies to read", src, fi.Size(), int64(maxDatabaseBytes))
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, ctxReader{ctx, io.LimitReader(in, max+1)})
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > max {
		err = fmt.Errorf("%s grew past the %d-byte limit while it was copied", src, int64(maxDatabaseBytes))
	}
	return n, err
}

// ctxReader stops a long copy when the context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// hasTable reports whether the database has the named table.
func hasTable(ctx context.Context, db *sql.DB, name string) bool {
	var n int
	err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name=?", name).Scan(&n)
	return err == nil && n > 0
}

// hasColumn reports whether table has the named column.
func hasColumn(ctx context.Context, db *sql.DB, table, col string) bool {
	var n int
	err := db.QueryRowContext(ctx, "SELECT count(*) FROM pragma_table_info(?) WHERE name=?", table, col).Scan(&n)
	return err == nil && n > 0
}

// queryAll runs query and scans every row of it with scan; a row that does
// not scan ends the read with its error.
func queryAll[T any](ctx context.Context, db *sql.DB, query string, scan func(*sql.Rows, *T) error) ([]T, error) {
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var all []T
	for rows.Next() {
		var v T
		if err := scan(rows, &v); err != nil {
			return nil, err
		}
		all = append(all, v)
	}
	return all, nil
}

// sessionItems runs a session's message query (its one parameter the
// session id) and reads one item a row with read; a row that does not scan
// is a malformed item, not the end of the read.
func sessionItems(ctx context.Context, db *sql.DB, query, session string, read func(*sql.Rows) (item, error)) ([]item, error) {
	rows, err := db.QueryContext(ctx, query, session)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var items []item
	for rows.Next() {
		it, err := read(rows)
		if err != nil {
			it = drop(Malformed)
		}
		items = append(items, it)
	}
	return items, rows.Err()
}
