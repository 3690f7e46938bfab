package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"mnemo/engine"
	"mnemo/markdown"
)

// TestKill9 is the crash harness. It builds mnemo, writes a vault of a
// few thousand small memories (each with a token found in no other file),
// and then, round after round, changes files and kills a mnemo that is
// writing the index with SIGKILL at a random moment:
//
//   - round kind "sync --full": a full rebuild, killed part-way;
//   - round kind "serve --no-watch": hundreds of files changed while
//     nothing ran, then serve's start-up sync, killed part-way;
//   - round kind "serve": the watcher running while a thousand files are
//     added, edited, moved and deleted (over a second, or all at once),
//     killed among its batches.
//
// After each kill a restart — `mnemo serve` again after a killed serve with
// the watcher, stopped with SIGTERM once its start-up sync is done, else a
// plain `mnemo sync` — must bring the index back to exactly the files:
// status counts every file once and as many chunk vectors as a fresh index
// of the same files holds (wantChunks: the chunks the markdown parser finds
// in them, checked against the uninterrupted first sync); each file changed
// in the round, and a sample of the rest, is found by its token, once, under
// its own path; each token of a deleted file or of a replaced version finds
// nothing; and no result of a broad query is a path that does not exist or
// appears twice.
//
// MNEMO_CRASH_ROUNDS sets the rounds (default 3; run 20 or more as the
// benchmark), MNEMO_CRASH_SEED the seed (default 1; logged), and
// MNEMO_CRASH_FILES the vault size (default 3000).
func TestKill9(t *testing.T) {
	t.Parallel() // waits on mnemo processes and on its kill timers
	if testing.Short() {
		t.Skip("runs the mnemo binary and kills it; skipped with -short")
	}
	rounds := crashEnvInt(t, "MNEMO_CRASH_ROUNDS", 3)
	seed := crashEnvInt(t, "MNEMO_CRASH_SEED", 1)
	nFiles := crashEnvInt(t, "MNEMO_CRASH_FILES", 3000)
	t.Logf("kill9: seed=%d rounds=%d files=%d (MNEMO_CRASH_SEED, MNEMO_CRASH_ROUNDS, MNEMO_CRASH_FILES)", seed, rounds, nFiles)

	dir := t.TempDir()
	v := &crashVault{
		t:       t,
		bin:     mnemoBinary(t),
		mem:     filepath.Join(dir, "memory"),
		index:   filepath.Join(dir, "index"),
		rng:     rand.New(rand.NewPCG(uint64(seed), 0x6b696c6c39)),
		files:   map[string]string{},
		retired: map[string]string{},
	}
	for range nFiles {
		v.add()
	}
	t0 := time.Now()
	v.mustRun("sync")
	full := time.Since(t0)
	t.Logf("first sync of %d files: %s (the kills fall within this)", nFiles, full.Round(time.Millisecond))
	v.check("initial")

	var sum crashTally
	kinds := []string{"sync --full", "serve --no-watch", "serve"}
	for r := range rounds {
		kind := kinds[r%len(kinds)]
		began := time.Now()
		v.touched = map[string]bool{}
		v.retiredNow = nil
		var note string
		switch kind {
		case "sync --full":
			v.mutate(50)
			note = v.killDuring(full, "sync", "--full")
		case "serve --no-watch":
			v.mutate(nFiles / 2)
			note = v.killDuring(full/2, "serve", "--no-watch") // half the files changed: about half the work
		case "serve":
			note = v.killWatching(nFiles / 3)
		}
		// A killed serve is restarted as serve (its start-up sync repairs
		// the index, and SIGTERM then stops it cleanly); the others by a
		// plain sync.
		var out string
		if kind == "serve" {
			out = v.restartServe()
		} else {
			out = v.mustRun("sync")
		}
		if strings.Contains(out, "full rebuild") {
			sum.rebuilds++
		}
		tl := v.check(fmt.Sprintf("round %d", r))
		t.Logf("round %d (%s): %s; then: %s; lost=%d ghosts=%d duplicates=%d [round %s]",
			r, kind, note, strings.TrimSpace(out), tl.lost, tl.ghosts, tl.duplicates, time.Since(began).Round(100*time.Millisecond))
		sum.add(tl)
	}
	t.Logf("kill9: rounds=%d lost=%d ghosts=%d duplicates=%d (recovery syncs that rebuilt in full: %d)",
		rounds, sum.lost, sum.ghosts, sum.duplicates, sum.rebuilds)
	if sum.lost+sum.ghosts+sum.duplicates > 0 {
		t.Errorf("the index did not match the files after a kill: lost=%d ghosts=%d duplicates=%d", sum.lost, sum.ghosts, sum.duplicates)
	}
}

