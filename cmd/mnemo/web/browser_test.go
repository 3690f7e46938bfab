package web

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"mnemo/engine"
)

// The browser tests drive a real headless Chromium (Debian's chromium
// package; .ci/run installs it). Without one they skip, saying so.

// browserPath finds Chromium, or says why there is none.
func browserPath() (string, bool) {
	for _, p := range []string{os.Getenv("MNEMO_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p, true
		}
	}
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(n); err == nil {
			return p, true
		}
	}
	return "", false
}

// Bounds of the browser tests, far above what an idle machine needs, so
// that a loaded one still passes and a page that never shows what a step
// waits for fails that step, saying which, instead of the whole test.
const (
	browserStart = time.Minute      // Chromium's start and its first blank page
	stepTimeout  = 30 * time.Second // one step: a navigation, a wait for an element, an evaluation
)

// browser is one headless Chromium tab, with what it saw: dialogs opened
// and requests made.
type browser struct {
	ctx      context.Context
	mu       sync.Mutex
	dialogs  []string
	requests []string
}

func newBrowser(t testing.TB, width, height int) *browser {
	t.Helper()
	path, ok := browserPath()
	if !ok {
		t.Skip("no Chromium found (install Debian's chromium, or set MNEMO_CHROMIUM): browser tests skipped")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(width, height),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelC(); cancelA() })
	b := &browser{ctx: ctx}
	// The first action starts Chromium, which lives as long as the context
	// of that action: so it runs on ctx itself, and a timer, not a
	// deadline on a derived context, bounds the start.
	timer := time.AfterFunc(browserStart, cancelC)
	err := chromedp.Do(ctx, chromedp.Navigate("about:blank"))
	if !timer.Stop() {
		t.Fatalf("Chromium did not start within %s (%v)", browserStart, err)
	}
	if err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	requests := chromedp.Events(ctx, network.RequestWillBeSent)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.dialogs = append(b.dialogs, ev.Message)
			b.mu.Unlock()
			chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	go func() {
		for ev, err := range requests {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.requests = append(b.requests, ev.Request.URL)
			b.mu.Unlock()
		}
	}()
	b.do(t, chromedp.EmulateViewport(int64(width), int64(height)))
	return b
}

// step is the context of one step, bounded by stepTimeout.
func (b *browser) step() (context.Context, context.CancelFunc) {
	return context.WithTimeout(b.ctx, stepTimeout)
}

// do runs actions as one step.
func (b *browser) do(t testing.TB, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%v (the page shows: %.300q)", err, b.shows())
	}
}

// shows is the page's visible text, for a failure to say what was there.
func (b *browser) shows() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	s, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.hash + " | " + document.body.innerText`))
	return s
}

// eval runs JavaScript in the page, as one step, and returns its value.
func eval[T any](t testing.TB, b *browser, expr string, opts ...chromedp.EvaluateOption) T {
	t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, opts...))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// open loads the page with the token in its fragment, as mnemo ui does,
// and then goes to route.
func (b *browser) open(t *testing.T, f *fixture, route string) {
	t.Helper()
	b.do(t, chromedp.Navigate(f.srv.URL+"/#token="+testToken), chromedp.WaitVisible(chromedp.ID("q")))
	if route != "" {
		eval[chromedp.Void](t, b, fmt.Sprintf("location.hash = %q", route))
	}
}

// load loads the page as a new document (n makes its URL one of its own,
// so that this is no move within the last one) and waits for the search
// box.
func (b *browser) load(t testing.TB, f *fixture, n int) {
	t.Helper()
	b.do(t, chromedp.Navigate(fmt.Sprintf("%s/?load=%d#token=%s", f.srv.URL, n, testToken)), chromedp.WaitVisible(chromedp.ID("q")))
}

func (b *browser) text(t *testing.T, sel string) string {
	t.Helper()
	b.do(t, chromedp.WaitVisible(chromedp.CSS(sel)))
	ctx, cancel := b.step()
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (b *browser) texts(t *testing.T, sel string) []string {
	t.Helper()
	b.do(t, chromedp.WaitVisible(chromedp.CSS(sel)))
	return eval[[]string](t, b, fmt.Sprintf(`[...document.querySelectorAll(%q)].map(e => e.textContent.trim())`, sel))
}

// poll waits, as one step, until expr is true in the page.
func (b *browser) poll(t *testing.T, expr string) {
	t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr)); err != nil {
		t.Fatalf("waiting for %s: %v (the page shows: %.300q)", expr, err, b.shows())
	}
}

func TestBrowserSearch(t *testing.T) {
	f := newFixture(t, nil)
	b := newBrowser(t, 1280, 900)
	b.open(t, f, "")
	b.do(t, chromedp.SendKeys(chromedp.ID("q"), "bleve scoring"), chromedp.WaitVisible(chromedp.CSS(`#results[data-query="bleve scoring"] li`)))
	first := b.text(t, "#results li.result a.title")
	p := firstTitle(t, f, "bleve scoring")
	if first != p {
		t.Errorf("first result on the page %q, the engine's first %q", first, p)
	}
	// Keyboard: ↓ focuses the first result, Enter opens it.
	b.do(t, chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.ID("memory")))
	if h := b.text(t, "#memory h1.title"); h != p {
		t.Errorf("Enter on the first result opened %q, want %q", h, p)
	}
	// The empty answer says so.
	b.open(t, f, "#/?q=zzzzqqqxxyy&mode=fulltext")
	if s := b.text(t, "#search-state .notice"); !strings.Contains(s, "nothing found") {
		t.Errorf("a search that finds nothing shows %q", s)
	}
}

// TestBrowserLoadsAgain: the page loaded again and again, each load a new
// document and the last one kept in the back/forward cache, loads every
// time. A page left behind gives back the connection of its status stream:
// a browser keeps six to a host, and the seventh load would wait for one.
func TestBrowserLoadsAgain(t *testing.T) {
	f := newFixture(t, nil)
	b := newBrowser(t, 1280, 900)
	for n := range 8 {
		b.load(t, f, n)
	}
}

// TestBrowserBackAfterHandover: a search made while the serve reaches no
// index (it is starting, or the index is being handed over) says to
// retry, and the page runs it again by itself once the index answers.
func TestBrowserBackAfterHandover(t *testing.T) {
	f := newFixture(t, nil)
	s := New(Options{Token: testToken})
	g := &fixture{eng: f.eng, sess: f.sess, srv: httptest.NewServer(s)}
	t.Cleanup(g.srv.Close) // after the browser's, which ends the status stream
	b := newBrowser(t, 1280, 900)
	b.open(t, g, "#/?q=bleve+scoring")
	if n := b.text(t, "#search-state .notice"); !strings.Contains(n, "retry") {
		t.Errorf("a search while no index answers shows %q, want a notice saying to retry", n)
	}
	s.SetCorpora(&Corpora{Memories: f.eng, Sessions: f.sess})
	b.do(t, chromedp.WaitVisible(chromedp.CSS(`#results[data-query="bleve scoring"] li`)))
	if first, want := b.text(t, "#results li.result a.title"), firstTitle(t, f, "bleve scoring"); first != want {
		t.Errorf("the search run again shows %q first, want %q", first, want)
	}
}

func firstTitle(t *testing.T, f *fixture, q string) string {
	t.Helper()
	code, body := f.get(t, "/api/search?q="+strings.ReplaceAll(q, " ", "+"), nil)
	if code != 200 {
		t.Fatalf("search: %d", code)
	}
	i := strings.Index(string(body), `"title":"`)
	rest := string(body)[i+len(`"title":"`):]
	return rest[:strings.Index(rest, `"`)]
}

func TestBrowserMemory(t *testing.T) {
	f := newFixture(t, nil)
	b := newBrowser(t, 1280, 900)
	b.open(t, f, "#/memory/research%2Fbleve.md")
	if h := b.text(t, "#memory h1.title"); h != "Bleve" {
		t.Errorf("title %q, want Bleve", h)
	}
	hs := b.texts(t, "#memory .markdown h2")
	if strings.Join(hs, "|") == "" || !contains(hs, "Layers") {
		t.Errorf("headings %q lack Layers", hs)
	}
	// The WikiLink to [[recency decay]] leads to its memory, which lists
	// Bleve among the memories linking to it.
	b.do(t, chromedp.Click(chromedp.CSS(`#memory .markdown a[href="#/memory/research%2Frecency-decay.md"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#backlinks a[href="#/memory/research%2Fbleve.md"]`)))
	if h := b.text(t, "#memory h1.title"); !strings.Contains(strings.ToLower(h), "recency") {
		t.Errorf("after the link: title %q", h)
	}
}

func TestBrowserSessionAtHit(t *testing.T) {
	f := newFixture(t, nil)
	b := newBrowser(t, 1280, 900)
	b.open(t, f, "#/?corpus=sessions")
	b.do(t, chromedp.WaitVisible(chromedp.ID("q")), chromedp.SendKeys(chromedp.ID("q"), "test"),
		chromedp.WaitVisible(chromedp.CSS(`#results[data-query="test"] a.hit`)))
	msg := eval[string](t, b, `new URLSearchParams(document.querySelector("#results a.hit").getAttribute("href").split("?")[1]).get("m")`)
	b.do(t, chromedp.Click(chromedp.CSS("#results a.hit")), chromedp.WaitVisible(chromedp.CSS("#conversation li.msg.focus")))
	id := eval[string](t, b, `document.querySelector("#conversation li.msg.focus").id`)
	inView := eval[bool](t, b, `(() => { const r = document.querySelector(".msg.focus").getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight; })()`)
	if want := "m-" + msg; id != want {
		t.Errorf("focused message %q, want %q", id, want)
	}
	if !inView {
		t.Error("the hit is not scrolled into view")
	}
}

