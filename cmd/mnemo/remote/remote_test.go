package remote_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"mnemo/cmd/mnemo/remote"
	"mnemo/engine"
)

// memories is a tiny vault; the old one is dated 2020, so at today's
// clock recency decay has pulled it below 1 until it is read.
var memories = map[string]string{
	"decisions/use-bbolt.md": "---\ntitle: Use bbolt\ncreated: 2020-01-01\ntags: [db]\n---\n# Use bbolt\n\nWe store state in bbolt, an embedded key value store.\n",
	"howto/restart.md":       "---\ntitle: Restart the server\ncreated: 2020-02-01\n---\n# Restart the server\n\nSend SIGTERM, wait for the clean shutdown line, start again.\n",
	"people/ana.md":          "---\ntitle: Ana\n---\n# Ana\n\nAna owns the release process and the bbolt migration.\n",
}

// fixture is an engine on a synced vault, served on a socket in its index folder.
type fixture struct {
	mem, index string
	eng        *engine.Engine
	stop       func() // stops the server and waits for it
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	root := t.TempDir()
	f := &fixture{mem: filepath.Join(root, "memory"), index: filepath.Join(root, "index")}
	for p, body := range memories {
		writeFile(t, filepath.Join(f.mem, p), body)
	}
	eng, err := engine.Open(context.Background(), engine.Config{MemoryDir: f.mem, IndexDir: f.index})
	if err != nil {
		t.Fatal(err)
	}
	f.eng = eng
	if _, err := eng.Sync(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	ln, err := remote.Listen(f.index)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- remote.Serve(ctx, ln, eng) }()
	var once sync.Once
	f.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Serve: %v", err)
			}
		})
	}
	t.Cleanup(func() {
		f.stop()
		eng.Close()
	})
	return f
}

