package transcript

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
)

// Source is one root folder of one transcript format.
type Source struct {
	Kind Kind
	Root string
}

// Skip is a path Discover passed over, and why.
type Skip struct {
	Path   string
	Reason string
}

// DefaultSources lists where each agent keeps its transcripts under home,
// honouring the agents' own variables (CLAUDE_CONFIG_DIR, CODEX_HOME,
// OPENCLAW_STATE_DIR, PI_CODING_AGENT_DIR). The generic JSONL source has no default folder.
func DefaultSources(home string, getenv func(string) string) []Source {
	return DefaultSourcesFor(runtime.GOOS, home, getenv)
}

// DefaultSourcesFor is DefaultSources on the operating system goos
// ("linux", "darwin", "windows"), whatever mnemo runs on.
func DefaultSourcesFor(goos, home string, getenv func(string) string) []Source {
	o := osPaths{goos: goos, homeD: home, getenv: getenv}
	dir := func(env, fallback string) string { return o.env(env, o.home(fallback)) }
	srcs := []Source{
		{ClaudeCode, o.join(dir("CLAUDE_CONFIG_DIR", ".claude"), "projects")},
		{Codex, o.join(dir("CODEX_HOME", ".codex"), "sessions")},
		{Gemini, o.home(".gemini", "tmp")},
		{OpenClaw, o.join(dir("OPENCLAW_STATE_DIR", ".openclaw"), "agents")},
		{Pi, o.join(dir("PI_CODING_AGENT_DIR", o.join(".pi", "agent")), "sessions")},
		{CodeArchitect, o.home(".codearchitect", "sessions")},
	}
	for _, k := range moreKinds {
		for _, r := range roots(k, o) {
			srcs = append(srcs, Source{Kind: k, Root: r})
		}
	}
	return srcs
}

// ParseSourceFlag reads "KIND=DIR" (the --source flag). DIR may be the
// agent's home folder (~/.claude) or the transcripts folder itself
// (~/.claude/projects); Discover accepts both.
func ParseSourceFlag(s string) (Source, error) {
	kind, dir, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(dir) == "" {
		return Source{}, fmt.Errorf("source %q: want KIND=DIR, KIND one of %s", s, kindList())
	}
	k := Kind(strings.TrimSpace(kind))
	known := false
	for _, x := range Kinds {
		known = known || x == k
	}
	if !known {
		return Source{}, fmt.Errorf("source %q: unknown kind %q, want one of %s", s, kind, kindList())
	}
	abs, err := filepath.Abs(strings.TrimSpace(dir))
	if err != nil {
		return Source{}, fmt.Errorf("source %q: %w", s, err)
	}
	return Source{Kind: k, Root: abs}, nil
}

// KindList names every format, comma-separated, for help texts.
func KindList() string { return kindList() }