func TestBrowserGraph(t *testing.T) {
	f := newFixture(t, nil)
	b := newBrowser(t, 1280, 900)
	b.open(t, f, "#/graph/recency-decay")
	b.do(t, chromedp.WaitVisible(chromedp.CSS("#graph canvas")))
	b.poll(t, `cy && cy.nodes().length > 0`)
	got := b.texts(t, "#graph-nodes li a")
	cc, _ := f.eng.BuildContext(context.Background(), engineContext("recency-decay"))
	want := []string{cc.Concept}
	for _, r := range append(cc.DirectRelations, cc.ExpandedRelations...) {
		if !contains(want, r.Name) {
			want = append(want, r.Name)
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("graph draws %q, want %q", got, want)
	}
	if drawn := eval[int](t, b, `cy.nodes().length`); drawn != len(want) {
		t.Errorf("cytoscape holds %d nodes, want %d", drawn, len(want))
	}
}

// TestBrowserHostileMemory: a memory holding script, an image with an
// error handler and javascript: links opens with no dialog, no request
// beyond the page's own, and no element that could run anything.
func TestBrowserHostileMemory(t *testing.T) {
	evil := "---\ntitle: Evil\n---\n# Evil\n\n<script>alert('script')</script>\n\n<img src=x onerror=\"alert('img')\">\n\n" +
		"[click me](javascript:alert('link'))\n\n![beacon](https://beacon.example/x.png)\n\n<iframe src=\"https://evil.example\"></iframe>\n\n" +
		"[[x|<img src=y onerror=alert('wiki')>]]\n\n<a href=\"javascript:alert('a')\" onclick=\"alert('a2')\">raw</a>\n"
	f := newFixture(t, map[string]string{"evil/evil.md": evil})
	b := newBrowser(t, 1280, 900)
	b.open(t, f, "#/memory/evil%2Fevil.md")
	b.do(t, chromedp.WaitVisible(chromedp.CSS("#memory .markdown")))
	bad := eval[[]string](t, b, `[...document.querySelectorAll("#memory *")].flatMap(e =>
		[e.tagName === "SCRIPT" || e.tagName === "IFRAME" || e.tagName === "OBJECT" || e.tagName === "EMBED" ? e.outerHTML : null,
		 ...[...e.attributes].filter(a => /^on/i.test(a.name) || /^\s*javascript:/i.test(a.value)).map(a => e.tagName + " " + a.name + "=" + a.value)]
		).filter(Boolean)`)
	// Clicking the links must do nothing either.
	eval[chromedp.Void](t, b, `for (const a of document.querySelectorAll("#memory .markdown a[href^='javascript'], #memory .markdown a[href='']")) a.click()`)
	if len(bad) > 0 {
		t.Errorf("live elements or attributes in the rendered memory: %q", bad)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.dialogs) > 0 {
		t.Errorf("dialogs opened: %q", b.dialogs)
	}
	for _, r := range b.requests {
		if !strings.HasPrefix(r, f.srv.URL) && !strings.HasPrefix(r, "data:") {
			t.Errorf("request beyond the page: %s", r)
		}
	}
}

func TestBrowserNeedsToken(t *testing.T) {
	f := newFixture(t, nil)
	b := newBrowser(t, 1280, 900)
	b.do(t, chromedp.Navigate(f.srv.URL+"/"), chromedp.WaitVisible(chromedp.ID("token")))
	if status := eval[int](t, b, `fetch("/api/search?q=bleve").then(r => r.status)`, chromedp.EvalAwaitPromise); status != 401 {
		t.Errorf("an API call without the token: %d, want 401", status)
	}
}

// TestScreenshots saves the page at 1280 and 375 px wide into docs/ when
// MNEMO_SCREENSHOTS is set (the images are checked in; this refreshes them).
func TestScreenshots(t *testing.T) {
	dir := os.Getenv("MNEMO_SCREENSHOTS")
	if dir == "" {
		t.Skip("set MNEMO_SCREENSHOTS=DIR to refresh the page's screenshots")
	}
	f := newFixture(t, nil)
	for _, s := range []struct {
		name, route, wait string
		w, h              int
	}{
		{"web-search-1280.png", "#/?q=bleve+scoring", "#results li.result", 1280, 900},
		{"web-memory-1280.png", "#/memory/research%2Fbleve.md", "#backlinks", 1280, 900},
		{"web-graph-1280.png", "#/graph/recency-decay", "#graph canvas", 1280, 900},
		{"web-sessions-1280.png", "#/sessions", "#activity svg", 1280, 900},
		{"web-search-375.png", "#/?q=postgres+pool", "#results li.result", 375, 812},
		{"web-memory-375.png", "#/memory/research%2Fbleve.md", "#memory h1", 375, 812},
		{"web-status-375.png", "#/status", "#status .card", 375, 812},
	} {
		b := newBrowser(t, s.w, s.h)
		b.open(t, f, s.route)
		b.do(t, chromedp.WaitVisible(chromedp.CSS(s.wait)))
		b.poll(t, `typeof cy === "undefined" || !cy || cy.nodes().length > 0`)
		ctx, cancel := b.step()
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, s.name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func engineContext(concept string) engine.ContextQuery {
	return engine.ContextQuery{Concept: concept, Depth: 2, MaxEntities: 40}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
