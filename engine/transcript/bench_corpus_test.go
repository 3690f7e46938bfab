package transcript

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBenchCorpus reads the prebuilt sessions benchmark (sessions/ in the shared
// benchmark data, not part of this repository,
// built into MNEMO_SESSIONS_BENCH, e.g. /tmp/mnemo-bench/sessions-locomo) with the
// default sources of its fake $HOME and checks that exactly the messages of its
// messages.jsonl come out — same session, timestamp, role and text — and that no
// trap word does. Env-gated: the data is not in the repository.
func TestBenchCorpus(t *testing.T) {
	dir := os.Getenv("MNEMO_SESSIONS_BENCH")
	if dir == "" {
		t.Skip("MNEMO_SESSIONS_BENCH not set (e.g. /tmp/mnemo-bench/sessions-locomo)")
	}
	type key struct{ session, ts, role string }
	want := map[key]string{}
	wantProject := map[string]string{}
	f, err := os.Open(filepath.Join(dir, "messages.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m struct{ SessionID, Timestamp, Role, Text, Project, SourceAgent string }
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		want[key{m.SessionID, m.Timestamp, m.Role}] = m.Text
		wantProject[m.SessionID] = m.Project + "|" + m.SourceAgent
	}
	f.Close()
	var traps map[string]any
	b, err := os.ReadFile(filepath.Join(dir, "traps.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &traps); err != nil {
		t.Fatal(err)
	}

	ctx := context.Background()
	home := filepath.Join(dir, "home")
	got := map[key]string{}
	for _, src := range DefaultSources(home, func(string) string { return "" }) {
		paths, _, err := src.Discover(ctx, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			var msgs []Message
			res, err := Read(ctx, src, p, Cursor{}, Options{}, Handler{Message: func(m Message) error {
				msgs = append(msgs, m)
				return nil
			}})
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if res.Malformed+res.TooLong > 0 {
				t.Errorf("%s: %d malformed, %d too long", p, res.Malformed, res.TooLong)
			}
			if g, w := res.Session.Project+"|"+string(res.Session.Agent), wantProject[res.Session.ID]; g != w {
				t.Errorf("%s: session %s project|agent %q, want %q", p, res.Session.ID, g, w)
			}
			for _, m := range msgs {
				k := key{res.Session.ID, m.Timestamp.UTC().Format(time.RFC3339), m.Role}
				if _, dup := got[k]; dup {
					t.Errorf("%s: duplicate message %v", p, k)
				}
				got[k] = m.Text
				for w := range traps {
					if strings.Contains(m.Text, w) {
						t.Errorf("%s: trap word %q in message %s: %q", p, w, m.ID, m.Text)
					}
				}
			}
		}
	}
	missing, wrong := 0, 0
	for k, w := range want {
		g, ok := got[k]
		switch {
		case !ok:
			if missing++; missing <= 5 {
				t.Errorf("missing %v: %q", k, w)
			}
		case strings.TrimSpace(strings.TrimSuffix(g, "\n[image]")) != strings.TrimSpace(w):
			// Images become an "[image]" marker; prose is trimmed.
			if wrong++; wrong <= 5 {
				t.Errorf("text of %v:\n got %q\nwant %q", k, g, w)
			}
		}
	}
	extra := 0
	for k, g := range got {
		if _, ok := want[k]; !ok {
			if extra++; extra <= 5 {
				t.Errorf("extra %v: %q", k, g)
			}
		}
	}
	t.Logf("%d messages wanted, %d read; %d missing, %d wrong, %d extra", len(want), len(got), missing, wrong, extra)
}
