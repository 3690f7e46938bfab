package transcript

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// discoverFormat lists the transcripts of an added kind: files (or folders)
// its match takes, and the sessions inside the containers it takes (as
// "<container>/<key>" paths). Stores the agent keeps but mnemo cannot read
// are reported as skipped, "found, not readable", never passed over in
// silence.
func (s Source) discoverFormat(ctx context.Context, opt Options, f format) ([]string, []Skip, error) {
	var paths, containers []string
	var skipped []Skip
	linked := func(rel string) bool { return f.match(strings.Split(rel, "/")) }
	err := s.walk(ctx, &skipped, linked, func(p, rel string, d fs.DirEntry) error {
		parts := strings.Split(rel, "/")
		if d.IsDir() && skipFolder(s.Kind, parts) {
			return fs.SkipDir
		}
		hit := f.match(parts)
		if !hit && f.unreadable != nil {
			if why := f.unreadable(parts); why != "" {
				skipped = append(skipped, Skip{p, "found, not readable: " + why})
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
		}
		switch {
		case hit && d.IsDir() && f.folders:
			if missing := missingFile(p, f.need); missing != "" {
				skipped = append(skipped, Skip{p, "folder without " + missing})
			} else {
				paths = append(paths, p)
			}
			return fs.SkipDir
		case hit && !d.IsDir() && f.container != nil && containerFile(s.Kind, parts):
			containers = append(containers, p)
		case hit && !d.IsDir() && !f.folders:
			paths = append(paths, p)
		case d.IsDir() && f.depth > 0 && len(parts) >= f.depth:
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	more, sk := s.beyondWalk(ctx, opt, containers)
	return dedupSorted(append(paths, more...)), append(skipped, sk...), nil
}

// walk visits every entry below the source's folder, in lexical order,
// checking ctx at each: a missing folder is no error (the agent is not
// installed), an entry that cannot be read is recorded in skipped and
// passed over. A symbolic link is never followed (it may lead out of the
// folder: transcripts are read where they are); it is recorded when linked
// says its slash path below the folder names a transcript, or when it
// leads to a folder where the walk would look for transcripts. visit gets
// every other entry with that path.
func (s Source) walk(ctx context.Context, skipped *[]Skip, linked func(rel string) bool, visit func(p, rel string, d fs.DirEntry) error) error {
	root := s.dir()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			if p == root && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			*skipped = append(*skipped, Skip{p, "unreadable: " + err.Error()})
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		rel, ok := s.rel(p)
		if !ok || rel == "." {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			switch {
			case linked(rel):
				*skipped = append(*skipped, Skip{p, "symbolic link (not followed)"})
			case s.beside(rel):
				*skipped = append(*skipped, besideSkip(p, d.Type()))
			case s.walksInto(rel) && isFolder(p):
				// Where the walk would look for transcripts: a link there may
				// lead out of the tree or back up it (a loop), so it is not
				// followed, and said.
				*skipped = append(*skipped, Skip{p, "symbolic link to a folder (not followed)"})
			}
			return nil
		}
		return visit(p, rel, d)
	})
	if err != nil {
		return fmt.Errorf("discover %s: %w", s, err)
	}
	return nil
}

// isFolder reports whether p, followed, is a folder. Stat never blocks, not
// even on a FIFO, and a link loop is an error, not a folder.
func isFolder(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// beyondWalk lists the transcripts a walk of the folder does not name
// itself: the sessions inside the containers it found and those the
// source names elsewhere (Crush's projects, Aider's project folders).
func (s Source) beyondWalk(ctx context.Context, opt Options, containers []string) ([]string, []Skip) {
	var paths []string
	more, skipped := s.extraContainers()
	for _, c := range append(containers, more...) {
		keys, sk := listContainer(ctx, s.Kind, c, opt)
		skipped = append(skipped, sk...)
		for _, k := range keys {
			paths = append(paths, containedPath(c, k))
		}
	}
	if s.Kind == Aider {
		paths = append(paths, aiderProjects(ctx, s)...)
	}
	return paths, skipped
}

// skipFolder keeps a walk out of folders that hold no transcripts of the
// kind but may be huge: Aider's root is the home folder, walked three
// levels deep (~/code/project/.aider.chat.history.md) minus hidden and
// package folders; projects deeper are found through the project folders
// the other agents name.
func skipFolder(k Kind, parts []string) bool {
	b := parts[len(parts)-1]
	switch k {
	case Aider:
		return strings.HasPrefix(b, ".") || aiderSkip[b]
	case ClaudeExport, ChatGPTExport:
		return strings.HasPrefix(b, ".")
	}
	if allow, ok := folders[k]; ok {
		return !allow(parts)
	}
	return false
}

// folders says, for kinds whose root holds much besides transcripts (an
// editor's User folder, an agent's whole data folder), which folders a walk
// enters.
var folders = map[Kind]func(p []string) bool{
	CopilotChat: func(p []string) bool {
		switch len(p) {
		case 1:
			return p[0] == "workspaceStorage" || p[0] == "globalStorage"
		case 2:
			return p[0] == "workspaceStorage" || p[1] == "emptyWindowChatSessions"
		case 3:
			return p[0] == "workspaceStorage" && p[2] == "chatSessions"
		}
		return false
	},
	CursorIDE: func(p []string) bool {
		return len(p) == 1 && (p[0] == "workspaceStorage" || p[0] == "globalStorage") || len(p) == 2 && p[0] == "workspaceStorage"
	},
	OpenCode: func(p []string) bool {
		return len(p) == 1 && p[0] == "storage" || len(p) >= 2 && p[0] == "storage" && p[1] == "session"
	},
	Qwen: func(p []string) bool {
		return len(p) == 1 && (p[0] == "tmp" || p[0] == "projects") || len(p) == 2 || len(p) == 3 && p[2] == "chats"
	},
	Antigravity: func(p []string) bool { return len(p) == 1 && p[0] == "conversations" },
	Windsurf:    func(p []string) bool { return len(p) == 1 && p[0] == "cascade" },
}

var aiderSkip = map[string]bool{"node_modules": true, "Library": true, "AppData": true, "vendor": true, "snap": true, "go": true, "target": true}

func missingFile(dir string, need []string) string {
	for _, n := range need {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			return n
		}
	}
	return ""
}

// containerFile says, for kinds that have both per-session files and
// containers (OpenCode, Goose), whether the matched file is a container.
func containerFile(k Kind, parts []string) bool {
	b := parts[len(parts)-1]
	switch k {
	case OpenCode:
		return b == "opencode.db"
	case Goose:
		return b == "sessions.db"
	}
	return true
}

// extraContainers lists containers that lie outside the source's folder
// but that it names: Crush keeps a crush.db in each project, listed in its
// projects.json.
func (s Source) extraContainers() ([]string, []Skip) {
	if s.Kind != Crush {
		return nil, nil
	}
	return crushProjects(s.dir())
}

func dedupSorted(paths []string) []string {
	seen := make(map[string]bool, len(paths))
	out := paths[:0]
	for _, p := range paths {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	sortStrings(out)
	return out
}
