package transcript

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"mnemo/engine/transcript/transcripttest"
)

// agentFixtures is the folder of the added agents' fixtures, each laid out
// as the agent lays out its files under a home folder.
const agentFixtures = "../../testdata/transcripts"

// fakeHome lays the named agents' fixtures into a new home folder.
func fakeHome(t testing.TB, agents ...string) string {
	t.Helper()
	home := t.TempDir()
	if err := transcripttest.Agents(home, agentFixtures, agents...); err != nil {
		t.Fatal(err)
	}
	return home
}

func buildDB(path, script string) error { return transcripttest.BuildDB(path, script) }

// agentCase is what one agent's fixture must give: the messages of all its
// sessions (sessions in path order), each "role: text prefix", and the
// word that marks its noise (tool calls and results, thinking, injected
// context, abandoned branches), which no message may hold.
type agentCase struct {
	fixture string
	kind    Kind
	want    []string
	noise   string
	// inside: the noise lies inside the records that give prose (a turn
	// holding its tool calls), so no record is left out whole.
	inside bool
}

var agentCases = []agentCase{
	{"copilot-chat", CopilotChat, []string{"user: vscodequokka beta", "assistant: vscodequokka gamma", "user: vscodequokka alpha", "assistant: vscodequokka omega: the build fails because go.mod"}, "vscodequokkanoise", true},
	{"cursor", CursorIDE, []string{"user: cursorheron beta", "assistant: cursorheron delta", "user: cursorheron alpha", "assistant: cursorheron omega"}, "cursorheronnoise", false},
	{"cursor-cli", CursorCLI, []string{"user: cursorclilynx alpha", "assistant: cursorclilynx omega"}, "cursorclilynxnoise", true},
	{"copilot-cli", CopilotCLI, []string{"user: ghcliotter alpha", "assistant: ghcliotter omega"}, "ghcliotternoise", false},
	{"cline", Cline, []string{"user: clinemarten alpha", "assistant: clinemarten omega", "assistant: clinemarten delta", "user: clinemarten beta", "assistant: clinemarten gamma"}, "clinemartennoise", false},
	{"roo-code", RooCode, []string{"user: roowombat alpha", "assistant: roowombat omega", "assistant: roowombat delta", "user: roowombat beta", "assistant: roowombat gamma"}, "roowombatnoise", false},
	{"kilo-code", KiloCode, []string{"user: kiloibis alpha", "assistant: kiloibis omega", "assistant: kiloibis delta", "user: kiloibis beta", "assistant: kiloibis gamma"}, "kiloibisnoise", false},
	{"opencode", OpenCode, []string{"user: opencodetapir alpha", "assistant: opencodetapir omega", "user: opencodelemur alpha", "assistant: opencodelemur omega"}, "noise", true},
	{"aider", Aider, []string{"user: aiderbadger alpha", "assistant: aiderbadger omega", "user: aiderbadger beta"}, "aiderbadgernoise", false},
	{"continue", Continue, []string{"user: continuegecko alpha", "assistant: continuegecko omega"}, "continuegeckonoise", false},
	{"amp", Amp, []string{"user: ampnewt alpha", "assistant: ampnewt omega"}, "ampnewtnoise", false},
	{"goose", Goose, []string{"user: gooseloon alpha", "assistant: gooseloon omega", "user: gooseplover alpha", "assistant: gooseplover omega"}, "noise", false},
	{"factory", Factory, []string{"user: droidfalcon alpha", "assistant: droidfalcon omega"}, "droidfalconnoise", false},
	{"qwen", Qwen, []string{"user: qwenpanda alpha", "assistant: qwenpanda omega", "user: qwenpanda beta: also bump", "assistant: qwenpanda gamma"}, "qwenpandanoise", false},
	{"kimi", Kimi, []string{"user: kimikoala alpha", "assistant: kimikoala omega"}, "kimikoalanoise", false},
	{"crush", Crush, []string{"user: crushorca alpha", "assistant: crushorca omega"}, "crushorcanoise", false},
	{"kiro", Kiro, []string{"user: kiromoose alpha", "assistant: kiromoose omega"}, "kiromoosenoise", false},
	{"zed", Zed, []string{"user: zedyak alpha", "assistant: zedyak omega", "user: zedyak beta", "assistant: zedyak delta"}, "zedyaknoise", false},
	{"openhands", OpenHands, []string{"user: handsbison alpha", "assistant: handsbison omega", "assistant: handsbison gamma", "user: handsheron alpha", "assistant: handsheron omega"}, "handsbisonnoise", false},
	{"claude-export", ClaudeExport, []string{"user: claudeokapi alpha", "assistant: claudeokapi omega"}, "claudeokapinoise", false},
	{"chatgpt-export", ChatGPTExport, []string{"user: chatgptdingo alpha", "assistant: chatgptdingo omega"}, "chatgptdingonoise", false},
}

