package transcript

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const piRoot = "../../testdata/transcripts/pi"

// TestPi reads pi's own session files: real version 1 files (no ids, one
// entry after another, compactions among them) and a version 3 file (an
// entry tree with a branch left by /tree, an extension's message and a bare
// /command). Every message of the conversation is indexed, with its time,
// and every line is accounted for.
func TestPi(t *testing.T) {
	tests := []struct {
		file    string
		id      string
		project string
		want    []string // openings of messages, in the order they come
		n       int      // messages in all
		left    map[Reason]int
	}{
		{
			file: "--Users-badlogic-workspaces-pi-mono--/2025-12-09T00-53-29-825Z_ffae836b-9420-4060-ac13-7745215f90ff.jsonl",
			id:   "ffae836b-9420-4060-ac13-7745215f90ff", project: "/Users/badlogic/workspaces/pi-mono",
			want: []string{"user: you can look up the detailed history", "user: also remember the @packages/coding-agent/docs/refactor.md"},
		},
		{
			file: "--Users-badlogic-workspaces-pi-mono--/2025-11-20T23-33-50-805Z_d703a1a9-1b7b-4fb1-b512-c9738b1fe617.jsonl",
			id:   "d703a1a9-1b7b-4fb1-b512-c9738b1fe617", project: "/Users/badlogic/workspaces/pi-mono",
			want: []string{"user: read packages/coding-agent/docs/theme.md in full", "user: ok, i think our themes need explicit tokens", "user: continue", "user: ok, i think the queued messages component"},
		},
		{
			file: "--home-dev-kiln--/2026-03-10T09-00-00-000Z_5e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b.jsonl",
			id:   "5e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b", project: "/home/dev/kiln",
			want: []string{
				"user: How long should the kiln cool before unloading?",
				"assistant: Let it cool below 65 C, about 24 hours for a cone 10 firing.",
				"user: What about a glaze firing?",
				"assistant: About 12 hours, until it is below 65 C.",
			},
			n:    4,
			left: map[Reason]int{Meta: 3, Injected: 2, Abandoned: 2},
		},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			path := filepath.Join(piRoot, filepath.FromSlash(tt.file))
			c := newCollector()
			res := read(t, Source{Kind: Pi}, path, Cursor{}, Options{}, c)
			got := texts(c.messages())
			i := 0
			for _, g := range got {
				if i < len(tt.want) && strings.HasPrefix(g, tt.want[i]) {
					i++
				}
			}
			if i < len(tt.want) {
				t.Errorf("no message %q in order among %d", tt.want[i], len(got))
			}
			if tt.n > 0 && len(got) != tt.n {
				t.Errorf("%d messages, want %d: %q", len(got), tt.n, got)
			}
			for _, m := range c.messages() {
				if m.Timestamp.IsZero() || strings.Contains(m.Text, "quarrystone") || strings.HasPrefix(m.Text, "/") {
					t.Errorf("message %s: time %v, text %q", m.ID, m.Timestamp, trunc(m.Text, 80))
				}
			}
			if res.Session.ID != tt.id || res.Session.Project != tt.project || res.Session.Agent != Pi {
				t.Errorf("session %+v", res.Session)
			}
			cv := res.Coverage
			if !cv.Balanced() || cv.Lines != nonBlankLines(t, path) || cv.Indexed == 0 {
				t.Errorf("coverage %+v over %d lines", cv, nonBlankLines(t, path))
			}
			for why, n := range tt.left {
				if cv.LeftOut[why] != n {
					t.Errorf("left out %v, want %s: %d", cv.LeftOut, why, n)
				}
			}
		})
	}
}

// TestPiDiscover finds pi's sessions in its own folder layout,
// ~/.pi/agent/sessions/--<cwd>--/<time>_<id>.jsonl.
func TestPiDiscover(t *testing.T) {
	paths, _, err := Source{Kind: Pi, Root: piRoot}.Discover(t.Context(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 3 || !slices.IsSorted(paths) {
		t.Errorf("discovered %q", paths)
	}
	srcs := DefaultSources("/home/u", func(k string) string {
		if k == "PI_CODING_AGENT_DIR" {
			return "/opt/pi"
		}
		return ""
	})
	if !slices.Contains(srcs, Source{Kind: Pi, Root: "/opt/pi/sessions"}) {
		t.Errorf("default sources %v", srcs)
	}
}
