package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"mnemo/decay"
	"mnemo/engine"
)

// now0 is the clock of every query whose ranking does not depend on real
// reads: a fixed instant, so decay is reproducible.
var now0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// vault is a memory folder on disk with an engine open on it.
type vault struct {
	t   testing.TB
	dir string // memory folder
	cfg engine.Config
	e   *engine.Engine

	closed bool
}

// option changes the engine configuration before Open.
type option func(*engine.Config)

// noDecay turns recency decay off, so scores are pure relevance.
func noDecay(c *engine.Config) {
	d := decay.Default()
	d.Strength = 0
	c.Decay = d
}

func maxBytes(n int64) option { return func(c *engine.Config) { c.MaxFileBytes = n } }

// newVault writes files (path → content, slash-separated) into a fresh
// memory folder, opens an engine with its index in a separate temp folder,
// and syncs. Decay is decay.Default() unless an option says otherwise.
func newVault(t testing.TB, files map[string]string, opts ...option) *vault {
	t.Helper()
	root := t.TempDir()
	v := &vault{t: t, dir: filepath.Join(root, "memories")}
	if err := os.MkdirAll(v.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Decay at strength 0.1 (the default is gentler) so tests can see it.
	dc := decay.Default()
	dc.Strength = 0.1
	v.cfg = engine.Config{MemoryDir: v.dir, IndexDir: filepath.Join(root, "index"), Decay: dc}
	for _, o := range opts {
		o(&v.cfg)
	}
	v.writeAll(files)
	v.open()
	if len(files) > 0 {
		v.sync()
	}
	return v
}

// closedCopy returns a vault on v's memory folder with a copy of v's
// closed index in a fresh temp folder, not open yet: what newVault of the
// same files then close would give, without writing and syncing them again.
// The memory folder is shared, so the caller must only read it.
func (v *vault) closedCopy(t testing.TB) *vault {
	t.Helper()
	if !v.closed {
		t.Fatal("closedCopy of an open vault")
	}
	c := &vault{t: t, dir: v.dir, cfg: v.cfg, closed: true}
	c.cfg.IndexDir = filepath.Join(t.TempDir(), "index")
	if err := os.CopyFS(c.cfg.IndexDir, os.DirFS(v.cfg.IndexDir)); err != nil {
		t.Fatalf("copy the index: %v", err)
	}
	return c
}

func (v *vault) open() {
	v.t.Helper()
	e, err := engine.Open(context.Background(), v.cfg)
	if err != nil {
		v.t.Fatalf("Open: %v", err)
	}
	v.e = e
	v.closed = false
	v.t.Cleanup(v.close)
}

// close closes the engine once (a second Close is not what these tests are about).
func (v *vault) close() {
	v.t.Helper()
	if v.closed {
		return
	}
	v.closed = true
	if err := v.e.Close(); err != nil {
		v.t.Errorf("Close: %v", err)
	}
}

// reopen closes the engine and opens a new one on the same folders.
func (v *vault) reopen() {
	v.t.Helper()
	v.close()
	v.open()
}

func (v *vault) abs(rel string) string { return filepath.Join(v.dir, filepath.FromSlash(rel)) }

func (v *vault) write(rel, content string) {
	v.t.Helper()
	p := v.abs(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		v.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		v.t.Fatal(err)
	}
}

func (v *vault) writeAll(files map[string]string) {
	v.t.Helper()
	for _, p := range sortedKeys(files) {
		v.write(p, files[p])
	}
}

func (v *vault) remove(rel string) {
	v.t.Helper()
	if err := os.RemoveAll(v.abs(rel)); err != nil {
		v.t.Fatal(err)
	}
}

func (v *vault) sync() engine.Report {
	v.t.Helper()
	rep, err := v.e.Sync(context.Background(), false)
	if err != nil {
		v.t.Fatalf("Sync: %v", err)
	}
	return rep
}

func (v *vault) syncPaths(paths ...string) engine.Report {
	v.t.Helper()
	rep, err := v.e.SyncPaths(context.Background(), paths)
	if err != nil {
		v.t.Fatalf("SyncPaths(%q): %v", paths, err)
	}
	return rep
}

// search runs q (Now defaults to now0) and fails the test on error.
func (v *vault) search(q engine.Query) engine.Page {
	v.t.Helper()
	if q.Now.IsZero() {
		q.Now = now0
	}
	p, err := v.e.Search(context.Background(), q)
	if err != nil {
		v.t.Fatalf("Search(%+v): %v", q, err)
	}
	return p
}

// find searches text in mode and returns the result paths.
func (v *vault) find(mode engine.Mode, text string) []string {
	v.t.Helper()
	return paths(v.search(engine.Query{Text: text, Mode: mode, PageSize: 200}))
}

func (v *vault) status() engine.Status {
	v.t.Helper()
	s, err := v.e.Status(context.Background())
	if err != nil {
		v.t.Fatalf("Status: %v", err)
	}
	return s
}

func paths(p engine.Page) []string {
	out := make([]string, 0, len(p.Results))
	for _, r := range p.Results {
		out = append(out, r.Path)
	}
	return out
}

func result(p engine.Page, path string) (engine.Result, bool) {
	for _, r := range p.Results {
		if r.Path == path {
			return r, true
		}
	}
	return engine.Result{}, false
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// sorted returns a sorted copy.
func sorted(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

// memo builds a memory file: frontmatter with title, created (YYYY-MM-DD,
// omitted when empty) and tags, then the body.
func memo(title, created string, tags []string, body string) string {
	var b strings.Builder
	b.WriteString("---\n")
	fmt.Fprintf(&b, "title: %s\n", title)
	if created != "" {
		fmt.Fprintf(&b, "created: %s\n", created)
	}
	if len(tags) > 0 {
		fmt.Fprintf(&b, "tags: [%s]\n", strings.Join(tags, ", "))
	}
	b.WriteString("---\n")
	b.WriteString(body)
	b.WriteString("\n")
	return b.String()
}

var allModes = []engine.Mode{engine.FullText, engine.Semantic, engine.Hybrid}

// synthetic returns a deterministic English-ish memory: n words drawn from
// a fixed list by a linear congruential generator seeded with seed.
func synthetic(seed uint64, n int) string {
	x := seed*6364136223846793005 + 1442695040888963407
	var b strings.Builder
	for i := range n {
		x = x*6364136223846793005 + 1442695040888963407
		w := wordList[(x>>33)%uint64(len(wordList))]
		if i > 0 {
			if i%12 == 0 {
				b.WriteString(".\n")
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(w)
	}
	b.WriteString(".")
	return b.String()
}

var wordList = strings.Fields(`
	project meeting decision database migration schedule budget customer
	release deploy server client latency cache index search query vector
	memory agent model training data pipeline review design document team
	sprint backlog ticket incident outage postmortem metric dashboard alert
	config secret token password user account billing invoice payment
	report quarter revenue forecast hiring interview onboarding policy
	security audit compliance backup restore storage network router switch
	kubernetes container docker image registry build test coverage bug fix
	feature flag rollout experiment analysis insight summary note idea plan
	garden recipe travel flight hotel museum coffee weather river mountain
	music guitar piano novel author chapter library school teacher student
	`)
