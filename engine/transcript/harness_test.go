package transcript

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestHarnessNoise reads what OpenClaw and Gemini CLI write into a
// conversation besides the user's and the assistant's words: OpenClaw's
// "untrusted metadata" envelope and channel stamp before every prompt, a
// prompt sent twice on a retry, [[reply_to_current]] tags, the heartbeat
// prompt and its HEARTBEAT_OK, NO_REPLY; Gemini's automatic "System: Please
// continue.". The words stay; none of the noise does, and each is counted.
func TestHarnessNoise(t *testing.T) {
	c := newCollector()
	res := read(t, Source{Kind: OpenClaw}, fixture(t, "openclaw/agents/main/sessions/6facdbc6-233e-419f-9267-1548940995d8.jsonl"), Cursor{}, Options{}, c)
	want := []string{
		"user: does the wrap-up skill exist?",
		"assistant: Yes: skills/wrap-up/SKILL.md is there.",
		"user: and the diary skill?",
	}
	if got := texts(c.messages()); !slices.Equal(got, want) {
		t.Errorf("openclaw:\n got %q\nwant %q", got, want)
	}
	if cv := res.Coverage; cv.LeftOut[Duplicate] != 1 || cv.LeftOut[Injected] != 3 || !cv.Balanced() {
		t.Errorf("openclaw coverage %+v: want 1 duplicate, 3 injected", cv)
	}

	dir := filepath.Join(t.TempDir(), "tmp", geminiHash, "chats")
	os.MkdirAll(dir, 0o755)
	path := filepath.Join(dir, "session-2026-03-07T10-00-aa11bb22.jsonl")
	os.WriteFile(path, []byte(strings.Join([]string{
		`{"sessionId":"aa11bb22-0000-4000-8000-000000000001","projectHash":"` + geminiHash + `","startTime":"2026-03-07T10:00:00.000Z"}`,
		`{"id":"p-1","timestamp":"2026-03-07T10:00:01.000Z","type":"user","content":[{"text":"Sort the harbor tickets by age."}]}`,
		`{"id":"p-2","timestamp":"2026-03-07T10:00:05.000Z","type":"gemini","content":"Sorted: the TLS ticket is oldest."}`,
		`{"id":"p-3","timestamp":"2026-03-07T10:00:06.000Z","type":"user","content":[{"text":"System: Please continue."}]}`,
		`{"id":"p-4","timestamp":"2026-03-07T10:00:09.000Z","type":"gemini","content":"Done with the list."}`,
	}, "\n")+"\n"), 0o644)
	c = newCollector()
	res = read(t, Source{Kind: Gemini}, path, Cursor{}, Options{}, c)
	want = []string{"user: Sort the harbor tickets by age.", "assistant: Sorted: the TLS ticket is oldest.", "assistant: Done with the list."}
	if got := texts(c.messages()); !slices.Equal(got, want) || res.Coverage.LeftOut[Injected] != 1 {
		t.Errorf("gemini:\n got %q\nwant %q (coverage %+v)", got, want, res.Coverage)
	}
}