// readKind discovers and reads every session of kind under home's default
// sources, returning the messages as "role: text", the cursors by path,
// and the coverage and skips seen.
func readKind(t *testing.T, home string, kind Kind, opt Options, prev map[string]Cursor) ([]string, map[string]Cursor, Coverage, []Skip) {
	t.Helper()
	ctx := context.Background()
	var got []string
	var cov Coverage
	var skips []Skip
	cursors := map[string]Cursor{}
	for _, src := range DefaultSourcesFor("linux", home, func(string) string { return "" }) {
		if src.Kind != kind {
			continue
		}
		paths, sk, err := src.Discover(ctx, opt)
		if err != nil {
			t.Fatalf("%s: discover: %v", src, err)
		}
		skips = append(skips, sk...)
		for _, p := range paths {
			res, err := Read(ctx, src, p, prev[p], opt, Handler{Message: func(m Message) error {
				got = append(got, m.Role+": "+m.Text)
				return nil
			}})
			if err != nil {
				t.Fatalf("%s: read %s: %v", kind, p, err)
			}
			if !res.Coverage.Balanced() {
				t.Errorf("%s: %s: coverage not balanced: %+v", kind, p, res.Coverage)
			}
			if res.Messages > 0 && res.Session.ID == "" {
				t.Errorf("%s: %s: no session id", kind, p)
			}
			cov.Add(res.Coverage)
			cursors[p] = res.Cursor
		}
	}
	return got, cursors, cov, skips
}

func TestAgentFixtures(t *testing.T) {
	for _, c := range agentCases {
		t.Run(c.fixture, func(t *testing.T) {
			home := fakeHome(t, c.fixture)
			opt := Options{Scratch: t.TempDir()}
			got, cursors, cov, skips := readKind(t, home, c.kind, opt, nil)
			if len(got) != len(c.want) {
				t.Fatalf("got %d messages, want %d:\n%s", len(got), len(c.want), strings.Join(got, "\n"))
			}
			for i, w := range c.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("message %d = %q, want prefix %q", i, got[i], w)
				}
				if strings.Contains(got[i], c.noise) {
					t.Errorf("message %d holds noise: %q", i, got[i])
				}
			}
			if cov.Indexed != len(c.want) || cov.Lines < cov.Indexed || !c.inside && cov.Lines == cov.Indexed {
				t.Errorf("coverage %+v: want %d indexed and some records left out", cov, len(c.want))
			}
			for _, s := range skips {
				if !strings.Contains(s.Reason, "subagent sessions (not indexed by default)") {
					t.Errorf("skipped %s: %s", s.Path, s.Reason)
				}
			}
			// A second read from the cursors finds nothing new and opens nothing.
			again, _, cov2, _ := readKind(t, home, c.kind, opt, cursors)
			if len(again) != 0 || cov2.Lines != 0 {
				t.Errorf("a read from the cursors delivered %d messages, %d records", len(again), cov2.Lines)
			}
		})
	}
}

func TestAgentsUnreadable(t *testing.T) {
	home := fakeHome(t, "antigravity", "windsurf")
	for _, k := range []Kind{Antigravity, Windsurf} {
		_, _, _, skips := readKind(t, home, k, Options{Scratch: t.TempDir()}, nil)
		if len(skips) != 1 || !strings.HasPrefix(skips[0].Reason, "found, not readable: ") {
			t.Errorf("%s: skips %v, want one \"found, not readable\"", k, skips)
		}
	}
}

