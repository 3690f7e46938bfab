//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostileHome lays out transcript roots holding what real homes hold by
// accident or malice beside real transcripts: a FIFO named *.jsonl, links to
// /dev/zero as a transcript, as Gemini's .project_root and as
// CodeArchitect's summary.md, a link to a transcript outside the tree, a
// project folder that is a link out of the tree, and a 200 MB line between
// two good ones. With hostile false it lays out only the good files (the
// baseline). It returns the --source flags.
func hostileHome(t *testing.T, dir string, hostile bool) []string {
	t.Helper()
	projects := filepath.Join(dir, "claude", "projects")
	geminiTmp := filepath.Join(dir, "gemini", "tmp")
	caSessions := filepath.Join(dir, "codearchitect", "sessions")
	outside := filepath.Join(dir, "outside")
	for _, d := range []string{filepath.Join(projects, "-home-dev-a"), outside, filepath.Join(caSessions, "2026-03-08", "topic"),
		filepath.Join(geminiTmp, "108c7ce6249f9ed669ddf89d9fb2149111c01673d5df630aed6f95165f05667c", "chats")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	copyFile := func(from, to string) {
		t.Helper()
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	real := "../../testdata/transcripts/claude-code/-home-marco-projects-spotter/short.jsonl"
	copyFile(real, filepath.Join(projects, "-home-dev-a", "short.jsonl"))
	gdir := filepath.Join(geminiTmp, "108c7ce6249f9ed669ddf89d9fb2149111c01673d5df630aed6f95165f05667c")
	copyFile("../../engine/transcript/testdata/gemini/tmp/108c7ce6249f9ed669ddf89d9fb2149111c01673d5df630aed6f95165f05667c/chats/session-2026-03-04T12-00-7e2f0c1a.json",
		filepath.Join(gdir, "chats", "session-2026-03-04T12-00-7e2f0c1a.json"))
	copyFile("../../engine/transcript/testdata/codearchitect/sessions/2026-03-08/retry-budget-for-billing/full.md",
		filepath.Join(caSessions, "2026-03-08", "topic", "full.md"))
	// The huge line's neighbours: a prompt before it, a reply after it.
	huge := filepath.Join(projects, "-home-dev-a", "7d6c5b4a-3928-4716-a5b4-c3d2e1f0a9b8.jsonl")
	const sid = "7d6c5b4a-3928-4716-a5b4-c3d2e1f0a9b8"
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(claudeLine("user", "h1", "", sid, "Which quince variety is hardiest before the huge line?", 0))
	if hostile {
		f.WriteString(`{"type":"user","uuid":"h2","parentUuid":"h1","sessionId":"` + sid + `","message":{"role":"user","content":"`)
		chunk := bytes.Repeat([]byte("z"), 1<<20)
		for range 200 {
			f.Write(chunk)
		}
		f.WriteString("\"}}\n")
	}
	f.WriteString(claudeLine("assistant", "h3", "h2", sid, "The Vranja quince is hardiest, after the huge line.", 2))
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if hostile {
		links := map[string]string{
			filepath.Join(projects, "-home-dev-a", "zero.jsonl"):           "/dev/zero",
			filepath.Join(projects, "-home-dev-a", "outside.jsonl"):        filepath.Join(outside, "o.jsonl"),
			filepath.Join(projects, "-home-dev-linked"):                    outside,
			filepath.Join(gdir, ".project_root"):                           "/dev/zero",
			filepath.Join(caSessions, "2026-03-08", "topic", "summary.md"): "/dev/zero",
		}
		os.WriteFile(filepath.Join(outside, "o.jsonl"), []byte(claudeLine("user", "x1", "", "0e0e0e0e-1111-4222-8333-444455556666", "outsidemarker lives outside the tree", 0)), 0o644)
		for link, target := range links {
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
		}
		if err := syscall.Mkfifo(filepath.Join(projects, "-home-dev-a", "fifo.jsonl"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return []string{"--source=claude-code=" + projects, "--source=gemini=" + geminiTmp, "--source=codearchitect=" + caSessions}
}

// maxRSS runs mnemo with args and returns its peak resident set in bytes and
// its output; it fails the test if mnemo fails or takes over 60 s.
func maxRSS(t *testing.T, bin string, args ...string) (int64, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("mnemo %q: %v\n%s", args, err, out.String())
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return ru.Maxrss * 1024, out.String()
}

// TestHostileTranscripts: sync over roots holding FIFOs, links to /dev/zero,
// links out of the tree and a 200 MB line finishes, keeps the good
// transcripts and the huge line's neighbours, indexes nothing from outside
// the tree and takes at most 100 MB more memory than the same sync without
// them; serve over the same roots stops within 2 s of SIGTERM.
func TestHostileTranscripts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the mnemo binary over a 200 MB file; skipped with -short")
	}
	bin := mnemoBinary(t)
	base, hostile := t.TempDir(), t.TempDir()
	baseSrc := hostileHome(t, base, false)
	src := hostileHome(t, hostile, true)
	for _, d := range []string{base, hostile} {
		os.MkdirAll(filepath.Join(d, "root", "memory"), 0o755)
	}
	baseRSS, _ := maxRSS(t, bin, append([]string{"--root", filepath.Join(base, "root"), "sessions"}, append(baseSrc, "sync")...)...)
	root := filepath.Join(hostile, "root")
	rss, out := maxRSS(t, bin, append([]string{"--root", root, "sessions"}, append(src, "sync")...)...)
	t.Logf("sync peak RSS %d MB, %d MB without the hostile files: %s", rss>>20, baseRSS>>20, strings.TrimSpace(out))
	if rss-baseRSS > 100<<20 {
		t.Errorf("sync took %d MB more with the hostile files, want at most 100", (rss-baseRSS)>>20)
	}
	mnemo := sessionsCLI(t, bin, root, src...)
	show := mnemo("show", "7d6c5b4a-3928-4716-a5b4-c3d2e1f0a9b8", "--json")
	if !strings.Contains(show, "before the huge line") || !strings.Contains(show, "after the huge line") || strings.Contains(show, "zzzz") {
		t.Errorf("the huge line's neighbours were not both kept: %.400s", show)
	}
	var p struct {
		Sessions []json.RawMessage `json:"sessions"`
	}
	for q, want := range map[string]int{"outsidemarker": 0, "harbor": 1, "webhooks": 1, "Vranja": 1} {
		if err := json.Unmarshal([]byte(mnemo("search", "--json", "--no-sync", "--mode", "fulltext", q)), &p); err != nil {
			t.Fatal(err)
		}
		if len(p.Sessions) != want {
			t.Errorf("search %q: %d sessions, want %d", q, len(p.Sessions), want)
		}
	}
	st := mnemo("status")
	for _, w := range []string{"fifo.jsonl", "zero.jsonl", "outside.jsonl"} {
		if !strings.Contains(st, w) {
			t.Errorf("status does not name the refused %s:\n%s", w, st)
		}
	}

	s := startServer(t, bin, nil, append([]string{"--root", root, "serve"}, src...)...)
	s.waitLog(`start-up sessions sync`)
	stopWithin2s(t, s)
}

// redactionSamples are fake secrets of every family the sessions issue
// names (engine/transcript's redact tests hold the same families with their
// look-alikes), and look-alikes that must stay searchable.
var (
	redactionSamples = map[string]string{
		"aws secret in prose":  "my aws secret key is wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY ok",
		"aws credentials csv":  "deploy,,AKIAZ3MEXAMPLEQ4RT7Y,Jf8kP2vLq9XrT4wN7bZc1MhG5sD3aE6yU0iO8pKl,https://console",
		"redis url":            "redis://:Rd5PassW0rdFake@cache.internal:6379/0",
		"url password with @":  "postgres://app:p@ssw0rdQz@db.internal:5432/app",
		"letter-only password": "DB_PASSWORD=correcthorsebatterystaple",
		"quoted passphrase":    `password = "Blue Horse Qz42"`,
		"yaml password":        "db:\n  password: marigoldsunsetqz\n",
		"django secret key":    "SECRET_KEY = 'django-insecure-7m#k2$vq9x!fake+key(zq3)w8e'",
		"twilio token":         "Twilio auth token: 8f3a1c9e7b2d4f6a0e5c3b1d9f7a2e4c",
		"mysql -p":             "mysql -u root -pHunter2fakeQz app",
		"--password":           "pg_restore --password Tr0ub4dorFakeQz dump.sql",
		"--db-pass=":           "./migrate --db-pass=sunflowerfieldqz up",
		"redis-cli -a":         "redis-cli -a R3disAuthFakeQz ping",
		"netrc":                "machine api.example.com login deploy password n3tRcFakePassQz",
		"discord bot token":    "bot token MTE0NTY3ODkwMTIzNDU2Nzg5MA.GaBcDe.x1Y2z3A4b5C6d7E8f9G0h1I2j3K4l5M6n7O8",
		"admin password prose": "the admin password is lavenderfieldqz7",
	}
	redactionSecrets = []string{
		"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "Jf8kP2vLq9XrT4wN7bZc1MhG5sD3aE6yU0iO8pKl", "Rd5PassW0rdFake", "p@ssw0rdQz",
		"correcthorsebatterystaple", "Blue Horse Qz42", "marigoldsunsetqz", "django-insecure-7m#k2$vq9x!fake+key(zq3)w8e",
		"8f3a1c9e7b2d4f6a0e5c3b1d9f7a2e4c", "Hunter2fakeQz", "Tr0ub4dorFakeQz", "sunflowerfieldqz", "R3disAuthFakeQz",
		"n3tRcFakePassQz", "MTE0NTY3ODkwMTIzNDU2Nzg5MA.GaBcDe.x1Y2z3A4b5C6d7E8f9G0h1I2j3K4l5M6n7O8", "lavenderfieldqz7",
	}
	redactionLookAlikes = []string{"3f786850e387550fdab836ed7e6dc881de23001b", "5d1c7a0e-3b52-4c1e-9a77-0f3e2b6d8c41", "password reset flow", "api_key=YOUR_API_KEY", "d41d8cd98f00b204e9800998ecf8427e"}
)

// TestRedactionEverywhere writes every family of secret into a Claude Code
// transcript three times — in the user's prose, in a tool call's input and
// in a tool's result — and syncs it with --include-tools: no secret may
// appear in sessions show, in a search excerpt or in any file under the
// index folder, and the look-alikes stay, searchable.
func TestRedactionEverywhere(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the mnemo binary; skipped with -short")
	}
	bin := mnemoBinary(t)
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	os.MkdirAll(filepath.Join(root, "memory"), 0o755)
	projects := filepath.Join(dir, "claude", "projects")
	const sid = "2b3c4d5e-6f70-4182-93a4-b5c6d7e8f901"
	path := filepath.Join(projects, "-home-dev-vault", sid+".jsonl")
	os.MkdirAll(filepath.Dir(path), 0o755)
	var all []string
	for _, s := range redactionSamples {
		all = append(all, s)
	}
	prose := "Here is what I found: " + strings.Join(all, "\n") + "\nAlso " + strings.Join(redactionLookAlikes, " ")
	toolInput, _ := json.Marshal(map[string]string{"command": strings.Join(all, " ; ")})
	lines := []map[string]any{
		{"type": "user", "uuid": "r1", "parentUuid": nil, "sessionId": sid, "cwd": "/home/dev/vault", "timestamp": "2026-05-02T10:00:00Z",
			"message": map[string]any{"role": "user", "content": prose}},
		{"type": "assistant", "uuid": "r2", "parentUuid": "r1", "sessionId": sid, "timestamp": "2026-05-02T10:00:01Z",
			"message": map[string]any{"id": "msg_r2", "role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "tu1", "name": "Bash", "input": json.RawMessage(toolInput)}}}},
		{"type": "user", "uuid": "r3", "parentUuid": "r2", "sessionId": sid, "timestamp": "2026-05-02T10:00:02Z",
			"message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "tu1", "content": strings.Join(all, "\n")}}}},
		{"type": "assistant", "uuid": "r4", "parentUuid": "r3", "sessionId": sid, "timestamp": "2026-05-02T10:00:03Z",
			"message": map[string]any{"id": "msg_r4", "role": "assistant", "content": []any{map[string]any{"type": "text", "text": "Noted the tulipwood settings."}}}},
	}
	var b strings.Builder
	for _, l := range lines {
		j, _ := json.Marshal(l)
		b.Write(j)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	src := []string{"--source=claude-code=" + projects, "--include-tools"}
	mnemo := sessionsCLI(t, bin, root, src...)
	mnemo("sync")
	leaks := func(what, s string) {
		t.Helper()
		for _, sec := range redactionSecrets {
			if strings.Contains(s, sec) {
				t.Errorf("%s holds the secret %q", what, sec)
			}
		}
	}
	show := mnemo("show", sid, "--json")
	leaks("sessions show", show)
	if strings.Count(show, "[REDACTED:") < 3*len(redactionSecrets)-3 || !strings.Contains(show, "[tool Bash]") {
		t.Errorf("show has %d redaction markers for %d secrets in 3 places: %.600s", strings.Count(show, "[REDACTED:"), len(redactionSecrets), show)
	}
	for _, la := range redactionLookAlikes {
		if !strings.Contains(show, la) {
			t.Errorf("look-alike %q lost", la)
		}
	}
	for _, q := range []string{"found", "tulipwood", "Bash", "deploy", "pg_restore", "3f786850e387550fdab836ed7e6dc881de23001b"} {
		out := mnemo("search", "--json", "--no-sync", "--mode", "fulltext", q)
		leaks("search excerpt for "+q, out)
		if !strings.Contains(out, sid) {
			t.Errorf("search %q does not find the session", q)
		}
	}
	filepath.WalkDir(filepath.Join(root, "index"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := os.ReadFile(p)
			leaks("index file "+p, string(data))
		}
		return nil
	})
}

// peakRSS is the peak resident set of process pid, in bytes (Linux's
// VmHWM); ok is false where /proc does not say.
func peakRSS(pid int) (int64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "VmHWM:" && f[2] == "kB" {
			n, err := strconv.ParseInt(f[1], 10, 64)
			return n << 10, err == nil
		}
	}
	return 0, false
}

// TestServeHostileLinksAppear: while serve watches a transcript root, links
// appear inside it — to /dev/zero, to a FIFO, to a transcript outside the
// tree, a folder link that loops back up — and a FIFO named like a
// transcript. serve reads none of them, goes on (a transcript written after
// them is indexed), names each in sessions status with its reason, grows by
// no more than 100 MB, and stops within 2 s of SIGTERM.
func TestServeHostileLinksAppear(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the mnemo binary; skipped with -short")
	}
	bin := mnemoBinary(t)
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	projects := filepath.Join(dir, "claude", "projects")
	proj := filepath.Join(projects, "-home-dev-a")
	outside := filepath.Join(dir, "outside")
	for _, d := range []string{filepath.Join(root, "memory"), proj, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const first, later = "1a2b3c4d-1111-4222-8333-444455556666", "5e6f7a8b-1111-4222-8333-444455556666"
	writeTranscript := func(path, session, text string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(claudeLine("user", session[:8], "", session, text, 0)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeTranscript(filepath.Join(proj, first+".jsonl"), first, "The damson jam needs less sugar.")
	source := "--source=claude-code=" + projects
	s := startServer(t, bin, nil, "--root", root, "serve", source)
	s.waitLog(`other commands reach this server on`)
	s.waitLog(`start-up sessions sync`)
	before, measured := peakRSS(s.cmd.Process.Pid)

	writeTranscript(filepath.Join(outside, "o.jsonl"), "0e0e0e0e-1111-4222-8333-444455556666", "outsidemarker lives outside the tree")
	if err := syscall.Mkfifo(filepath.Join(outside, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{ // path → what status must say of it
		filepath.Join(proj, "zero.jsonl"):         "symbolic link",
		filepath.Join(proj, "pipe.jsonl"):         "symbolic link",
		filepath.Join(proj, "outside.jsonl"):      "symbolic link",
		filepath.Join(projects, "-home-dev-loop"): "symbolic link to a folder",
		filepath.Join(proj, "fifo.jsonl"):         "named pipe",
	}
	for link, target := range map[string]string{
		filepath.Join(proj, "zero.jsonl"):         "/dev/zero",
		filepath.Join(proj, "pipe.jsonl"):         filepath.Join(outside, "pipe"),
		filepath.Join(proj, "outside.jsonl"):      filepath.Join(outside, "o.jsonl"),
		filepath.Join(projects, "-home-dev-loop"): "..",
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(proj, "fifo.jsonl"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Written after them: once serve has indexed it, it has handled them.
	writeTranscript(filepath.Join(proj, later+".jsonl"), later, "The medlar tree fruits in November.")
	s.waitLog(`Z sessions sync: 1 added`) // not the start-up sync's line

	mnemo := sessionsCLI(t, bin, root)
	var p struct {
		Sessions []json.RawMessage `json:"sessions"`
	}
	for q, n := range map[string]int{"medlar": 1, "damson": 1, "outsidemarker": 0} {
		if err := json.Unmarshal([]byte(mnemo("search", "--json", "--no-sync", "--mode", "fulltext", q)), &p); err != nil {
			t.Fatal(err)
		}
		if len(p.Sessions) != n {
			t.Errorf("search %q: %d sessions, want %d", q, len(p.Sessions), n)
		}
	}
	var st struct {
		Sessions int `json:"sessions"`
		Sources  []struct {
			Skipped   []struct{ Path, Reason string } `json:"skipped"`
			SkippedBy map[string]int                  `json:"skippedByReason"`
		} `json:"sources"`
	}
	if err := json.Unmarshal([]byte(mnemo("status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Sources) != 1 || st.Sessions != 2 {
		t.Fatalf("status: %+v", st)
	}
	reasons := map[string]string{}
	for _, k := range st.Sources[0].Skipped {
		reasons[k.Path] = k.Reason
	}
	counted := 0
	for _, n := range st.Sources[0].SkippedBy {
		counted += n
	}
	for path, w := range want {
		if !strings.Contains(reasons[path], w) {
			t.Errorf("status says %q of %s, want %q", reasons[path], path, w)
		}
	}
	if len(reasons) != len(want) || counted != len(want) {
		t.Errorf("status skips %v, counted %v; want the %d hostile entries", reasons, st.Sources[0].SkippedBy, len(want))
	}
	if after, ok := peakRSS(s.cmd.Process.Pid); measured && ok {
		t.Logf("serve peak RSS %d MB after start-up, %d MB after the links", before>>20, after>>20)
		if after-before > 100<<20 {
			t.Errorf("serve grew by %d MB handling the links, want at most 100", (after-before)>>20)
		}
	}

	stopWithin2s(t, s)
}

// stopWithin2s sends serve SIGTERM and fails the test unless it exits
// within 2 s.
func stopWithin2s(t *testing.T, s *server) {
	t.Helper()
	asked := time.Now()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.exit:
		t.Logf("serve stopped %s after SIGTERM", time.Since(asked).Round(time.Millisecond))
	case <-time.After(2 * time.Second):
		t.Fatalf("serve did not stop within 2 s of SIGTERM; log:\n%s", s.log())
	}
}

// TestServeHostileCompanionsAppear: while serve watches a Gemini CLI and a
// CodeArchitect root, the files their readers read beside a transcript
// turn hostile — Gemini's .project_root and CodeArchitect's summary.md as
// links to /dev/zero and to a FIFO, or a FIFO themselves — in projects
// and topics already indexed and in new ones, each followed by a
// transcript written after it. serve reads none of them (no reader holds
// the FIFO, memory grows by no more than 100 MB), indexes the transcripts
// beside them, names each in sessions status with its reason, and stops
// within 2 s of SIGTERM.
func TestServeHostileCompanionsAppear(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the mnemo binary; skipped with -short")
	}
	bin := mnemoBinary(t)
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	geminiTmp := filepath.Join(dir, "gemini", "tmp")
	caSessions := filepath.Join(dir, "codearchitect", "sessions")
	outside := filepath.Join(dir, "outside")
	const hash1, hash2 = "108c7ce6249f9ed669ddf89d9fb2149111c01673d5df630aed6f95165f05667c", "8e66b2c02b3d05a0fe0fd982b792b8a6eee6c191a654264a17ada4818eb3dcde"
	p1, p2 := filepath.Join(geminiTmp, hash1), filepath.Join(geminiTmp, hash2)
	t1, t2 := filepath.Join(caSessions, "2026-03-08", "topic-one"), filepath.Join(caSessions, "2026-03-09", "topic-two")
	for _, d := range []string{filepath.Join(root, "memory"), filepath.Join(p1, "chats"), t1, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	pipe := filepath.Join(outside, "pipe")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(path, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	geminiChat := func(project, id string, texts ...string) {
		t.Helper()
		var msgs []map[string]string
		for i, text := range texts {
			msgs = append(msgs, map[string]string{"id": fmt.Sprintf("m%d", i), "type": "user", "content": text,
				"timestamp": fmt.Sprintf("2026-03-04T12:00:%02d.000Z", i)})
		}
		b, err := json.Marshal(map[string]any{"sessionId": id, "projectHash": filepath.Base(project),
			"startTime": "2026-03-04T12:00:00.000Z", "lastUpdated": "2026-03-04T12:05:00.000Z", "messages": msgs})
		if err != nil {
			t.Fatal(err)
		}
		write(filepath.Join(project, "chats", "session-2026-03-04T12-00-"+id[:8]+".json"), string(b))
	}
	topic := func(folder, text string) {
		t.Helper()
		b, err := json.Marshal([]map[string]string{{"role": "user", "content": text}})
		if err != nil {
			t.Fatal(err)
		}
		write(filepath.Join(folder, "full.md"), "# Topic - Full Context\n\n**Date:** 2026-03-08T14:30:00.000Z\n\n---\n\n## Full Conversation (JSON)\n\n```json\n"+string(b)+"\n```\n")
	}
	geminiChat(p1, "7e2f0c1a-5b6d-4e8f-9a0b-1c2d3e4f5a6b", "How do I rotate the harbor certificate?")
	topic(t1, "What retry budget should the billing client use?")

	s := startServer(t, bin, nil, "--root", root, "serve", "--source=gemini="+geminiTmp, "--source=codearchitect="+caSessions)
	s.waitLog(`start-up sessions sync`)
	before, measured := peakRSS(s.cmd.Process.Pid)

	want := map[string]string{ // path → what status must say of it
		filepath.Join(p1, ".project_root"): "symbolic link",
		filepath.Join(p2, ".project_root"): "symbolic link",
		filepath.Join(t1, "summary.md"):    "symbolic link",
		filepath.Join(t2, "summary.md"):    "named pipe",
	}
	for _, d := range []string{filepath.Join(p2, "chats"), t2} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		filepath.Join(p1, ".project_root"): "/dev/zero",
		filepath.Join(p2, ".project_root"): pipe,
		filepath.Join(t1, "summary.md"):    "/dev/zero",
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(t2, "summary.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Written after them, so each is read beside a hostile file.
	geminiChat(p1, "7e2f0c1a-5b6d-4e8f-9a0b-1c2d3e4f5a6b", "How do I rotate the harbor certificate?", "And the quince orchard keys?")
	geminiChat(p2, "9a8b7c6d-5b6d-4e8f-9a0b-1c2d3e4f5a6b", "The medlar tree fruits in November.")
	topic(t1, "What retry budget should the billing client use? Also the damson batch.")
	topic(t2, "The sloe gin needs a winter frost.")

	mnemo := sessionsCLI(t, bin, root)
	var st struct {
		Sessions int `json:"sessions"`
		Sources  []struct {
			Skipped []struct{ Path, Reason string } `json:"skipped"`
		} `json:"sources"`
	}
	reasons := map[string]string{}
	found := func(q string) int {
		t.Helper()
		var p struct {
			Sessions []json.RawMessage `json:"sessions"`
		}
		if err := json.Unmarshal([]byte(mnemo("search", "--json", "--no-sync", "--mode", "fulltext", q)), &p); err != nil {
			t.Fatal(err)
		}
		return len(p.Sessions)
	}
	// Status polling, bounded: after each look that finds the work not
	// done, wait for serve's next batch line.
	deadline := time.Now().Add(30 * time.Second)
	for {
		seen := len(s.out.snapshot())
		if err := json.Unmarshal([]byte(mnemo("status", "--json")), &st); err != nil {
			t.Fatal(err)
		}
		clear(reasons)
		for _, src := range st.Sources {
			for _, k := range src.Skipped {
				reasons[k.Path] = k.Reason
			}
		}
		named := 0
		for path, w := range want {
			if strings.Contains(reasons[path], w) {
				named++
			}
		}
		if st.Sessions == 4 && named == len(want) && found("quince damson") == 2 {
			break
		}
		if !s.out.waitFor(time.Until(deadline), func(lines []string) bool { return len(lines) > seen }) {
			t.Fatalf("after 30 s: %d sessions, %d found for the edits, skips %v; want 4 sessions, the two edits indexed and %v named; log:\n%s", st.Sessions, found("quince damson"), reasons, want, s.log())
		}
	}
	for _, q := range []string{"medlar", "sloe"} {
		if n := found(q); n != 1 {
			t.Errorf("search %q: %d sessions, want 1", q, n)
		}
	}
	if len(reasons) != len(want) {
		t.Errorf("status skips %v; want exactly the %d hostile files", reasons, len(want))
	}
	// O_NONBLOCK write-open of a FIFO fails with ENXIO when no reader holds it.
	for _, f := range []string{pipe, filepath.Join(t2, "summary.md")} {
		if fd, err := syscall.Open(f, syscall.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			syscall.Close(fd)
			t.Errorf("serve holds the FIFO %s open", f)
		}
	}
	if after, ok := peakRSS(s.cmd.Process.Pid); measured && ok {
		t.Logf("serve peak RSS %d MB after start-up, %d MB after the hostile files", before>>20, after>>20)
		if after-before > 100<<20 {
			t.Errorf("serve grew by %d MB handling the hostile files, want at most 100", (after-before)>>20)
		}
	}
	stopWithin2s(t, s)
}
