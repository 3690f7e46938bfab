package transcript

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// aiderProjects finds .aider.chat.history.md in the project folders the
// other agents' stores name without opening a transcript: Claude Code's
// project folder names (the path with "/" written as "-"), Gemini CLI's
// .project_root files and the folders of VS Code-family workspaces
// (workspace.json). Only folders that exist and hold the history are
// returned; they may lie anywhere, not only below the source's root.
func aiderProjects(ctx context.Context, s Source) []string {
	if s.Root == "" {
		return nil
	}
	home := s.Root
	var dirs []string
	if ents, err := os.ReadDir(filepath.Join(home, ".claude", "projects")); err == nil {
		for _, e := range ents {
			if e.IsDir() && strings.HasPrefix(e.Name(), "-") {
				dirs = append(dirs, strings.ReplaceAll(e.Name(), "-", string(filepath.Separator)))
			}
		}
	}
	if ents, err := os.ReadDir(filepath.Join(home, ".gemini", "tmp")); err == nil {
		for _, e := range ents {
			// Under the file rule: a link to /dev/zero or a FIFO here
			// would otherwise be read without end, or block.
			if b, ok := readSmallFile(filepath.Join(home, ".gemini", "tmp", e.Name(), ".project_root"), 4<<10); ok {
				dirs = append(dirs, strings.TrimSpace(string(b)))
			}
		}
	}
	for _, u := range []string{"Code", "Code - Insiders", "VSCodium", "Cursor"} {
		ws := filepath.Join(home, ".config", u, "User", "workspaceStorage")
		ents, err := os.ReadDir(ws)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if ctx.Err() != nil {
				return nil
			}
			if d := workspaceFolder(filepath.Join(ws, e.Name())); d != "" {
				dirs = append(dirs, d)
			}
		}
	}
	var out []string
	for _, d := range dirs {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, ".aider.chat.history.md")
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
			out = append(out, p)
		}
	}
	return out
}

func sortStrings(s []string) { sort.Strings(s) }