func TestAgentKindsCovered(t *testing.T) {
	have := map[Kind]bool{Antigravity: true, Windsurf: true}
	for _, c := range agentCases {
		have[c.kind] = true
	}
	for _, k := range moreKinds {
		if !have[k] {
			t.Errorf("kind %s has no fixture case", k)
		}
	}
	if !slices.Contains(Kinds, Zed) {
		t.Error("Kinds lacks the added kinds")
	}
}

// The roots of the added kinds on each operating system, whatever mnemo
// runs on.
func TestDefaultSourcesPerOS(t *testing.T) {
	env := map[string]map[string]string{
		"linux":   {},
		"darwin":  {},
		"windows": {"APPDATA": `C:\Users\u\AppData\Roaming`, "LOCALAPPDATA": `C:\Users\u\AppData\Local`},
	}
	home := map[string]string{"linux": "/home/u", "darwin": "/Users/u", "windows": `C:\Users\u`}
	want := map[string]map[Kind][]string{
		"linux": {
			CopilotChat: {"/home/u/.config/Code/User", "/home/u/.config/Code - Insiders/User", "/home/u/.config/VSCodium/User"},
			CursorIDE:   {"/home/u/.config/Cursor/User"},
			Cline:       {"/home/u/.config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks", "/home/u/.config/Code - Insiders/User/globalStorage/saoudrizwan.claude-dev/tasks", "/home/u/.config/VSCodium/User/globalStorage/saoudrizwan.claude-dev/tasks", "/home/u/.config/Cursor/User/globalStorage/saoudrizwan.claude-dev/tasks"},
			OpenCode:    {"/home/u/.local/share/opencode"},
			Goose:       {"/home/u/.local/share/goose/sessions"},
			Crush:       {"/home/u/.local/share/crush"},
			Zed:         {"/home/u/.local/share/zed/threads"},
			CopilotCLI:  {"/home/u/.copilot/session-state"},
			Kimi:        {"/home/u/.kimi/sessions"},
		},
		"darwin": {
			CopilotChat: {"/Users/u/Library/Application Support/Code/User", "/Users/u/Library/Application Support/Code - Insiders/User", "/Users/u/Library/Application Support/VSCodium/User"},
			CursorIDE:   {"/Users/u/Library/Application Support/Cursor/User"},
			RooCode:     {"/Users/u/Library/Application Support/Code/User/globalStorage/rooveterinaryinc.roo-cline/tasks", "/Users/u/Library/Application Support/Code - Insiders/User/globalStorage/rooveterinaryinc.roo-cline/tasks", "/Users/u/Library/Application Support/VSCodium/User/globalStorage/rooveterinaryinc.roo-cline/tasks", "/Users/u/Library/Application Support/Cursor/User/globalStorage/rooveterinaryinc.roo-cline/tasks"},
			Zed:         {"/Users/u/Library/Application Support/Zed/threads"},
			Goose:       {"/Users/u/.local/share/goose/sessions"},
			Amp:         {"/Users/u/.local/share/amp/threads"},
		},
		"windows": {
			CopilotChat: {`C:\Users\u\AppData\Roaming\Code\User`, `C:\Users\u\AppData\Roaming\Code - Insiders\User`, `C:\Users\u\AppData\Roaming\VSCodium\User`},
			CursorIDE:   {`C:\Users\u\AppData\Roaming\Cursor\User`},
			KiloCode:    {`C:\Users\u\AppData\Roaming\Code\User\globalStorage\kilocode.kilo-code\tasks`, `C:\Users\u\AppData\Roaming\Code - Insiders\User\globalStorage\kilocode.kilo-code\tasks`, `C:\Users\u\AppData\Roaming\VSCodium\User\globalStorage\kilocode.kilo-code\tasks`, `C:\Users\u\AppData\Roaming\Cursor\User\globalStorage\kilocode.kilo-code\tasks`},
			Goose:       {`C:\Users\u\AppData\Roaming\Block\goose\data\sessions`},
			Crush:       {`C:\Users\u\AppData\Local\crush`},
			Zed:         {`C:\Users\u\AppData\Local\Zed\threads`},
			Factory:     {`C:\Users\u\.factory\sessions`},
			ClaudeCode:  {`C:\Users\u\.claude\projects`},
		},
	}
	for goos, kinds := range want {
		got := map[Kind][]string{}
		for _, s := range DefaultSourcesFor(goos, home[goos], func(k string) string { return env[goos][k] }) {
			got[s.Kind] = append(got[s.Kind], s.Root)
		}
		for _, k := range moreKinds {
			if len(got[k]) == 0 {
				t.Errorf("%s: no root for %s", goos, k)
			}
		}
		for k, roots := range kinds {
			if !slices.Equal(got[k], roots) {
				t.Errorf("%s %s:\n got %q\nwant %q", goos, k, got[k], roots)
			}
		}
	}
	// The agents' own variables win.
	got := DefaultSourcesFor("linux", "/home/u", func(k string) string {
		return map[string]string{"XDG_DATA_HOME": "/data", "CRUSH_GLOBAL_DATA": "/crush", "COPILOT_HOME": "/cop"}[k]
	})
	for _, w := range []Source{{OpenCode, "/data/opencode"}, {Crush, "/crush"}, {CopilotCLI, "/cop/session-state"}, {Goose, "/data/goose/sessions"}} {
		if !slices.Contains(got, w) {
			t.Errorf("environment: %v missing", w)
		}
	}
}

