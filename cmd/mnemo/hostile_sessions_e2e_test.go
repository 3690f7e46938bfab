package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
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
	mnemo := func(args ...string) string {
		t.Helper()
		code, out, errs := runBinary(t, bin, "", append([]string{"--root", root, "sessions"}, append(src, args...)...)...)
		if code != 0 {
			t.Fatalf("mnemo sessions %q: exit %d: %s", args, code, errs)
		}
		return out
	}
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
