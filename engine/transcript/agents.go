package transcript

import (
	"path"
	"strings"
)

// The source kinds added beside the first six. Each has a small reader in
// its own file; this file says where each one's transcripts lie.
const (
	CopilotChat   Kind = "copilot-chat"   // GitHub Copilot Chat in VS Code, Insiders, VSCodium
	CursorIDE     Kind = "cursor"         // Cursor IDE's state.vscdb databases
	CursorCLI     Kind = "cursor-cli"     // Cursor CLI's agent-transcripts
	CopilotCLI    Kind = "copilot-cli"    // GitHub Copilot CLI's session-state
	Cline         Kind = "cline"          // Cline (saoudrizwan.claude-dev)
	RooCode       Kind = "roo-code"       // Roo Code (rooveterinaryinc.roo-cline)
	KiloCode      Kind = "kilo-code"      // Kilo Code (kilocode.kilo-code)
	OpenCode      Kind = "opencode"       // OpenCode: opencode.db and the older storage tree
	Aider         Kind = "aider"          // Aider's .aider.chat.history.md
	Continue      Kind = "continue"       // Continue's ~/.continue/sessions
	Amp           Kind = "amp"            // Amp's threads
	Goose         Kind = "goose"          // Goose: sessions.db and the older JSONL files
	Factory       Kind = "factory"        // Factory Droid's ~/.factory/sessions
	Qwen          Kind = "qwen"           // Qwen Code (a Gemini CLI fork)
	Kimi          Kind = "kimi"           // Kimi CLI's context.jsonl
	Crush         Kind = "crush"          // Crush's crush.db in each project
	Kiro          Kind = "kiro"           // Kiro CLI's ~/.kiro/sessions/cli
	Zed           Kind = "zed"            // Zed's agent threads database
	OpenHands     Kind = "openhands"      // OpenHands' file store of events
	Antigravity   Kind = "antigravity"    // Google Antigravity (found, not readable)
	Windsurf      Kind = "windsurf"       // Windsurf Cascade (found, not readable)
	ClaudeExport  Kind = "claude-export"  // a claude.ai / Claude Desktop data export
	ChatGPTExport Kind = "chatgpt-export" // a ChatGPT data export
)

// moreKinds is the order the added kinds are listed in.
var moreKinds = []Kind{CopilotChat, CursorIDE, CursorCLI, CopilotCLI, Cline, RooCode, KiloCode, OpenCode, Aider,
	Continue, Amp, Goose, Factory, Qwen, Kimi, Crush, Kiro, Zed, OpenHands, Antigravity, Windsurf, ClaudeExport, ChatGPTExport}

// format is how one added kind's transcripts are found and read.
type format struct {
	// match reports whether p (the slash path below the source's folder,
	// split) is a transcript: a file, or a folder when folders is set, or
	// a file holding many sessions when container is set.
	match   func(p []string) bool
	depth   int  // how deep transcripts lie below the folder (0: any)
	folders bool // a transcript is a folder of files read together
	// need, for folders, is a file the folder must hold to be a transcript.
	need []string
	// read reads one transcript (a file or a folder).
	read func(*run) error
	// container extracts every session a matched file holds.
	container extractor
	// unreadable names, for a path match does not take, why it is a store
	// of the agent that cannot be read ("" when it is not one).
	unreadable func(p []string) string
}

// formats is the table of the added kinds.
var formats = map[Kind]format{
	CopilotChat: {match: copilotChatMatch, depth: 4, read: readCopilotChat},
	CursorIDE:   {match: cursorMatch, depth: 3, container: extractCursor},
	CursorCLI:   {match: cursorCLIMatch, depth: 3, read: readCursorCLI},
	CopilotCLI:  {match: copilotCLIMatch, depth: 2, read: readCopilotCLI},
	Cline:       {match: taskMatch, depth: 1, folders: true, need: []string{"ui_messages.json"}, read: readClineTask},
	RooCode:     {match: taskMatch, depth: 1, folders: true, need: []string{"ui_messages.json"}, read: readClineTask},
	KiloCode:    {match: taskMatch, depth: 1, folders: true, need: []string{"ui_messages.json"}, read: readClineTask},
	OpenCode:    {match: openCodeMatch, depth: 4, read: readOpenCodeTree, container: extractOpenCode},
	Aider:       {match: aiderMatch, depth: 3, read: readAider},
	Continue:    {match: extMatch(1, ".json", "sessions.json"), depth: 1, read: readContinue},
	Amp:         {match: extMatch(1, ".json", ""), depth: 1, read: readAmp},
	Goose:       {match: gooseMatch, depth: 1, read: readGooseJSONL, container: extractGoose},
	Factory:     {match: extMatch(2, ".jsonl", ""), depth: 2, read: readFactory},
	Qwen:        {match: qwenMatch, depth: 4, read: readQwen},
	Kimi:        {match: kimiMatch, depth: 3, read: readKimi},
	Crush:       {match: crushMatch, depth: 0, container: extractCrush},
	Kiro:        {match: extMatch(1, ".jsonl", ""), depth: 1, read: readKiro},
	Zed:         {match: zedMatch, depth: 1, container: extractZed},
	OpenHands:   {match: openHandsMatch, depth: 1, folders: true, need: []string{"events"}, read: readOpenHands},
	Antigravity: {match: never, depth: 2, unreadable: antigravityUnreadable},
	Windsurf:    {match: never, depth: 2, unreadable: windsurfUnreadable},
	ClaudeExport: {match: exportMatch, depth: 2,
		container: exportExtractor(claudeExportPeek, extractClaudeExport)},
	ChatGPTExport: {match: exportMatch, depth: 2,
		container: exportExtractor(chatGPTExportPeek, extractChatGPTExport)},
}

