package web

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"mnemo/engine"
	"mnemo/engine/sessions"
	"mnemo/engine/transcript"
)

const testToken = "test-token-0123456789"

// fixture is a page served over the sample vault and the Claude Code
// transcripts of testdata, indexed once per test.
type fixture struct {
	eng  *engine.Engine
	sess *sessions.Corpus
	srv  *httptest.Server
	mem  string // the memory folder
}

// copyTree copies the folder src to dst.
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(filepath.Join(dst, rel))
		if err != nil {
			return err
		}
		defer out.Close()
		_, err = io.Copy(out, in)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// newFixture indexes a copy of testdata/vault, plus extra files (path →
// content), and serves the page over it.
func newFixture(t testing.TB, extra map[string]string) *fixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	f := &fixture{mem: filepath.Join(dir, "memory")}
	copyTree(t, filepath.Join("..", "..", "..", "testdata", "vault"), f.mem)
	for p, body := range extra {
		full := filepath.Join(f.mem, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	idx := filepath.Join(dir, "index")
	var err error
	if f.eng, err = engine.Open(ctx, engine.Config{MemoryDir: f.mem, IndexDir: idx}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.eng.Close() })
	if _, err := f.eng.Sync(ctx, false); err != nil {
		t.Fatal(err)
	}
	src := transcript.Source{Kind: transcript.ClaudeCode, Root: filepath.Join("..", "..", "..", "testdata", "transcripts", "claude-code")}
	f.sess, err = sessions.Open(ctx, sessions.Config{IndexDir: idx,
		Sources: []sessions.Source{sessions.TranscriptSource(src, transcript.Options{Scratch: sessions.Scratch(idx)})}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.sess.Close() })
	if _, err := f.sess.Sync(ctx, false); err != nil {
		t.Fatal(err)
	}
	s := New(Options{Token: testToken, Version: "test"})
	s.SetCorpora(&Corpora{Memories: f.eng, Sessions: f.sess})
	f.srv = httptest.NewServer(s)
	t.Cleanup(f.srv.Close)
	return f
}

// get requests path with the token (and the headers given) and returns
// the status and body.
func (f *fixture) get(t testing.TB, path string, header map[string]string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, f.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

func newRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }
