package transcript

import (
	"context"
	"database/sql"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// agentFixtures is the folder of the added agents' fixtures, each laid out
// as the agent lays out its files under a home folder.
const agentFixtures = "../../testdata/transcripts"

// fakeHome copies the named agents' fixtures into one home folder, building
// each *.sql into the SQLite database it describes and writing each *.in
// with @HOME@ replaced by the home folder.
func fakeHome(t testing.TB, agents ...string) string {
	t.Helper()
	home := t.TempDir()
	for _, a := range agents {
		src := filepath.Join(agentFixtures, a, "home")
		err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(src, p)
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
				return buildDB(strings.TrimSuffix(dst, ".sql"), string(b))
			case strings.HasSuffix(p, ".in"):
				return os.WriteFile(strings.TrimSuffix(dst, ".in"), []byte(strings.ReplaceAll(string(b), "@HOME@", home)), 0o644)
			}
			return os.WriteFile(dst, b, 0o644)
		})
		if err != nil {
			t.Fatalf("fixture %s: %v", a, err)
		}
	}
	return home
}

// buildDB creates the SQLite database at path from a SQL script, closed
// cleanly (so that a WAL database leaves no -wal or -shm behind).
func buildDB(path, script string) error {
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, stmt := range splitSQL(script) {
		if _, err := db.Exec(stmt); err != nil {
			return err
		}
	}
	return db.Close()
}

// splitSQL splits a script into statements at semicolons that end a line.
func splitSQL(s string) []string {
	var out []string
	for _, st := range strings.Split(s, ";\n") {
		if st = strings.TrimSpace(st); st != "" {
			out = append(out, st)
		}
	}
	return out
}

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
	{"opencode", OpenCode, []string{"user: opencodetapir alpha", "assistant: opencodetapir omega", "user: opencodelemur alpha", "assistant: opencodelemur omega"}, "noise", false},
	{"aider", Aider, []string{"user: aiderbadger alpha", "assistant: aiderbadger omega", "user: aiderbadger beta"}, "aiderbadgernoise", false},
	{"continue", Continue, []string{"user: continuegecko alpha", "assistant: continuegecko omega"}, "continuegeckonoise", false},
	{"amp", Amp, []string{"user: ampnewt alpha", "assistant: ampnewt omega"}, "ampnewtnoise", false},
	{"goose", Goose, []string{"user: gooseloon alpha", "assistant: gooseloon omega", "user: gooseplover alpha", "assistant: gooseplover omega"}, "noise", false},
	{"factory", Factory, []string{"user: droidfalcon alpha", "assistant: droidfalcon omega"}, "droidfalconnoise", false},
	{"qwen", Qwen, []string{"user: qwenpanda alpha", "assistant: qwenpanda omega"}, "qwenpandanoise", false},
	{"kimi", Kimi, []string{"user: kimikoala alpha", "assistant: kimikoala omega"}, "kimikoalanoise", false},
	{"crush", Crush, []string{"user: crushorca alpha", "assistant: crushorca omega"}, "crushorcanoise", false},
	{"kiro", Kiro, []string{"user: kiromoose alpha", "assistant: kiromoose omega"}, "kiromoosenoise", false},
	{"zed", Zed, []string{"user: zedyak alpha", "assistant: zedyak omega", "user: zedyak beta", "assistant: zedyak delta"}, "zedyaknoise", false},
	{"openhands", OpenHands, []string{"user: handsbison alpha", "assistant: handsbison omega", "assistant: handsbison gamma"}, "handsbisonnoise", false},
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
				t.Errorf("skipped %s: %s", s.Path, s.Reason)
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