func crashEnvInt(t *testing.T, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		t.Fatalf("$%s=%q: want a whole number", name, s)
	}
	return n
}

type crashTally struct{ lost, ghosts, duplicates, rebuilds int }

func (c *crashTally) add(o crashTally) {
	c.lost += o.lost
	c.ghosts += o.ghosts
	c.duplicates += o.duplicates
}

// crashVault is the memory folder and what the harness knows it holds.
type crashVault struct {
	t               *testing.T
	bin, mem, index string
	rng             *rand.Rand
	nextID          int
	files           map[string]string // path → its token
	retired         map[string]string // token → the path that held it, for tokens no file holds now
	touched         map[string]bool   // paths written, moved or deleted this round
	retiredNow      []string          // tokens retired this round
	retiredOrder    []string
	mu              sync.Mutex // guards the maps while the watcher round mutates from a goroutine
	childEnvOnce    sync.Once
	childEnv        []string
}

// crashToken is a word no other file has and no analyzer changes: letters,
// no vowels, no s or y (the stemmer's only handles on a vowel-less word).
func crashToken(id int) string {
	const cons = "bcdfghjklmnpqrtvwxz"
	b := []byte("qz")
	for range 5 {
		b = append(b, cons[id%len(cons)])
		id /= len(cons)
	}
	return string(b)
}

var crashWords = strings.Fields(`project meeting decision database migration schedule budget
	customer release deploy server client latency cache index search query vector memory agent
	model training data pipeline review design document team sprint backlog ticket incident outage
	postmortem metric dashboard alert config secret token password user account billing invoice
	payment report quarter revenue forecast hiring interview onboarding policy security audit
	compliance backup restore storage network router switch kubernetes container docker image
	registry build test coverage bug fix feature flag rollout experiment analysis insight summary
	note idea plan garden recipe travel flight hotel museum coffee weather river mountain music
	guitar piano novel author chapter library school teacher student`)

// content is a memory of 30 to 120 words around its token.
func (v *crashVault) content(id int, tok string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Note %d\n\n", id)
	n := 30 + v.rng.IntN(90)
	at := v.rng.IntN(n)
	for i := range n {
		if i == at {
			b.WriteString(tok + " ")
		}
		b.WriteString(crashWords[v.rng.IntN(len(crashWords))])
		if i%15 == 14 {
			b.WriteString(".\n")
		} else {
			b.WriteByte(' ')
		}
	}
	b.WriteString("\n")
	return b.String()
}

func (v *crashVault) write(rel, body string) {
	p := filepath.Join(v.mem, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		v.t.Error(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		v.t.Error(err)
	}
}

func (v *crashVault) retire(tok, path string) {
	v.retired[tok] = path
	v.retiredNow = append(v.retiredNow, tok)
	v.retiredOrder = append(v.retiredOrder, tok)
}

// pick returns a random existing path; sorted so the seed decides.
func (v *crashVault) pick() string {
	ps := make([]string, 0, len(v.files))
	for p := range v.files {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	return ps[v.rng.IntN(len(ps))]
}

func (v *crashVault) add() {
	v.mu.Lock()
	defer v.mu.Unlock()
	id := v.nextID
	v.nextID++
	rel := fmt.Sprintf("d%02d/n%06d.md", v.rng.IntN(30), id)
	tok := crashToken(id)
	v.write(rel, v.content(id, tok))
	v.files[rel] = tok
	if v.touched != nil {
		v.touched[rel] = true
	}
}

// mutate makes n random changes: edits (a new token replaces the old),
// additions, deletions and moves to another folder.
func (v *crashVault) mutate(n int) {
	for range n {
		v.mutateOne()
	}
}

func (v *crashVault) mutateOne() {
	switch x := v.rng.IntN(100); {
	case x < 25 || len(v.files) < 10:
		v.add()
		return
	case x < 45:
		v.mu.Lock()
		p := v.pick()
		os.Remove(filepath.Join(v.mem, filepath.FromSlash(p)))
		v.retire(v.files[p], p)
		delete(v.files, p)
		v.touched[p] = true
		v.mu.Unlock()
	case x < 85:
		v.mu.Lock()
		p := v.pick()
		id := v.nextID
		v.nextID++
		v.retire(v.files[p], p)
		tok := crashToken(id)
		v.write(p, v.content(id, tok))
		v.files[p] = tok
		v.touched[p] = true
		v.mu.Unlock()
	default:
		v.mu.Lock()
		p := v.pick()
		id := v.nextID
		v.nextID++
		to := fmt.Sprintf("d%02d/n%06d.md", v.rng.IntN(30), id)
		os.MkdirAll(filepath.Dir(filepath.Join(v.mem, filepath.FromSlash(to))), 0o755)
		if err := os.Rename(filepath.Join(v.mem, filepath.FromSlash(p)), filepath.Join(v.mem, filepath.FromSlash(to))); err != nil {
			v.t.Error(err)
		}
		v.files[to] = v.files[p]
		delete(v.files, p)
		v.touched[p], v.touched[to] = true, true
		v.mu.Unlock()
	}
}

// env is the children's environment: none of the settings that change what
// serve or the engine do.
func (v *crashVault) env() []string {
	v.childEnvOnce.Do(func() {
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "MAENIFOLD_") {
				v.childEnv = append(v.childEnv, kv)
			}
		}
	})
	return v.childEnv
}

