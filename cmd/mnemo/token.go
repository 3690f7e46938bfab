package main

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"mnemo/engine/safefile"
)

// The HTTP server's credentials and session settings.
const (
	EnvHTTPToken      = "MAENIFOLD_HTTP_TOKEN"           // the bearer token serve --http requires
	EnvSessionTimeout = "MAENIFOLD_HTTP_SESSION_TIMEOUT" // idle MCP HTTP sessions close after this (Go duration), default 30m
	// tokenName is the file in the index folder that holds the token made
	// at first start, mode 0600: every serve of the root uses it.
	tokenName = "http.token"
	// maxTokenFile bounds a token file read.
	maxTokenFile = 4096
)

// httpTokenSource is the token and how a user names it without reading it
// aloud: serve never logs the token itself, only where it is and a shell
// expression that expands to it.
type httpTokenSource struct {
	token string
	where string // "from $MAENIFOLD_HTTP_TOKEN", "in /x/index/http.token"
	shell string // "$MAENIFOLD_HTTP_TOKEN", "$(cat /x/index/http.token)"
}

// httpToken finds the token serve --http requires: $MAENIFOLD_HTTP_TOKEN,
// else --token-file, else INDEX/http.token, made with a random token at
// first start. A file must be a regular file of this user's, mode 0600.
func httpToken(indexDir, tokenFile string, lookup func(string) (string, bool)) (httpTokenSource, error) {
	if v, ok := lookup(EnvHTTPToken); ok && strings.TrimSpace(v) != "" {
		return httpTokenSource{token: strings.TrimSpace(v), where: "from $" + EnvHTTPToken, shell: "$" + EnvHTTPToken}, nil
	}
	path := tokenFile
	if path == "" {
		abs, err := filepath.Abs(filepath.Join(indexDir, tokenName))
		if err != nil {
			return httpTokenSource{}, err
		}
		path = abs
		if err := makeToken(path); err != nil {
			return httpTokenSource{}, err
		}
	}
	b, err := safefile.Read(path, maxTokenFile, true)
	if err != nil {
		return httpTokenSource{}, usagef("token file: %v", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" || strings.ContainsAny(tok, " \t\r\n") {
		return httpTokenSource{}, usagef("token file %s: want one token on one line", path)
	}
	return httpTokenSource{token: tok, where: "in " + path, shell: "$(cat " + shellQuote(path) + ")"}, nil
}

// makeToken creates path holding a new random token unless it exists.
// Two serves starting at once both try: the file is written under a
// temporary name and linked into place, which fails if the other's got
// there first, so both end up reading the same token.
func makeToken(path string) error {
	if _, err := os.Lstat(path); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create index folder: %w", err)
	}
	var rnd [32]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(filepath.Dir(path), safefile.TempPrefix+"token-"+base64.RawURLEncoding.EncodeToString(rnd[:6])+safefile.TempSuffix)
	if err := safefile.Write(tmp, []byte(base64.RawURLEncoding.EncodeToString(rnd[:])+"\n"), 0o600); err != nil {
		return fmt.Errorf("make the HTTP token: %w", err)
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("make the HTTP token: %w", err)
	}
	return nil
}

// shellQuote quotes p for a POSIX shell if it needs it.
func shellQuote(p string) string {
	if !strings.ContainsAny(p, " \t'\"$`\\!*?[]{}()<>|&;#~") {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}

// sessionTimeout reads --session-timeout (flag, "" if not given) or
// $MAENIFOLD_HTTP_SESSION_TIMEOUT; 0 leaves the MCP server's default.
func sessionTimeout(flag string, lookup func(string) (string, bool)) (time.Duration, error) {
	v, name := flag, "--session-timeout"
	if v == "" {
		v, _ = lookup(EnvSessionTimeout)
		name = "$" + EnvSessionTimeout
	}
	if v = strings.TrimSpace(v); v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < time.Second || d > 30*24*time.Hour {
		return 0, usagef("%s %q: want a duration from 1s to 720h, e.g. 30m", name, v)
	}
	return d, nil
}