// With IncludeTools, the tool calls the fixtures plant are indexed too.
func TestAgentFixturesIncludeTools(t *testing.T) {
	for _, c := range agentCases {
		switch c.kind {
		case Factory, CopilotCLI, CursorIDE, Amp, Goose, OpenHands:
		default:
			continue
		}
		t.Run(c.fixture, func(t *testing.T) {
			home := fakeHome(t, c.fixture)
			plain, _, _, _ := readKind(t, home, c.kind, Options{Scratch: t.TempDir()}, nil)
			tools, _, _, _ := readKind(t, home, c.kind, Options{Scratch: t.TempDir(), IncludeTools: true}, nil)
			if len(tools) <= len(plain) || !strings.Contains(strings.Join(tools, "\n"), "[tool") {
				t.Errorf("IncludeTools: %d messages (without: %d), want the tool calls too:\n%s", len(tools), len(plain), strings.Join(tools, "\n"))
			}
		})
	}
}

// The watcher and Discover enter only the folders a source owns: Aider's
// root is the home folder, of which hidden and package folders and
// anything deeper than a project are not its.
func TestOwnsFolders(t *testing.T) {
	home := fakeHome(t, "aider", "copilot-chat")
	for _, dir := range []string{".cache", "node_modules", "code/orchard/deep", ".config"} {
		if err := os.MkdirAll(filepath.Join(home, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	aider := Source{Kind: Aider, Root: home}
	for dir, want := range map[string]bool{"code": true, "code/orchard": true, "code/orchard/deep": false, ".cache": false, "node_modules": false} {
		if got := aider.Owns(filepath.Join(home, dir), Options{}); got != want {
			t.Errorf("aider owns %s: %v, want %v", dir, got, want)
		}
	}
	user := filepath.Join(home, ".config/Code/User")
	chat := Source{Kind: CopilotChat, Root: user}
	ws := "workspaceStorage/5f1c2d3e4b5a69788796a5b4c3d2e1f0"
	for dir, want := range map[string]bool{"workspaceStorage": true, ws: true, ws + "/chatSessions": true, "globalStorage": true, "globalStorage/emptyWindowChatSessions": true} {
		if got := chat.Owns(filepath.Join(user, dir), Options{}); got != want {
			t.Errorf("copilot-chat owns %s: %v, want %v", dir, got, want)
		}
	}
	if err := os.MkdirAll(filepath.Join(user, "globalStorage/ms-python.python"), 0o755); err != nil {
		t.Fatal(err)
	}
	if chat.Owns(filepath.Join(user, "globalStorage/ms-python.python"), Options{}) {
		t.Error("copilot-chat owns another extension's storage")
	}
}