func never([]string) bool { return false }

// extMatch matches files n levels deep ending in ext, except the one named not.
func extMatch(n int, ext, not string) func([]string) bool {
	return func(p []string) bool {
		b := p[len(p)-1]
		return len(p) == n && strings.HasSuffix(b, ext) && b != not && !strings.HasPrefix(b, ".")
	}
}

// taskMatch: <taskId> (a folder) directly below tasks/.
func taskMatch(p []string) bool { return len(p) == 1 && !strings.HasPrefix(p[0], ".") }

// roots is where each added kind keeps its transcripts, per operating
// system: a list because VS Code's forks (Insiders, VSCodium, Cursor) each
// hold their own copy of an extension's storage.
func roots(k Kind, o osPaths) []string {
	switch k {
	case CopilotChat:
		return o.users("Code", "Code - Insiders", "VSCodium")
	case CursorIDE:
		return o.users("Cursor")
	case CursorCLI:
		return []string{o.home(".cursor", "projects")}
	case CopilotCLI:
		return []string{o.join(o.env("COPILOT_HOME", o.home(".copilot")), "session-state")}
	case Cline:
		return o.extension("saoudrizwan.claude-dev")
	case RooCode:
		return o.extension("rooveterinaryinc.roo-cline")
	case KiloCode:
		return o.extension("kilocode.kilo-code")
	case OpenCode:
		return []string{o.join(o.xdgData(), "opencode")}
	case Aider:
		return []string{o.home()}
	case Continue:
		return []string{o.join(o.env("CONTINUE_GLOBAL_DIR", o.home(".continue")), "sessions")}
	case Amp:
		return []string{o.join(o.xdgData(), "amp", "threads")}
	case Goose:
		if o.goos == "windows" {
			return []string{o.join(o.appData(), "Block", "goose", "data", "sessions")}
		}
		return []string{o.join(o.xdgData(), "goose", "sessions")}
	case Factory:
		return []string{o.home(".factory", "sessions")}
	case Qwen:
		return []string{o.home(".qwen")}
	case Kimi:
		return []string{o.join(o.env("KIMI_SHARE_DIR", o.home(".kimi")), "sessions")}
	case Crush:
		if v := o.getenv("CRUSH_GLOBAL_DATA"); v != "" {
			return []string{v}
		}
		if o.goos == "windows" {
			return []string{o.join(o.localAppData(), "crush")}
		}
		return []string{o.join(o.xdgData(), "crush")}
	case Kiro:
		return []string{o.home(".kiro", "sessions", "cli")}
	case Zed:
		switch o.goos {
		case "darwin":
			return []string{o.home("Library", "Application Support", "Zed", "threads")}
		case "windows":
			return []string{o.join(o.localAppData(), "Zed", "threads")}
		}
		return []string{o.join(o.xdgData(), "zed", "threads")}
	case OpenHands:
		return []string{o.home(".openhands", "sessions"), o.home(".openhands", "conversations")}
	case Antigravity:
		return []string{o.home(".gemini", "antigravity")}
	case Windsurf:
		return []string{o.home(".codeium", "windsurf")}
	case ClaudeExport, ChatGPTExport:
		return []string{o.home("Downloads")}
	}
	return nil
}

// osPaths builds one operating system's paths, whatever the one mnemo
// runs on: the OS is an input so that tests cover all three.
type osPaths struct {
	goos   string
	homeD  string
	getenv func(string) string
}

func (o osPaths) join(parts ...string) string {
	if o.goos == "windows" {
		var out []string
		for _, p := range parts {
			if p != "" {
				out = append(out, strings.TrimRight(strings.ReplaceAll(p, "/", `\`), `\`))
			}
		}
		return strings.Join(out, `\`)
	}
	return path.Join(parts...)
}

func (o osPaths) home(parts ...string) string { return o.join(append([]string{o.homeD}, parts...)...) }

func (o osPaths) env(name, fallback string) string {
	if v := o.getenv(name); v != "" {
		return v
	}
	return fallback
}

// appData is the roaming application-data folder (Windows %APPDATA%).
func (o osPaths) appData() string { return o.env("APPDATA", o.home("AppData", "Roaming")) }

// localAppData is Windows' %LOCALAPPDATA%.
func (o osPaths) localAppData() string { return o.env("LOCALAPPDATA", o.home("AppData", "Local")) }

// xdgData is $XDG_DATA_HOME or ~/.local/share: the Node and Rust agents
// that follow the XDG layout use it on every OS.
func (o osPaths) xdgData() string { return o.env("XDG_DATA_HOME", o.home(".local", "share")) }

// config is where Electron apps keep their User folder.
func (o osPaths) config() string {
	switch o.goos {
	case "darwin":
		return o.home("Library", "Application Support")
	case "windows":
		return o.appData()
	}
	return o.env("XDG_CONFIG_HOME", o.home(".config"))
}

// users lists the User folders of VS Code-family editors.
func (o osPaths) users(apps ...string) []string {
	out := make([]string, len(apps))
	for i, a := range apps {
		out[i] = o.join(o.config(), a, "User")
	}
	return out
}

// extension lists an extension's tasks folder in every VS Code-family editor.
func (o osPaths) extension(id string) []string {
	var out []string
	for _, u := range o.users("Code", "Code - Insiders", "VSCodium", "Cursor") {
		out = append(out, o.join(u, "globalStorage", id, "tasks"))
	}
	return out
}