func (v *crashVault) command(index string, args ...string) *exec.Cmd {
	cmd := exec.Command(v.bin, append([]string{"--memory", v.mem, "--index", index}, args...)...)
	cmd.Env = v.env()
	return cmd
}

// mustRun runs mnemo on the index and returns its stdout; it must succeed.
func (v *crashVault) mustRun(args ...string) string {
	v.t.Helper()
	return v.mustRunOn(v.index, "", args...)
}

func (v *crashVault) mustRunOn(index, stdin string, args ...string) string {
	v.t.Helper()
	cmd := v.command(index, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		v.t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			v.t.Fatalf("mnemo %s: %v\nstderr: %s", strings.Join(args, " "), err, errb.String())
		}
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		v.t.Fatalf("mnemo %s did not finish in 2 minutes", strings.Join(args, " "))
	}
	return out.String()
}

// crashChild is a mnemo started to be killed.
type crashChild struct {
	cmd    *exec.Cmd
	out    *childLog // its stderr
	exited chan struct{}
	err    error
	ran    time.Duration // from start to exit, set before exited closes
}

func (v *crashVault) start(args ...string) *crashChild {
	v.t.Helper()
	c := &crashChild{cmd: v.command(v.index, args...), out: newChildLog(), exited: make(chan struct{})}
	// Stdin is /dev/null: serve then runs no MCP server on stdio.
	pipe, err := c.cmd.StderrPipe()
	if err != nil {
		v.t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		v.t.Fatal(err)
	}
	began := time.Now()
	go func() {
		c.out.collect(pipe)
		c.err = c.cmd.Wait()
		c.ran = time.Since(began)
		close(c.exited)
	}()
	return c
}

// logged counts the stderr lines that contain s.
func (c *crashChild) logged(s string) int { return c.out.count(s) }

// kill sends SIGKILL unless the child has exited; it says which.
func (c *crashChild) kill() (killed bool) {
	select {
	case <-c.exited:
		return false
	default:
	}
	c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.exited
	return true
}

// killDuring starts mnemo with args and kills it after a random delay
// within expect, the time the work takes uninterrupted. A run that
// finishes first (the first sync, which set expect, ran on a busier
// machine) has done the work, so the round is tried again, at most twice,
// within the time that run took.
func (v *crashVault) killDuring(expect time.Duration, args ...string) string {
	v.t.Helper()
	var early []string
	for {
		d := time.Duration(v.rng.Int64N(int64(expect) + 1))
		c := v.start(args...)
		time.Sleep(d)
		if !c.kill() {
			if c.err != nil {
				v.t.Fatalf("mnemo %s: %v\nstderr: %s", strings.Join(args, " "), c.err, c.out)
			}
			early = append(early, fmt.Sprintf("finished in %s before the kill at %s", c.ran.Round(time.Millisecond), d.Round(time.Millisecond)))
			if len(early) < 3 {
				expect = c.ran
				continue
			}
			return strings.Join(early, ", ")
		}
		state := "mid-sync"
		if c.logged(" sync added=") > 0 {
			state = "after its sync"
		}
		return strings.Join(append(early, fmt.Sprintf("killed at %s, %s", d.Round(time.Millisecond), state)), ", then ")
	}
}

// awaitStartup waits up to a minute for serve's start-up sync line.
func (v *crashVault) awaitStartup(c *crashChild, who string) {
	v.t.Helper()
	if c.out.waitFor(time.Minute, func(lines []string) bool { return countContaining(lines, "start-up sync") > 0 }) {
		return
	}
	select {
	case <-c.exited: // its stderr ended: it exited
		v.t.Fatalf("%s exited before its start-up sync (%v): %s", who, c.err, c.out)
	case <-time.After(time.Second): // still running: the minute passed
		c.kill()
		v.t.Fatalf("%s: no start-up sync within a minute", who)
	}
}

