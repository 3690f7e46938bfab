package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestUIServesPage: mnemo ui runs a serve with the page when none runs
// for the root, and prints the URL with the token; a second mnemo ui finds
// that page and prints the same URL without starting another serve.
func TestUIServesPage(t *testing.T) {
	bin := mnemoBinary(t)
	root := t.TempDir()
	copyTree(t, filepath.Join("..", "..", "testdata", "vault"), filepath.Join(root, "memory"))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "--root", root, "ui", "--no-open", "--http", addr)
	cmd.Env = append(os.Environ(), "MAENIFOLD_SESSIONS=false")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	url := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "mnemo web page: "); ok {
				url <- u
			}
		}
		io.Copy(io.Discard, out)
	}()
	var full string
	select {
	case full = <-url:
	case <-time.After(60 * time.Second):
		t.Fatalf("mnemo ui printed no URL; its log:\n%s", stderr.String())
	}
	page, token, ok := strings.Cut(full, "#token=")
	if !ok || page != "http://"+addr+"/" || token == "" {
		t.Fatalf("URL %q: want http://%s/#token=…", full, addr)
	}
	get := func(path, tok string) int {
		req, _ := http.NewRequest(http.MethodGet, page+path, nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if c := get("", ""); c != http.StatusOK {
		t.Errorf("the page without the token: %d, want 200", c)
	}
	if c := get("api/search?q=bleve", ""); c != http.StatusUnauthorized {
		t.Errorf("the API without the token: %d, want 401", c)
	}
	if c := get("api/search?q=bleve", token); c != http.StatusOK {
		t.Errorf("the API with the token: %d, want 200", c)
	}
	if c := get("mcp", ""); c != http.StatusUnauthorized {
		t.Errorf("/mcp without the token: %d, want 401", c)
	}
	code, stdout, errs := runBinary(t, bin, "", "--root", root, "ui", "--no-open", "--http", "127.0.0.1:1")
	if code != 0 || strings.TrimSpace(stdout) != "mnemo web page: "+full {
		t.Errorf("a second mnemo ui: exit %d, printed %q (stderr %q), want the running page's URL", code, stdout, errs)
	}
}
