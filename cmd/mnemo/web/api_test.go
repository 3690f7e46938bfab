package web

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"mnemo/cmd/mnemo/remote"
	"mnemo/engine"
	"mnemo/engine/sessions"
)

var apiPaths = []string{
	"/api/search?q=bleve", "/api/search?corpus=sessions&q=spotter", "/api/memory?id=research/bleve.md",
	"/api/list", "/api/sessions", "/api/session?id=x", "/api/activity", "/api/graph?concept=bleve",
	"/api/concepts?q=b", "/api/status", "/api/events", "/api/nothing",
}

func TestAPINeedsToken(t *testing.T) {
	f := newFixture(t, nil)
	for _, p := range apiPaths {
		for name, auth := range map[string]string{"none": "", "wrong": "Bearer nope", "bare": testToken} {
			t.Run(p+"/"+name, func(t *testing.T) {
				code, _ := f.get(t, p, map[string]string{"Authorization": auth})
				if code != http.StatusUnauthorized {
					t.Errorf("GET %s with %s token: %d, want 401", p, name, code)
				}
			})
		}
	}
	// The page itself holds nothing and must load without the token.
	for _, p := range []string{"/", "/assets/app.js", "/assets/app.css", "/assets/cytoscape.min.js"} {
		if code, _ := f.get(t, p, map[string]string{"Authorization": ""}); code != http.StatusOK {
			t.Errorf("GET %s without token: %d, want 200", p, code)
		}
	}
}

func TestAPIRefusesForeignOrigin(t *testing.T) {
	f := newFixture(t, nil)
	own := "http://" + strings.TrimPrefix(f.srv.URL, "http://")
	for _, p := range apiPaths[:10] {
		if code, _ := f.get(t, p, map[string]string{"Origin": "http://evil.example"}); code != http.StatusForbidden {
			t.Errorf("GET %s from a foreign origin: %d, want 403", p, code)
		}
		if code, _ := f.get(t, p, map[string]string{"Sec-Fetch-Site": "cross-site"}); code != http.StatusForbidden {
			t.Errorf("GET %s cross-site: %d, want 403", p, code)
		}
	}
	if code, b := f.get(t, "/api/search?q=bleve", map[string]string{"Origin": own}); code != http.StatusOK {
		t.Errorf("GET from the page's own origin: %d %s, want 200", code, b)
	}
}

func TestSecurityHeaders(t *testing.T) {
	f := newFixture(t, nil)
	for _, p := range []string{"/", "/assets/app.js", "/api/status"} {
		res, err := http.Get(f.srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		c := res.Header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'self'", "script-src 'self'", "style-src 'self'", "object-src 'none'", "frame-ancestors 'none'"} {
			if !strings.Contains(c, want) {
				t.Errorf("%s: CSP %q lacks %q", p, c, want)
			}
		}
		if strings.Contains(c, "unsafe-inline") || strings.Contains(c, "unsafe-eval") {
			t.Errorf("%s: CSP %q allows inline code", p, c)
		}
		if res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: no X-Content-Type-Options: nosniff", p)
		}
	}
}

// TestSearchEqualsEngine: the page's search answers what the engine
// answers to the same query, results, scores and snippets alike.
func TestSearchEqualsEngine(t *testing.T) {
	f := newFixture(t, nil)
	cases := []struct {
		name, params string
		q            engine.Query
	}{
		{"hybrid", "q=bleve+scoring", engine.Query{Text: "bleve scoring"}},
		{"fulltext", "q=postgres&mode=fulltext", engine.Query{Text: "postgres", Mode: engine.FullText}},
		{"semantic", "q=connection+pool&mode=semantic", engine.Query{Text: "connection pool", Mode: engine.Semantic}},
		{"folder", "q=search&folder=research", engine.Query{Text: "search", Folder: "research"}},
		{"tags", "q=search&tags=bleve", engine.Query{Text: "search", Tags: []string{"bleve"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, got := f.get(t, "/api/search?"+c.params, nil)
			if code != http.StatusOK {
				t.Fatalf("status %d: %s", code, got)
			}
			p, err := f.eng.Search(context.Background(), c.q)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Results) == 0 {
				t.Fatalf("the engine finds nothing for %+v: a test of nothing", c.q)
			}
			want, _ := json.Marshal(p)
			if !bytes.Equal(bytes.TrimSpace(got), want) {
				t.Errorf("page's answer differs from the engine's:\n got %s\nwant %s", got, want)
			}
		})
	}
}

func TestSessionSearchEqualsEngine(t *testing.T) {
	f := newFixture(t, nil)
	code, got := f.get(t, "/api/search?corpus=sessions&q=test", nil)
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, got)
	}
	p, err := f.sess.Search(context.Background(), sessions.Query{Text: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sessions) == 0 {
		t.Fatal("no session matches: a test of nothing")
	}
	want, _ := json.Marshal(p)
	if !bytes.Equal(bytes.TrimSpace(got), want) {
		t.Errorf("page's answer differs from the engine's:\n got %s\nwant %s", got, want)
	}
}

// TestMemoryCountsAsRead: opening a memory on the page records the read,
// as ReadMemory does.
func TestMemoryCountsAsRead(t *testing.T) {
	f := newFixture(t, nil)
	lastRead := func() string {
		l, err := f.eng.List(context.Background(), "research")
		if err != nil {
			t.Fatal(err)
		}
		for _, fe := range l.Files {
			if fe.Path == "research/bleve.md" {
				return fe.LastRead.String()
			}
		}
		t.Fatal("research/bleve.md not listed")
		return ""
	}
	before := lastRead()
	code, b := f.get(t, "/api/memory?id=research/bleve.md", nil)
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, b)
	}
	var m memoryPage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if after := lastRead(); after == before || m.LastRead.IsZero() {
		t.Errorf("last read %s before, %s after: the page's read was not recorded", before, after)
	}
	if !strings.Contains(m.HTML, "<h2") || !strings.Contains(m.HTML, `href="#/memory/research%2Frecency-decay.md"`) {
		t.Errorf("rendered memory lacks its headings or its link to research/recency-decay.md:\n%s", m.HTML)
	}
}