// killWatching starts serve with the watcher, waits for its start-up sync,
// then makes n changes over about a second and kills serve at a random
// moment among them.
func (v *crashVault) killWatching(n int) string {
	v.t.Helper()
	c := v.start("serve")
	v.awaitStartup(c, "serve")
	// Half the rounds spread the changes over a second (many small
	// batches), half write them at once (batches of hundreds, or rescans).
	spread := time.Duration(v.rng.IntN(2)) * time.Second
	d := 100*time.Millisecond + time.Duration(v.rng.Int64N(int64(spread+400*time.Millisecond)))
	done := make(chan struct{})
	go func() {
		defer close(done)
		pause := spread / time.Duration(n)
		for range n {
			v.mutateOne()
			if pause > 0 {
				time.Sleep(pause)
			}
		}
	}()
	time.Sleep(d)
	batches := c.logged(" sync added=") - 1 // less the start-up sync
	rescans := c.logged("paths changed sync")
	killed := c.kill()
	<-done
	if !killed {
		v.t.Fatalf("serve exited by itself (%v): %s", c.err, c.out)
	}
	return fmt.Sprintf("%d changes over %s, killed at %s after %d watcher batches (%d of them rescans)", n, spread, d.Round(time.Millisecond), batches, rescans)
}

// restartServe starts serve with the watcher, waits for its start-up sync,
// stops it with SIGTERM and returns that sync's log line.
func (v *crashVault) restartServe() string {
	v.t.Helper()
	c := v.start("serve")
	v.awaitStartup(c, "restarted serve")
	c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(30 * time.Second):
		c.kill()
		v.t.Fatal("restarted serve did not stop on SIGTERM")
	}
	lines := c.out.snapshot()
	if c.err != nil || len(lines) == 0 || !strings.HasSuffix(lines[len(lines)-1], "stopped: index closed") {
		v.t.Fatalf("restarted serve did not stop cleanly (%v): %s", c.err, c.out)
	}
	for _, l := range lines {
		if strings.Contains(l, "start-up sync") {
			_, line, _ := strings.Cut(l, " ")
			return "serve: " + line
		}
	}
	return ""
}

type crashStatus struct {
	Files   int           `json:"files"`
	Chunks  int           `json:"chunks"`
	Skipped []engine.Skip `json:"skipped"`
}

func (v *crashVault) status(index string) crashStatus {
	v.t.Helper()
	var s crashStatus
	out := v.mustRunOn(index, "", "status", "--json")
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		v.t.Fatalf("status --json: %v\n%s", err, out)
	}
	return s
}

