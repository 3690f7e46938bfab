package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"mnemo/cmd/mnemo/remote"
	"mnemo/engine"
	"mnemo/engine/safefile"
	"mnemo/engine/sessions"
	"mnemo/mcp"
)

// Serves that share a root. Every agent starts its own mnemo serve, and
// several agents often work on one root at once; the index has one writer.
// So each serve answers its own client through an mcp.Proxy, and behind the
// proxy it either holds the index (it opened it: the writer lock let it)
// and runs the tools itself, or is the front end of the serve that holds
// it, forwarding every call over the socket. When the holder goes away,
// the front ends race for the lock: the one that wins opens the index
// (whose start-up sync catches up on what changed meanwhile) and starts
// the watchers; the others attach to it. A call cut by the handover fails
// with mcp.RetryMessage; a call made while no one holds the index waits
// for the next holder.

// retryEvery is how often a serve that neither holds the index nor reaches
// its holder tries again (the holder may be starting, or a plain writer
// such as mnemo sync may hold it for a while).
const retryEvery = 100 * time.Millisecond

// roles runs the part of serve behind its MCP front door.
type roles struct {
	a            *app
	sf           serveFlags
	cfg          engine.Config
	sessFlags    *sessionsFlags
	withSessions bool
	proxy        *mcp.Proxy
	logf         func(string)
	mcpLog       *slog.Logger
	closed       bool // it held the index and closed it cleanly (set before run returns)
}

// run holds the index, or fronts its holder, until ctx is done. It returns
// an error only for what a retry cannot mend: an index that cannot be
// opened, or a holder serving another memory folder.
func (r *roles) run(ctx context.Context) error {
	var said string // the last reason logged for waiting, said once
	for ctx.Err() == nil {
		attached, err := r.attach(ctx)
		if attached || ctx.Err() != nil {
			said = ""
			continue
		}
		var ue usageError
		if errors.As(err, &ue) {
			return err
		}
		e, oerr := engine.Open(ctx, r.cfg)
		if oerr == nil {
			return r.hold(ctx, e)
		}
		if !errors.Is(oerr, engine.ErrInUse) {
			return oerr
		}
		if why := oerr.Error(); why != said {
			r.logf(fmt.Sprintf("waiting for the index: %v; it takes no requests yet (%v)", oerr, err))
			said = why
		}
		select {
		case <-time.After(retryEvery):
		case <-ctx.Done():
		}
	}
	return nil
}

// attach fronts the serve that holds the index, if one answers on the
// socket, until its connection ends; attached says whether it did.
func (r *roles) attach(ctx context.Context) (attached bool, err error) {
	c, err := remote.Dial(r.cfg.IndexDir)
	if err != nil {
		return false, err
	}
	err = sameMemory(ctx, c, r.cfg.MemoryDir)
	c.Close()
	if err != nil {
		return false, err
	}
	conn, err := remote.DialMCP(ctx, r.cfg.IndexDir)
	if err != nil {
		return false, err
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "mnemo-front-end", Version: "dev"}, nil).
		Connect(ctx, &sdk.IOTransport{Reader: conn, Writer: conn}, nil)
	if err != nil {
		conn.Close()
		return false, fmt.Errorf("connect to the holder's MCP tools: %w", err)
	}
	defer cs.Close()
	if err := r.proxy.Attach(ctx, cs); err != nil {
		return false, err
	}
	if r.sf.page != nil {
		// The page reaches the holder over the typed socket ops, not
		// through the proxy: the tools answer with text and figures laid
		// out for an agent, the ops with the engine's own values and
		// errors, which is what the page shows and maps to HTTP statuses.
		pool := remote.NewPool(r.cfg.IndexDir)
		defer pool.Close()
		r.sf.page.front(ctx, pool)
		defer r.sf.page.front(ctx, nil)
	}
	r.logf(fmt.Sprintf("front end of the serve that holds the index (%s): forwarding every tool call to it", holderName(r.cfg.IndexDir)))
	if flags := r.a.engineFlags(); len(flags) > 0 {
		r.logf("note: the holder answers with its own settings; " + strings.Join(flags, ", ") + " apply only if this serve takes the index over")
	}
	stop := context.AfterFunc(ctx, func() { cs.Close() })
	cs.Wait()
	stop()
	r.proxy.Detach(cs)
	if ctx.Err() == nil {
		r.logf("the serve that held the index went away: taking the index over, or attaching to the one that does")
	}
	return true, nil
}