func TestBacklinks(t *testing.T) {
	f := newFixture(t, nil)
	code, b := f.get(t, "/api/memory?id=research/recency-decay.md", nil)
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, b)
	}
	var m memoryPage
	json.Unmarshal(b, &m)
	found := false
	for _, p := range m.Backlinks {
		found = found || p == "research/bleve.md"
	}
	if !found {
		t.Errorf("backlinks of research/recency-decay.md %v lack research/bleve.md, which links [[recency decay]]", m.Backlinks)
	}
}

func TestGraph(t *testing.T) {
	f := newFixture(t, nil)
	code, b := f.get(t, "/api/graph?concept=recency-decay", nil)
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, b)
	}
	var g graphPage
	json.Unmarshal(b, &g)
	cc, err := f.eng.BuildContext(context.Background(), engine.ContextQuery{Concept: "recency-decay", Depth: 2, MaxEntities: 40})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Nodes) != 1+len(cc.DirectRelations)+len(cc.ExpandedRelations) || len(g.Nodes) < 2 {
		t.Errorf("graph has %d nodes; the concept and its %d+%d relations expected", len(g.Nodes), len(cc.DirectRelations), len(cc.ExpandedRelations))
	}
	if code, _ := f.get(t, "/api/graph?concept=no-such-concept-anywhere", nil); code != http.StatusNotFound {
		t.Errorf("unknown concept: %d, want 404", code)
	}
}

func TestNoCorpora(t *testing.T) {
	s := New(Options{Token: testToken})
	req, _ := http.NewRequest(http.MethodGet, "/api/search?q=x", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	rec := newRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), `"retry":true`) {
		t.Errorf("without corpora: %d %s, want 503 saying to retry", rec.Code, rec.Body)
	}
}

// TestThroughTheHolder: the page of a serve that fronts the holder reaches
// the holder's corpora through its socket (remote.Pool) and answers every
// call as the holder's own page does; when the holder goes away the page
// says to retry, and no call gets an empty answer.
func TestThroughTheHolder(t *testing.T) {
	f := newFixture(t, nil)
	sock := t.TempDir()
	ln, err := remote.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- remote.ServeOpts(ctx, ln, f.eng, remote.Options{Sessions: f.sess}) }()
	defer stop()
	pool := remote.NewPool(sock)
	defer pool.Close()
	s := New(Options{Token: testToken, Version: "test"})
	s.SetCorpora(&Corpora{Memories: pool, Sessions: pool.Sessions()})
	front := httptest.NewServer(s)
	defer front.Close()
	fr := &fixture{srv: front}

	var sess sessions.Listing
	if _, b := f.get(t, "/api/sessions", nil); json.Unmarshal(b, &sess) != nil || len(sess.Sessions) == 0 {
		t.Fatalf("no sessions to open: %s", b)
	}
	paths := []string{
		"/api/search?q=bleve", "/api/search?q=recency&mode=fulltext&folder=research",
		"/api/search?corpus=sessions&q=spotter", "/api/memory?id=research/recency-decay.md",
		"/api/memory?id=no/such.md", "/api/list", "/api/list?folder=research", "/api/sessions",
		"/api/session?id=" + sess.Sessions[0].SessionID, "/api/activity", "/api/graph?concept=bleve",
		"/api/graph?concept=no-such-concept-anywhere", "/api/concepts?q=b", "/api/status",
	}
	for _, p := range paths {
		// The holder's page first: a memory read through the front end is
		// then the later read, and both answers show the one before.
		hc, hb := f.get(t, p, nil)
		fc, fb := fr.get(t, p, nil)
		if hc != fc || !bytes.Equal(withoutReadTimes(hb), withoutReadTimes(fb)) {
			t.Errorf("GET %s: the holder's page %d %.300s\nthe front end's %d %.300s", p, hc, hb, fc, fb)
		}
	}

	// The read through the front end is the holder's.
	before := time.Now()
	if code, b := fr.get(t, "/api/memory?id=research/bleve.md", nil); code != http.StatusOK {
		t.Fatalf("memory through the front end: %d %s", code, b)
	}
	m, err := f.eng.Peek(context.Background(), "research/bleve.md")
	if err != nil {
		t.Fatal(err)
	}
	if m.LastRead.Before(before) {
		t.Errorf("the holder's last read of research/bleve.md is %v, before the front end's read at %v", m.LastRead, before)
	}

	// The holder goes away: a retry, not an empty answer.
	stop()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/api/search?q=bleve", "/api/memory?id=research/bleve.md", "/api/status"} {
		code, b := fr.get(t, p, nil)
		if code != http.StatusServiceUnavailable || !strings.Contains(string(b), `"retry":true`) || !strings.Contains(string(b), "went away") {
			t.Errorf("GET %s after the holder went away: %d %s, want 503 saying to retry", p, code, b)
		}
	}
}

// withoutReadTimes blanks the read times in an answer, which each read
// moves on.
func withoutReadTimes(b []byte) []byte {
	return readTimes.ReplaceAll(b, []byte(`"lastRead":""`))
}

var readTimes = regexp.MustCompile(`"lastRead":"[^"]*"`)