func (f *fixture) dial(t *testing.T) *remote.Client {
	t.Helper()
	c, err := remote.Dial(f.index)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// raw is a bare connection for requests the client would never send.
func (f *fixture) raw(t *testing.T) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("unix", filepath.Join(f.index, remote.SocketName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, bufio.NewReader(c)
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func hit(p engine.Page, path string) *engine.Result {
	for i := range p.Results {
		if p.Results[i].Path == path {
			return &p.Results[i]
		}
	}
	return nil
}

func TestSocketIsPrivate(t *testing.T) {
	f := newFixture(t)
	fi, err := os.Stat(filepath.Join(f.index, remote.SocketName))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode = %v, want a socket with 0600", fi.Mode())
	}
}

func TestSearchReadStatusSync(t *testing.T) {
	f := newFixture(t)
	c := f.dial(t)
	ctx := context.Background()

	t.Run("search matches the engine", func(t *testing.T) {
		q := engine.Query{Text: "bbolt", Tags: []string{"db"}, From: time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC)}
		got, err := c.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		want, err := f.eng.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		if string(gj) != string(wj) {
			t.Errorf("through the socket:\n%s\ndirect:\n%s", gj, wj)
		}
		if len(got.Results) != 1 || got.Results[0].Path != "decisions/use-bbolt.md" {
			t.Errorf("results = %+v, want decisions/use-bbolt.md only", got.Results)
		}
	})

	t.Run("read records recency", func(t *testing.T) {
		q := engine.Query{Text: "restart server"}
		before, err := c.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		r := hit(before, "howto/restart.md")
		if r == nil || r.Decay >= 1 {
			t.Fatalf("before the read: %+v, want the memory with decay < 1", r)
		}
		m, err := c.Read(ctx, "Restart the server")
		if err != nil {
			t.Fatal(err)
		}
		if m.Path != "howto/restart.md" || !strings.Contains(m.Content, "SIGTERM") || m.LastRead.IsZero() {
			t.Errorf("read = %+v", m)
		}
		after, err := c.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if r := hit(after, "howto/restart.md"); r == nil || r.Decay != 1 {
			t.Errorf("after the read: %+v, want decay 1", r)
		}
		// The server's engine recorded it, not just the answer.
		direct, _ := f.eng.Search(ctx, q)
		if r := hit(direct, "howto/restart.md"); r == nil || r.Decay != 1 {
			t.Errorf("engine after the read: %+v, want decay 1", r)
		}
	})

	t.Run("resolve", func(t *testing.T) {
		p, err := c.Resolve("memory://people/ana")
		if err != nil || p != "people/ana.md" {
			t.Errorf("Resolve = %q, %v", p, err)
		}
	})

	t.Run("status", func(t *testing.T) {
		s, err := c.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if s.Files != len(memories) || s.ReadOnly || s.IndexDir != f.index || s.LastSync.IsZero() {
			t.Errorf("status = %+v", s)
		}
	})

	t.Run("sync sees a new file", func(t *testing.T) {
		writeFile(t, filepath.Join(f.mem, "notes/zebra.md"), "# Zebra\n\nstriped quagga notes\n")
		r, err := c.Sync(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Added) != 1 || r.Added[0] != "notes/zebra.md" || r.Full {
			t.Errorf("report = %+v", r)
		}
		p, err := c.Search(ctx, engine.Query{Text: "quagga", Mode: engine.FullText})
		if err != nil || hit(p, "notes/zebra.md") == nil {
			t.Errorf("search after sync: %+v, %v", p.Results, err)
		}
	})
}

func TestErrorsKeepTheirIdentity(t *testing.T) {
	f := newFixture(t)
	c := f.dial(t)
	ctx := context.Background()
	cases := []struct {
		name string
		call func() error
		want error
	}{
		{"empty query", func() error { _, err := c.Search(ctx, engine.Query{Text: "  "}); return err }, engine.ErrEmptyQuery},
		{"stopwords only", func() error { _, err := c.Search(ctx, engine.Query{Text: "the of and"}); return err }, engine.ErrNoTerms},
		{"bad mode", func() error { _, err := c.Search(ctx, engine.Query{Text: "x", Mode: "fuzzy"}); return err }, engine.ErrBadMode},
		{"bad page", func() error { _, err := c.Search(ctx, engine.Query{Text: "x", Page: -1}); return err }, engine.ErrBadPage},
		{"bad page size", func() error { _, err := c.Search(ctx, engine.Query{Text: "x", PageSize: 500}); return err }, engine.ErrBadPageSize},
		{"bad sort", func() error { _, err := c.Search(ctx, engine.Query{Text: "x", Sort: "size"}); return err }, engine.ErrBadSort},
		{"not found", func() error { _, err := c.Read(ctx, "no/such/memory"); return err }, engine.ErrNotFound},
		{"outside", func() error { _, err := c.Read(ctx, "../../etc/passwd"); return err }, engine.ErrOutsideRoot},
		{"resolve outside", func() error { _, err := c.Resolve("memory://../x"); return err }, engine.ErrOutsideRoot},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want one that is %v", err, tc.want)
			}
			var re *remote.Error
			if !errors.As(err, &re) || re.Msg == "" || strings.Contains(re.Msg, "\n") {
				t.Errorf("err = %#v, want a one-line *remote.Error", err)
			}
			// The message is the engine's own.
			if direct := directErr(f, tc.name); direct != "" && direct != err.Error() {
				t.Errorf("message %q, engine says %q", err.Error(), direct)
			}
		})
	}
	// The connection survives errors.
	if _, err := c.Status(ctx); err != nil {
		t.Errorf("status after errors: %v", err)
	}
}

// directErr is the engine's message for two of the cases above.
func directErr(f *fixture, name string) string {
	switch name {
	case "empty query":
		_, err := f.eng.Search(context.Background(), engine.Query{Text: "  "})
		return err.Error()
	case "not found":
		_, err := f.eng.Read(context.Background(), "no/such/memory")
		return err.Error()
	}
	return ""
}

