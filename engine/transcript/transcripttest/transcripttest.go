// Package transcripttest lays transcript fixtures out as the agents lay out their
// files under a home folder, for the tests and benchmarks that need a fake
// HOME holding every source.
package transcripttest

import (
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	_ "modernc.org/sqlite" // the fixtures' databases are built from SQL
)

// Agents lays the named agents' fixtures (dir/<agent>/home/…, as in
// testdata/transcripts) into home. A *.sql file becomes the SQLite
// database it describes (closed cleanly: a WAL database leaves no -wal or
// -shm behind); a *.in file is written with @HOME@ replaced by home.
func Agents(home, dir string, agents ...string) error {
	for _, a := range agents {
		src := filepath.Join(dir, a, "home")
		if err := copyTree(src, home); err != nil {
			return fmt.Errorf("fixture %s: %w", a, err)
		}
	}
	return nil
}

// Today lays the first six formats' fixtures (the transcript package's
// testdata: claude/projects, codex/sessions, …) under home where the agents
// keep them by default.
func Today(home, testdata string) error {
	for from, to := range map[string]string{
		"claude": ".claude", "codex": ".codex", "gemini": ".gemini", "openclaw": ".openclaw", "codearchitect": ".codearchitect",
	} {
		if err := copyTree(filepath.Join(testdata, from), filepath.Join(home, to)); err != nil {
			return fmt.Errorf("fixture %s: %w", from, err)
		}
	}
	return nil
}

// List names the agents that have a fixture laid out as a home folder
// (dir/<agent>/home) in dir.
func List(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if fi, err := os.Stat(filepath.Join(dir, e.Name(), "home")); err == nil && fi.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

func copyTree(src, home string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		switch {
		case strings.HasSuffix(p, ".sql"):
			return BuildDB(strings.TrimSuffix(dst, ".sql"), string(b))
		case strings.HasSuffix(p, ".in"):
			return os.WriteFile(strings.TrimSuffix(dst, ".in"), []byte(strings.ReplaceAll(string(b), "@HOME@", home)), 0o644)
		}
		return os.WriteFile(dst, b, 0o644)
	})
}

// BuildDB creates the SQLite database at path from a script of statements
// each ending a line with ";".
func BuildDB(path, script string) error {
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, st := range strings.Split(script, ";\n") {
		if st = strings.TrimSpace(st); st == "" {
			continue
		}
		if _, err := db.Exec(st); err != nil {
			return fmt.Errorf("%s: %w", filepath.Base(path), err)
		}
	}
	return db.Close()
}