// holderName names the process that holds the index, from writer.pid.
func holderName(indexDir string) string {
	b, err := safefile.Read(filepath.Join(indexDir, "writer.pid"), 64, false)
	if err != nil {
		return "pid unknown"
	}
	return "PID " + strings.TrimSpace(string(b))
}

// hold runs the tools on e, which this process has just opened as the
// index's writer, until ctx is done: its own client and the front ends of
// other serves reach the same MCP server, and the watchers keep the index
// fresh. e is closed on return.
func (r *roles) hold(ctx context.Context, e *engine.Engine) (err error) {
	defer func() {
		if ctx.Err() != nil {
			err = nil // asked to stop, perhaps mid-start: not a failure
		}
		if cerr := e.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close index: %w", cerr)
		}
		r.closed = err == nil // serve says so once every part has stopped
	}()
	for _, p := range e.RemovedTemps() {
		r.logf("removed " + p + ": a temporary file a writer killed mid-write left")
	}
	var sess *sessions.Corpus
	if r.withSessions {
		if sess, err = r.openSessions(ctx); err != nil {
			return err
		}
		defer sess.Close()
	}
	r.logf(fmt.Sprintf("holding the index: pid=%d memory=%s index=%s", os.Getpid(), r.cfg.MemoryDir, r.cfg.IndexDir))
	synced := r.catchUp(ctx, e)
	defer func() { <-synced }() // before e is closed
	local := mcp.NewServer(e, r.toolOptions(sess))
	ct, st := sdk.NewInMemoryTransports()
	if _, err := local.Connect(ctx, st, nil); err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "mnemo-front-door", Version: "dev"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	defer cs.Close()
	if err := r.proxy.Attach(ctx, cs); err != nil {
		return err
	}
	defer r.proxy.Detach(cs)
	serveMCP := func(ctx context.Context, rw io.ReadWriteCloser) error {
		ss, err := local.Connect(ctx, &sdk.IOTransport{Reader: rw, Writer: rw}, nil)
		if err != nil {
			return err
		}
		stop := context.AfterFunc(ctx, func() { ss.Close() })
		defer stop()
		return ss.Wait()
	}
	if r.sf.page != nil {
		r.sf.page.hold(e, sess)
		defer r.sf.page.hold(nil, nil)
	}
	stopHandoff := startHandoff(ctx, e, sess, r.cfg.IndexDir, serveMCP, r.logf)
	defer stopHandoff()
	return keepFresh(ctx, e, sess, r.sf, r.logf)
}

// catchUpWait bounds how long a new holder syncs before it takes calls.
const catchUpWait = 5 * time.Second

// catchUp syncs e before the holder takes calls, for at most catchUpWait
// (then the sync goes on while it answers, and results say the index is
// being built). A holder that took over from one that died holds an index
// that may lack the last writes acknowledged to agents (their files are on
// disk, their full-text batches may not be): a search answered before the
// sync would miss them. The watcher's own start-up sync, which follows,
// waits for this one and then finds nothing left to do.
// The channel returned is closed when the sync has ended.
func (r *roles) catchUp(ctx context.Context, e *engine.Engine) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		rep, err := e.Sync(ctx, false)
		switch {
		case err != nil && ctx.Err() == nil:
			r.logf("catch-up sync failed (the watcher's start-up sync tries again): " + err.Error())
		case err == nil:
			r.logf(syncLine(rep))
		}
	}()
	t := time.NewTimer(catchUpWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		r.logf(fmt.Sprintf("the catch-up sync takes longer than %s: answering while it runs", catchUpWait))
	case <-ctx.Done():
	}
	return done
}

// openSessions opens the sessions index. A holder that just died may not
// have let go of it yet when the memory index's lock is already free: an
// index in use is tried again for a few seconds.
func (r *roles) openSessions(ctx context.Context) (*sessions.Corpus, error) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		s, err := openServeSessions(ctx, r.sessFlags, r.cfg)
		if err == nil || !errors.Is(err, engine.ErrInUse) || time.Now().After(deadline) {
			return s, err
		}
		select {
		case <-time.After(retryEvery):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// toolOptions configure the MCP server that runs the tools on the index.
func (r *roles) toolOptions(sess *sessions.Corpus) mcp.Options {
	opts := mcp.Options{
		Version:  buildVersion(),
		Settings: serveSettings(r.sf, os.LookupEnv),
		Logger:   r.mcpLog,
	}
	if sess != nil {
		opts.Sessions = sess
	}
	return opts
}