// onDisk lists the .md files under the memory folder.
func (v *crashVault) onDisk() map[string]bool {
	v.t.Helper()
	out := map[string]bool{}
	filepath.WalkDir(v.mem, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(v.mem, p)
			out[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	return out
}

type crashQuery struct {
	ID       int    `json:"id"`
	Query    string `json:"query"`
	Mode     string `json:"mode"`
	PageSize int    `json:"page_size"`
}

type crashAnswer struct {
	ID         int    `json:"id"`
	Error      string `json:"error"`
	TotalCount int    `json:"totalCount"`
	Results    []struct {
		Path string `json:"path"`
	} `json:"results"`
}

// check compares the index with the files and counts what is wrong.
func (v *crashVault) check(label string) crashTally {
	v.t.Helper()
	var tl crashTally
	disk := v.onDisk()
	if len(disk) != len(v.files) {
		v.t.Fatalf("%s: %d files on disk, the harness expects %d", label, len(disk), len(v.files))
	}
	st := v.status(v.index)
	if len(st.Skipped) > 0 {
		v.t.Errorf("%s: skipped %v", label, st.Skipped)
	}
	switch {
	case st.Files < len(disk):
		v.t.Errorf("%s: status counts %d files, %d on disk", label, st.Files, len(disk))
		tl.lost += len(disk) - st.Files
	case st.Files > len(disk):
		v.t.Errorf("%s: status counts %d files, %d on disk", label, st.Files, len(disk))
		tl.ghosts += st.Files - len(disk)
	}
	// Chunk vectors against what a fresh index of the same files holds: a
	// vector left behind or stored twice shows here.
	if want := v.wantChunks(); st.Chunks != want {
		v.t.Errorf("%s: index has %d chunk vectors, a fresh index of the same files %d", label, st.Chunks, want)
		if st.Chunks > want {
			tl.duplicates += st.Chunks - want
		} else {
			tl.lost += want - st.Chunks
		}
	}

	// Every path touched this round, 100 others, every token retired this
	// round and 50 older ones.
	var live []string
	for p := range v.touched {
		if _, ok := v.files[p]; ok {
			live = append(live, p)
		}
	}
	all := make([]string, 0, len(v.files))
	for p := range v.files {
		all = append(all, p)
	}
	sort.Strings(all)
	for range 100 {
		live = append(live, all[v.rng.IntN(len(all))])
	}
	slices.Sort(live)
	live = slices.Compact(live)
	dead := slices.Clone(v.retiredNow)
	if n := len(v.retiredOrder); n > 0 {
		for range 50 {
			dead = append(dead, v.retiredOrder[v.rng.IntN(n)])
		}
	}
	slices.Sort(dead)
	dead = slices.Compact(dead)

	var qs []crashQuery
	for _, p := range live {
		qs = append(qs, crashQuery{ID: len(qs), Query: v.files[p], Mode: "fulltext", PageSize: 10})
	}
	for _, tok := range dead {
		qs = append(qs, crashQuery{ID: len(qs), Query: tok, Mode: "fulltext", PageSize: 10})
	}
	broad := len(qs)
	for _, q := range []string{"project meeting decision", "database migration schedule", "garden recipe travel", "kubernetes container docker"} {
		for _, m := range []string{"fulltext", "semantic", "hybrid"} {
			qs = append(qs, crashQuery{ID: len(qs), Query: q, Mode: m, PageSize: 200})
		}
	}
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	for _, q := range qs {
		enc.Encode(q)
	}
	out := v.mustRunOn(v.index, in.String(), "search", "--no-sync", "--batch", "-")
	var answers []crashAnswer
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var a crashAnswer
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			v.t.Fatalf("%s: batch output %q: %v", label, line, err)
		}
		answers = append(answers, a)
	}
	if len(answers) != len(qs) {
		v.t.Fatalf("%s: %d answers to %d queries", label, len(answers), len(qs))
	}
	for i, a := range answers {
		q := qs[i]
		if a.Error != "" {
			v.t.Errorf("%s: query %q: %s", label, q.Query, a.Error)
			continue
		}
		var got []string
		for _, r := range a.Results {
			got = append(got, r.Path)
		}
		switch {
		case i < len(live):
			want := live[i]
			n := count(got, want)
			if n == 0 {
				tl.lost++
				v.t.Errorf("%s: lost: %s (token %s) → %v", label, want, q.Query, got)
			}
			if n > 1 {
				tl.duplicates++
				v.t.Errorf("%s: duplicate: %s (token %s) → %v", label, want, q.Query, got)
			}
			if len(got)-n > 0 {
				tl.ghosts++
				v.t.Errorf("%s: ghost: token %s of %s → %v", label, q.Query, want, got)
			}
		case i < broad:
			if len(got) > 0 || a.TotalCount > 0 {
				tl.ghosts++
				v.t.Errorf("%s: ghost: retired token %s (was %s) → %v (total %d)", label, q.Query, v.retired[q.Query], got, a.TotalCount)
			}
		default:
			seen := map[string]bool{}
			for _, p := range got {
				if seen[p] {
					tl.duplicates++
					v.t.Errorf("%s: duplicate: %s twice in %s %q", label, p, q.Mode, q.Query)
				}
				seen[p] = true
				if !disk[p] {
					tl.ghosts++
					v.t.Errorf("%s: ghost: %s (not on disk) in %s %q", label, p, q.Mode, q.Query)
				}
			}
		}
	}
	return tl
}

// wantChunks is how many chunk vectors a fresh index of the files holds:
// one per chunk the markdown parser finds in a file, or one (its title) for
// a file with none, as the engine embeds them. It stands in for syncing a
// second index from scratch at every check, a second each; the initial
// check holds it against the uninterrupted first sync, so a change to
// that rule fails there instead of passing unnoticed.
func (v *crashVault) wantChunks() int {
	v.t.Helper()
	n := 0
	for p := range v.files {
		data, err := os.ReadFile(filepath.Join(v.mem, filepath.FromSlash(p)))
		if err != nil {
			v.t.Fatal(err)
		}
		doc, err := markdown.Parse(p, data, markdown.Options{})
		if err != nil {
			v.t.Fatalf("parse %s: %v", p, err)
		}
		n += max(1, len(doc.Chunks))
	}
	return n
}

func count(ps []string, p string) int {
	n := 0
	for _, x := range ps {
		if x == p {
			n++
		}
	}
	return n
}
