package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"mnemo/cmd/mnemo/remote"
	"mnemo/cmd/mnemo/web"
	"mnemo/engine"
	"mnemo/engine/safefile"
	"mnemo/engine/sessions"
)

// pageAddrName is the file in the index folder where serve --http writes
// its web page's address (never the token), so that mnemo ui finds a page
// that is already being served.
const pageAddrName = "web.addr"

// webPage is serve's web page: the server, given the corpora this serve
// reaches (the ones it holds, or the holder's over the socket), and where
// it announces its address.
type webPage struct {
	srv      *web.Server
	addrFile string
	url      atomic.Value // string: where it listens, once it does
	answers  atomic.Bool  // this serve holds the index or fronts its holder
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
// and answers, whichever comes first; best effort (without it, ui starts
// a serve of its own).
func (p *webPage) announce() {
	if url, ok := p.url.Load().(string); ok && p.answers.Load() {
		safefile.Write(p.addrFile, []byte(url+"\n"), 0o600)
	}
}

// set gives the page corpora to answer from; nil takes them away (the
// index is being closed or handed over).
func (p *webPage) set(c *web.Corpora) {
	p.answers.Store(c != nil)
	p.srv.SetCorpora(c)
	if c != nil {
		p.announce()
	}
}

// front has the page answer from the serve that holds the index, over
// pool's connections to its socket, so that a search, a read (recorded
// by the holder) or the graph is the holder's own; nil pool takes them
// away (the holder went away). The holder's sessions index is asked for
// only if it has one.
func (p *webPage) front(ctx context.Context, pool *remote.Pool) {
	if p == nil {
		return
	}
	if pool == nil {
		p.set(nil)
		return
	}
	c := &web.Corpora{Memories: pool}
	if _, err := pool.Sessions().Status(ctx); !errors.Is(err, remote.ErrNoSessions) {
		c.Sessions = pool.Sessions()
	}
	p.set(c)
}

// hold gives the page the corpora this serve now holds; nil e takes them
// away (the index is being closed or handed over).
func (p *webPage) hold(e *engine.Engine, sess *sessions.Corpus) {
	if e == nil {
		p.set(nil)
		return
	}
	c := &web.Corpora{Memories: e}
	if sess != nil {
		c.Sessions = sess
	}
	p.set(c)
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
	return url, pageStatus(ctx, url, token) == http.StatusOK
}

// pageStatus is the HTTP status the page at url answers an API call with
// this token: 200 once its serve holds the index or fronts its holder, 503
// until then; 0 if nothing answers.
func pageStatus(ctx context.Context, url, token string) int {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"api/status", nil)
	if err != nil {
		return 0
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	res.Body.Close()
	return res.StatusCode
}

// serveAndOpen runs serve --http addr in this process, and opens the page
// as soon as it answers: at once when it holds the index or fronts the
// serve that does.
func (a *app) serveAndOpen(cmd *cobra.Command, addr, token string, noOpen bool) error {
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	url := "http://" + addr + "/"
	go func() {
		for ctx.Err() == nil {
			if pageStatus(ctx, url, token) == http.StatusOK {
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