func kindList() string {
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// String is the KIND=DIR form.
func (s Source) String() string { return string(s.Kind) + "=" + s.Root }

// inner is the transcripts folder an agent keeps inside its home folder.
var inner = map[Kind]string{ClaudeCode: "projects", Codex: "sessions", Gemini: "tmp", OpenClaw: "agents", Pi: "sessions", CodeArchitect: "sessions"}

// dir is the folder the source's layout starts at: Root, or Root's inner
// transcripts folder when Root is the agent's home folder.
func (s Source) dir() string {
	if in, ok := inner[s.Kind]; ok && filepath.Base(s.Root) != in {
		if fi, err := os.Stat(filepath.Join(s.Root, in)); err == nil && fi.IsDir() {
			return filepath.Join(s.Root, in)
		}
	}
	return s.Root
}

var (
	dayFolder   = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	digitsN     = func(n int) *regexp.Regexp { return regexp.MustCompile(fmt.Sprintf(`^\d{%d}$`, n)) }
	year, month = digitsN(4), digitsN(2)
)

// classify says whether rel (a slash path below the source's folder) is a
// transcript of the source, a subagent transcript, or neither.
func (s Source) classify(rel string) (transcript, subagent bool) {
	p := strings.Split(rel, "/")
	n := len(p)
	base := p[n-1]
	switch s.Kind {
	case ClaudeCode:
		// <project>/<session>.jsonl, <project>/<session>/subagents/agent-*.jsonl
		if n == 2 && strings.HasSuffix(base, ".jsonl") {
			return true, false
		}
		if n == 4 && p[2] == "subagents" && strings.HasSuffix(base, ".jsonl") {
			return false, true
		}
	case Codex:
		// YYYY/MM/DD/rollout-*.jsonl
		if n == 4 && year.MatchString(p[0]) && month.MatchString(p[1]) && month.MatchString(p[2]) &&
			strings.HasPrefix(base, "rollout-") && strings.HasSuffix(base, ".jsonl") {
			return true, false
		}
	case Gemini:
		// <project>/chats/session-*.json(l), <project>/chats/<parent>/<id>.jsonl
		if n == 3 && p[1] == "chats" && strings.HasPrefix(base, "session-") &&
			(strings.HasSuffix(base, ".json") || strings.HasSuffix(base, ".jsonl")) {
			return true, false
		}
		if n == 4 && p[1] == "chats" && strings.HasSuffix(base, ".jsonl") {
			return false, true
		}
	case OpenClaw:
		// <agent>/sessions/<session>.jsonl
		if n == 3 && p[1] == "sessions" && strings.HasSuffix(base, ".jsonl") {
			return true, false
		}
	case Pi:
		// --<cwd with / as ->--/<time>_<session>.jsonl
		if n == 2 && strings.HasPrefix(p[0], "--") && strings.HasSuffix(p[0], "--") && strings.HasSuffix(base, ".jsonl") {
			return true, false
		}
	case CodeArchitect:
		// <YYYY-MM-DD>/<topic> (a folder holding full.md)
		if n == 2 && dayFolder.MatchString(p[0]) {
			return true, false
		}
	case JSONL:
		if strings.HasSuffix(base, ".jsonl") {
			return true, false
		}
	default:
		if f, ok := formats[s.Kind]; ok {
			return f.match(p), false
		}
	}
	return false, false
}

// beside reports whether rel (a slash path below the source's folder) names
// a file a reader reads beside a transcript: Gemini's
// <project>/.project_root. (CodeArchitect's summary.md lies in a topic
// folder, which Discover checks without walking into it.) The file rule
// holds it to the transcript's rule: one that is not a regular file is
// never read, and Discover names it.
func (s Source) beside(rel string) bool {
	return s.Kind == Gemini && strings.Count(rel, "/") == 1 && path.Base(rel) == ".project_root"
}

// besideSkip names a file read beside a transcript that the reader passes
// over, with why.
func besideSkip(p string, m fs.FileMode) Skip {
	if m&fs.ModeSymlink != 0 {
		return Skip{p, "symbolic link (not followed; the transcript beside it is read without it)"}
	}
	return Skip{p, "not a regular file: " + fileKind(m) + " (not read; the transcript beside it is read without it)"}
}

// depth is how deep below the source's folder its transcripts lie (0: any).
var depth = map[Kind]int{ClaudeCode: 4, Codex: 4, Gemini: 4, OpenClaw: 3, Pi: 2, CodeArchitect: 2}

// Owns reports whether path is a transcript the source reads under opt, or a
// folder below the source's root where transcripts may appear (the watcher
// uses it for new project and day folders).
func (s Source) Owns(path string, opt Options) bool {
	rel, ok := s.rel(path)
	if !ok {
		return false
	}
	if rel == "." {
		return true
	}
	t, sub := s.classify(rel)
	if t || sub && opt.IncludeSubagents {
		return true
	}
	fi, err := os.Lstat(path) // a link to a folder is not followed, as Discover does not
	if err != nil || !fi.IsDir() {
		return false
	}
	return s.walksInto(rel)
}

// walksInto reports whether Discover descends into a folder at rel (a
// slash path below the source's folder) looking for transcripts.
func (s Source) walksInto(rel string) bool {
	d := depth[s.Kind]
	if f, ok := formats[s.Kind]; ok {
		if skipFolder(s.Kind, strings.Split(rel, "/")) {
			return false
		}
		d = f.depth
	}
	return d == 0 || strings.Count(rel, "/")+1 < d
}

func (s Source) rel(path string) (string, bool) {
	rel, err := filepath.Rel(s.dir(), path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// Discover lists every transcript of the source (paths Read accepts, sorted)
// and what it passed over and why: subagent transcripts unless
// opt.IncludeSubagents, symbolic links (not followed), and folders it could
// not read. A missing root is no
// error: the agent is simply not installed.
func (s Source) Discover(ctx context.Context, opt Options) ([]string, []Skip, error) {
	if f, ok := formats[s.Kind]; ok {
		return s.discoverFormat(ctx, opt, f)
	}
	var paths []string
	var skipped []Skip
	subagents := 0
	linked := func(rel string) bool { t, sub := s.classify(rel); return t || sub }
	err := s.walk(ctx, &skipped, linked, func(path, rel string, d fs.DirEntry) error {
		t, sub := s.classify(rel)
		if d.IsDir() {
			if s.Kind == CodeArchitect && t {
				if _, err := os.Stat(filepath.Join(path, "full.md")); err == nil {
					paths = append(paths, path)
				} else {
					skipped = append(skipped, Skip{path, "topic folder without full.md"})
				}
				// The reader passes over a summary.md that is not a
				// regular file (the file rule); status says so.
				sum := filepath.Join(path, "summary.md")
				if fi, err := os.Lstat(sum); err == nil && !fi.Mode().IsRegular() {
					skipped = append(skipped, besideSkip(sum, fi.Mode()))
				}
				return fs.SkipDir
			}
			if dd := depth[s.Kind]; dd > 0 && strings.Count(rel, "/")+1 >= dd {
				return fs.SkipDir
			}
			return nil
		}
		if (t || sub) && !d.Type().IsRegular() {
			// A FIFO would hold a read forever, a device never end one.
			skipped = append(skipped, Skip{path, "not a regular file: " + fileKind(d.Type())})
			return nil
		}
		if s.beside(rel) && !d.Type().IsRegular() {
			skipped = append(skipped, besideSkip(path, d.Type()))
			return nil
		}
		switch {
		case t && s.Kind != CodeArchitect:
			paths = append(paths, path)
		case sub && opt.IncludeSubagents:
			paths = append(paths, path)
		case sub:
			subagents++
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if subagents > 0 {
		skipped = append(skipped, Skip{s.dir(), fmt.Sprintf("%d subagent transcripts (not indexed by default)", subagents)})
	}
	return paths, skipped, nil
}
