package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestHTTPToken(t *testing.T) {
	none := func(string) (string, bool) { return "", false }
	t.Run("from the environment", func(t *testing.T) {
		src, err := httpToken(t.TempDir(), "", func(k string) (string, bool) { return " s3cret \n", k == EnvHTTPToken })
		if err != nil || src.token != "s3cret" || src.shell != "$"+EnvHTTPToken || strings.Contains(src.where+src.shell, "s3cret") {
			t.Errorf("%+v %v", src, err)
		}
	})
	t.Run("made at first start, private, then reused", func(t *testing.T) {
		index := filepath.Join(t.TempDir(), "index")
		var wg sync.WaitGroup
		got := make([]string, 8)
		for i := range got {
			wg.Go(func() {
				src, err := httpToken(index, "", none)
				if err != nil {
					t.Error(err)
				}
				got[i] = src.token
			})
		}
		wg.Wait()
		for _, tok := range got {
			if tok != got[0] || len(tok) < 40 {
				t.Fatalf("serves starting at once got different or short tokens: %q", got)
			}
		}
		fi, err := os.Lstat(filepath.Join(index, tokenName))
		if err != nil || fi.Mode().Perm() != 0o600 || !fi.Mode().IsRegular() {
			t.Errorf("token file: %v %v, want a regular file of mode 0600", fi.Mode(), err)
		}
		src, _ := httpToken(index, "", none)
		if src.token != got[0] || strings.Contains(src.shell, src.token) || !strings.Contains(src.shell, "$(cat ") {
			t.Errorf("second start: %+v", src)
		}
		entries, _ := os.ReadDir(index)
		if len(entries) != 1 {
			t.Errorf("index folder holds %d entries, want only the token: %v", len(entries), entries)
		}
	})
	t.Run("refused files", func(t *testing.T) {
		dir := t.TempDir()
		open := filepath.Join(dir, "open")
		os.WriteFile(open, []byte("tok\n"), 0o644)
		link := filepath.Join(dir, "link")
		private := filepath.Join(dir, "private")
		os.WriteFile(private, []byte("tok\n"), 0o600)
		os.Symlink(private, link)
		two := filepath.Join(dir, "two")
		os.WriteFile(two, []byte("tok en\n"), 0o600)
		for _, p := range []string{open, link, two, filepath.Join(dir, "missing")} {
			if _, err := httpToken(dir, p, none); err == nil {
				t.Errorf("--token-file %s accepted", filepath.Base(p))
			}
		}
		if src, err := httpToken(dir, private, none); err != nil || src.token != "tok" {
			t.Errorf("a private token file: %+v %v", src, err)
		}
		// A planted link at the generated token's name is not followed.
		index := filepath.Join(dir, "index")
		os.MkdirAll(index, 0o755)
		os.Symlink(open, filepath.Join(index, tokenName))
		if _, err := httpToken(index, "", none); err == nil {
			t.Error("a link at INDEX/http.token was followed")
		}
	})
}