func TestBadRequests(t *testing.T) {
	f := newFixture(t)
	conn, r := f.raw(t)
	ask := func(line string) map[string]any {
		t.Helper()
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := conn.Write([]byte(line + "\n")); err != nil {
			t.Fatal(err)
		}
		resp, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatalf("%s: no answer: %v", line, err)
		}
		var m map[string]any
		if err := json.Unmarshal(resp, &m); err != nil {
			t.Fatalf("%s: answer %q: %v", line, resp, err)
		}
		return m
	}
	cases := []struct{ line, kind, says string }{
		{`not json`, "bad-request", "bad request"},
		{`{"op":"search"`, "bad-request", "bad request"},
		{`["search"]`, "bad-request", "bad request"},
		{`{"op":"frobnicate"}`, "bad-request", `unknown op "frobnicate"`},
		{`{"op":"search"}`, "bad-request", `needs "query"`},
		{`{"op":"search","query":{"query":"x","Fuzziness":2}}`, "bad-request", "Fuzziness"},
		{`{"op":"status"} {"op":"status"}`, "bad-request", "after the JSON object"},
		{`{"op":"read","id":42}`, "bad-request", "bad request"},
		{`{"op":"search","query":{"query":""}}`, "empty-query", "search query is required"},
		{`{"op":"read","id":"nope"}`, "not-found", "memory not found"},
	}
	for _, tc := range cases {
		m := ask(tc.line)
		if m["kind"] != tc.kind || !strings.Contains(fmt.Sprint(m["error"]), tc.says) {
			t.Errorf("%s → %v, want kind %s and an error saying %q", tc.line, m, tc.kind, tc.says)
		}
	}
	// Blank lines are skipped, and the same connection still works.
	if m := ask("\n" + `{"op":"status"}`); m["result"] == nil {
		t.Errorf("status after bad requests → %v", m)
	}
}

func TestOversizedRequest(t *testing.T) {
	f := newFixture(t)
	conn, r := f.raw(t)
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	go func() {
		// Much more than the limit, with no newline: the server must answer
		// once the limit is passed, not wait for the end.
		chunk := []byte(`{"op":"search","query":{"query":"` + strings.Repeat("a", 64<<10))
		for i := 0; i < 64; i++ {
			if _, err := conn.Write(chunk); err != nil {
				return
			}
		}
	}()
	resp, err := r.ReadBytes('\n')
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	var m map[string]any
	json.Unmarshal(resp, &m)
	if m["kind"] != "bad-request" || !strings.Contains(fmt.Sprint(m["error"]), "longer than") {
		t.Errorf("answer = %s", resp)
	}
	// The server hangs up: it cannot find the next request in the stream.
	if _, err := r.ReadBytes('\n'); err == nil {
		t.Error("connection still open after an oversized request")
	}
	// Others are unaffected.
	if _, err := f.dial(t).Status(context.Background()); err != nil {
		t.Errorf("status on a new connection: %v", err)
	}
}

func TestRequestAtTheLimit(t *testing.T) {
	f := newFixture(t)
	conn, r := f.raw(t)
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	head, tail := `{"op":"read","id":"`, `"}`
	line := head + strings.Repeat("x", remote.MaxRequest-len(head)-len(tail)) + tail
	go conn.Write([]byte(line + "\n"))
	resp, err := r.ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	// Whatever the engine makes of such an id, the request itself was read.
	if strings.Contains(string(resp), `"kind":"bad-request"`) {
		t.Errorf("a request of exactly MaxRequest bytes → …%s", resp[max(0, len(resp)-300):])
	}
}

func TestConcurrentClients(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range 8 {
		c := f.dial(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 25 {
				var err error
				switch (i + j) % 4 {
				case 0, 1:
					var p engine.Page
					p, err = c.Search(ctx, engine.Query{Text: "bbolt"})
					if err == nil && hit(p, "decisions/use-bbolt.md") == nil {
						err = fmt.Errorf("client %d: bbolt memory missing from %+v", i, p.Results)
					}
				case 2:
					_, err = c.Read(ctx, "people/ana.md")
				case 3:
					_, err = c.Status(ctx)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	// One client shared by several goroutines: calls take turns.
	shared := f.dial(t)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				if _, err := shared.Search(ctx, engine.Query{Text: "release"}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestServeStopsWithContext(t *testing.T) {
	f := newFixture(t)
	c := f.dial(t)
	if _, err := c.Status(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.stop()
	if _, err := c.Status(context.Background()); err == nil {
		t.Error("a call after the server stopped succeeded")
	}
	if _, err := os.Lstat(filepath.Join(f.index, remote.SocketName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left behind: %v", err)
	}
	if _, err := remote.Dial(f.index); err == nil {
		t.Error("Dial succeeded with no server")
	}
}

// slow blocks every search until its context ends. The graph ops and the
// writes come from the nil embedded Memories: these tests never call them.
type slow struct {
	engine.Memories
	started chan struct{}
}

func (s slow) Search(ctx context.Context, _ engine.Query) (engine.Page, error) {
	close(s.started)
	<-ctx.Done()
	return engine.Page{}, ctx.Err()
}
func (slow) Read(context.Context, string) (engine.Memory, error) { return engine.Memory{}, nil }
func (slow) Resolve(string) (string, error)                      { return "", nil }
func (slow) Status(context.Context) (engine.Status, error)       { return engine.Status{}, nil }
func (slow) Sync(context.Context, bool) (engine.Report, error)   { return engine.Report{}, nil }

func TestCancel(t *testing.T) {
	dir := t.TempDir()
	ln, err := remote.Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	b := slow{started: make(chan struct{})}
	sctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- remote.Serve(sctx, ln, b) }()
	c, err := remote.Dial(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-b.started; cancel() }()
	if _, err := c.Search(ctx, engine.Query{Text: "x"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled search: %v, want context.Canceled", err)
	}
	// Stopping the server ends the call still running on it.
	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
}

func TestListen(t *testing.T) {
	t.Run("stale socket is replaced", func(t *testing.T) {
		dir := t.TempDir()
		old, err := net.Listen("unix", filepath.Join(dir, remote.SocketName))
		if err != nil {
			t.Fatal(err)
		}
		old.(*net.UnixListener).SetUnlinkOnClose(false)
		old.Close() // as a killed server leaves it
		ln, err := remote.Listen(dir)
		if err != nil {
			t.Fatalf("Listen over a stale socket: %v", err)
		}
		ln.Close()
	})

	t.Run("live server is kept", func(t *testing.T) {
		dir := t.TempDir()
		ln, err := remote.Listen(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		if ln2, err := remote.Listen(dir); err == nil || !strings.Contains(err.Error(), "already serves") {
			if ln2 != nil {
				ln2.Close()
			}
			t.Errorf("second Listen: %v, want it refused", err)
		}
	})

	t.Run("not a socket", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, remote.SocketName), "precious")
		if _, err := remote.Listen(dir); err == nil || !strings.Contains(err.Error(), "not a socket") {
			t.Errorf("Listen over a regular file: %v", err)
		}
	})

	t.Run("long index path", func(t *testing.T) {
		dir := t.TempDir()
		long := filepath.Join(dir, strings.Repeat("a-long-folder-name/", 8), "index")
		if err := os.MkdirAll(long, 0o755); err != nil {
			t.Fatal(err)
		}
		ln, err := remote.Listen(long)
		if err != nil {
			t.Fatal(err)
		}
		addr, err := os.ReadFile(filepath.Join(long, "serve.addr"))
		if err != nil {
			t.Fatalf("serve.addr: %v", err)
		}
		sock := strings.TrimSpace(string(addr))
		if sock != ln.Addr().String() || len(sock) > 103 {
			t.Errorf("serve.addr = %q, listener at %q", sock, ln.Addr())
		}
		if fi, err := os.Stat(filepath.Dir(sock)); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("socket folder: %v, %v; want mode 0700", fi.Mode(), err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- remote.Serve(ctx, ln, slow{}) }()
		c, err := remote.Dial(long)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Status(context.Background()); err != nil {
			t.Errorf("status: %v", err)
		}
		c.Close()
		cancel()
		<-done
		for _, p := range []string{sock, filepath.Dir(sock), filepath.Join(long, "serve.addr")} {
			if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s left behind: %v", p, err)
			}
		}
	})

	t.Run("stale fallback is cleared", func(t *testing.T) {
		long := filepath.Join(t.TempDir(), strings.Repeat("b", 100), "index")
		os.MkdirAll(long, 0o755)
		priv, _ := os.MkdirTemp("", "mnemo-")
		stale := filepath.Join(priv, remote.SocketName)
		old, err := net.Listen("unix", stale)
		if err != nil {
			t.Fatal(err)
		}
		old.(*net.UnixListener).SetUnlinkOnClose(false)
		old.Close()
		writeFile(t, filepath.Join(long, "serve.addr"), stale+"\n")
		ln, err := remote.Listen(long)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		if _, err := os.Lstat(priv); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("stale private folder %s left behind: %v", priv, err)
		}
	})
}

// TestPool: a call cancelled mid-answer costs the Pool one connection, not
// the server (a page cancels every search typed past); once the server
// stops, every call fails with ErrGone.
func TestPool(t *testing.T) {
	dir := t.TempDir()
	ln, err := remote.Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	b := slow{started: make(chan struct{})}
	sctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- remote.Serve(sctx, ln, b) }()
	defer stop()
	p := remote.NewPool(dir)
	defer p.Close()

	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-b.started; cancel() }()
	if _, err := p.Search(ctx, engine.Query{Text: "x"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled search: %v, want context.Canceled", err)
	}
	if _, err := p.Status(context.Background()); err != nil {
		t.Errorf("status after a cancelled search: %v", err)
	}
	if _, err := p.Sessions().Status(context.Background()); !errors.Is(err, remote.ErrNoSessions) {
		t.Errorf("sessions status of a server without sessions: %v, want ErrNoSessions", err)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := p.Status(context.Background()); !errors.Is(err, remote.ErrGone) {
			t.Errorf("call %d after the server stopped: %v, want ErrGone", i+1, err)
		}
	}
}

// recorder answers every search with an empty page and keeps the query
// the server decoded. The other ops come from the nil embedded Memories.
type recorder struct {
	engine.Memories
	got chan engine.Query
}

func (r recorder) Search(_ context.Context, q engine.Query) (engine.Page, error) {
	r.got <- q
	return engine.Page{Results: []engine.Result{}}, nil
}

// TestSearchCarriesEveryField: the socket's wire form of a query carries
// every engine.Query field (a field added to the struct and not to the
// wire fails to compile, one left zero here fails the check), and a line
// in the names the protocol documents still reads.
func TestSearchCarriesEveryField(t *testing.T) {
	dir := t.TempDir()
	ln, err := remote.Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	rec := recorder{got: make(chan engine.Query, 1)}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- remote.Serve(ctx, ln, rec) }()
	defer func() { stop(); <-done }()
	c, err := remote.Dial(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	at := time.Date(2023, 10, 22, 9, 55, 0, 123, time.UTC)
	q := engine.Query{Text: "q", Mode: engine.Semantic, Page: 2, PageSize: 5, Folder: "f", Tags: []string{"a"},
		From: at, To: at.Add(time.Hour), MinScore: 0.5, Sort: engine.ByRecency, Now: at.Add(2 * time.Hour), NoSnippets: true}
	v := reflect.ValueOf(q)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Fatalf("field %s is zero: set every field so the trip covers it", v.Type().Field(i).Name)
		}
	}
	if _, err := c.Search(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	got := <-rec.got
	if !got.From.Equal(q.From) || !got.To.Equal(q.To) || !got.Now.Equal(q.Now) {
		t.Fatalf("times changed: %+v", got)
	}
	got.From, got.To, got.Now = q.From, q.To, q.Now
	if !reflect.DeepEqual(got, q) {
		t.Fatalf("got  %+v\nwant %+v", got, q)
	}

	conn, err := net.Dial("unix", filepath.Join(dir, remote.SocketName))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintln(conn, `{"op":"search","query":{"query":"bbolt","mode":"fulltext","pageSize":3,"from":"2019-01-01T00:00:00Z"}}`)
	if _, err := bufio.NewReader(conn).ReadBytes('\n'); err != nil {
		t.Fatal(err)
	}
	want := engine.Query{Text: "bbolt", Mode: engine.FullText, PageSize: 3, From: time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC)}
	if got := <-rec.got; !reflect.DeepEqual(got, want) {
		t.Fatalf("documented names: got %+v, want %+v", got, want)
	}
}
