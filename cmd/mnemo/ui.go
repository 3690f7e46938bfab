package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"mnemo/cmd/mnemo/web"
	"mnemo/engine"
	"mnemo/engine/safefile"
)

// pageAddrName is the file in the index folder where serve --http writes
// its web page's address (never the token), so that mnemo ui finds a page
// that is already being served.
const pageAddrName = "web.addr"

// webPage is serve's web page: the server, given the corpora whenever this
// serve holds the index, and where it announces its address.
type webPage struct {
	srv      *web.Server
	addrFile string
	url      atomic.Value // string: where it listens, once it does
	held     atomic.Bool  // this serve holds the index
}

func newWebPage(indexDir, token string) *webPage {
	return &webPage{srv: web.New(web.Options{Token: token, Version: buildVersion()}), addrFile: filepath.Join(indexDir, pageAddrName)}
}

// handler is the page to mount beside /mcp; nil without --http.
func (p *webPage) handler() http.Handler {
	if p == nil {
		return nil
	}
	return p.srv
}

// listening logs the page's address.
func (p *webPage) listening(url string, logf func(string)) {
	if p == nil {
		return
	}
	p.url.Store(url)
	logf("web page at " + url + " (mnemo ui opens it with the token)")
	p.announce()
}

// announce records the page's address for mnemo ui once it both listens
// and holds the index, whichever comes first; best effort (without it, ui
// starts a serve of its own).
func (p *webPage) announce() {
	if url, ok := p.url.Load().(string); ok && p.held.Load() {
		safefile.Write(p.addrFile, []byte(url+"\n"), 0o600)
	}
}

// front says whether this serve is now the front end of another.
func (p *webPage) front(on bool) {
	if p != nil {
		p.srv.SetFronting(on)
	}
}

// hold gives the page the corpora this serve now holds, and records its
// address for mnemo ui (only a serve that holds the index has a page with
// answers); nil e takes them away (the index is being closed or handed
// over).
func (p *webPage) hold(e *engine.Engine, sess *engine.Sessions) {
	p.held.Store(e != nil)
	if e == nil {
		p.srv.SetCorpora(nil)
		return
	}
	defer p.announce()
	c := &web.Corpora{Memories: e}
	if sess != nil {
		c.Sessions = sess
	}
	p.srv.SetCorpora(c)
}

func (a *app) uiCmd() *cobra.Command {
	var addr string
	var noOpen bool
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Open the web page: search, read and browse memories and sessions, see the concept graph",
		Long: `Open mnemo's web page in the browser. If a serve --http of this root already
serves the page, ui opens it and returns; otherwise it runs serve --http ADDR
itself (default 127.0.0.1:8765) until stopped, and opens the page once it
listens. The URL carries the bearer token in its fragment (#token=…), which
the browser never sends to a server; ui prints the URL, and opens it with
xdg-open, open or rundll32 when one is there (--no-open: only print).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("ui takes no arguments (got %q)", args[0])
			}
			cfg, err := buildConfig(a.g, os.LookupEnv)
			if err != nil {
				return err
			}
			tok, err := httpToken(cfg.IndexDir, "", os.LookupEnv)
			if err != nil {
				return err
			}
			if url, ok := livePage(cmd.Context(), cfg.IndexDir, tok.token); ok {
				a.openPage(url, tok.token, noOpen)
				return nil
			}
			return a.serveAndOpen(cmd, addr, tok.token, noOpen)
		},
	}
	cmd.Flags().StringVar(&addr, "http", "127.0.0.1:8765", "the loopback address to serve on when no serve --http runs for this root")
	cmd.Flags().BoolVar(&noOpen, "no-open", false, "print the URL only; do not start a browser")
	return cmd
}

// livePage is the page a running serve announced in INDEX/web.addr, if it
// answers with this token.
func livePage(ctx context.Context, indexDir, token string) (string, bool) {
	b, err := safefile.Read(filepath.Join(indexDir, pageAddrName), 1024, false)
	if err != nil {
		return "", false
	}
	url := strings.TrimSpace(string(b))
	if !strings.HasPrefix(url, "http://127.") && !strings.HasPrefix(url, "http://[::1]") && !strings.HasPrefix(url, "http://localhost") {
		return "", false // only ever a loopback page gets the token
	}
	code, _ := pageStatus(ctx, url, token)
	return url, code == http.StatusOK
}

// pageStatus is what the page at url answers an API call with this token:
// 200 when its serve holds the index, 503 while it does not (fronting: it
// forwards to another serve); 0 if nothing answers.
func pageStatus(ctx context.Context, url, token string) (code int, fronting bool) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"api/status", nil)
	if err != nil {
		return 0, false
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, false
	}
	defer res.Body.Close()
	var body struct {
		Fronting bool `json:"fronting"`
	}
	json.NewDecoder(io.LimitReader(res.Body, 1<<16)).Decode(&body)
	return res.StatusCode, body.Fronting
}

// serveAndOpen runs serve --http addr in this process, and opens the page
// as soon as it answers. A serve that finds another holding the index
// (one without a page: an agent's stdio serve) fronts it, and its page
// answers only once it takes the index over; ui says so rather than wait.
func (a *app) serveAndOpen(cmd *cobra.Command, addr, token string, noOpen bool) error {
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	url := "http://" + addr + "/"
	go func() {
		for ctx.Err() == nil {
			switch code, fronting := pageStatus(ctx, url, token); {
			case code == http.StatusServiceUnavailable && fronting:
				fmt.Fprintln(a.stderr, "note: another serve holds this root's index and has no web page; this page answers once this serve takes the index over (start mnemo ui or serve --http before your agents' serves to have it at once)")
				fallthrough
			case code == http.StatusOK:
				a.openPage(url, token, noOpen)
				return
			}
			select {
			case <-time.After(100 * time.Millisecond):
			case <-ctx.Done():
			}
		}
	}()
	sc := a.serveCmd()
	sc.SetArgs([]string{"--http", addr})
	sc.SetContext(ctx)
	return sc.ExecuteContext(ctx)
}

// openPage prints the page's URL with the token and opens it in a browser
// when there is a way to.
func (a *app) openPage(url, token string, noOpen bool) {
	full := url + "#token=" + token
	fmt.Fprintln(a.stdout, "mnemo web page: "+full)
	if noOpen {
		return
	}
	var name string
	var args []string
	switch runtime.GOOS {
	case "darwin":
		name, args = "open", []string{full}
	case "windows":
		name, args = "rundll32", []string{"url.dll,FileProtocolHandler", full}
	default:
		name, args = "xdg-open", []string{full}
	}
	if _, err := exec.LookPath(name); err != nil {
		fmt.Fprintln(a.stderr, "no "+name+" to open a browser with: open the URL above yourself")
		return
	}
	c := exec.Command(name, args...)
	if err := c.Start(); err != nil {
		fmt.Fprintln(a.stderr, "could not start "+name+": "+err.Error())
		return
	}
	go c.Wait()
}
