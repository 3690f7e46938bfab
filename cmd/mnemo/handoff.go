package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"mnemo/cmd/mnemo/remote"
	"mnemo/engine"
	"mnemo/engine/sessions"
)

// backend is what the commands other than serve need of an index: the
// engine itself, or the running mnemo serve that holds it.
type backend interface {
	engine.Searcher // what a running serve answers, and an open engine too
	Close() error
}

var (
	_ backend = (*engine.Engine)(nil)
	_ backend = (*remote.Client)(nil)
)

// openBackend opens the index, unless a mnemo serve holds it: then the
// command's requests go to that server, so they see its latest state and
// their reads are recorded there. If another process holds the index and
// takes no requests, the error names it as engine.Open did.
func (a *app) openBackend(ctx context.Context, cfg engine.Config) (backend, error) {
	// Ask for a server first: the socket exists only while one holds the
	// index, and engine.Open would wait for the lock before saying so.
	c, err := remote.Dial(cfg.IndexDir)
	if err != nil {
		e, err := engine.Open(ctx, cfg)
		if err == nil {
			return e, nil
		}
		if !errors.Is(err, engine.ErrInUse) {
			return nil, err
		}
		// A server that started while we waited.
		var derr error
		if c, derr = remote.Dial(cfg.IndexDir); derr != nil {
			return nil, fmt.Errorf("%w; it takes no requests (only mnemo serve does), so wait for it to finish or stop it", err)
		}
	}
	if err := sameMemory(ctx, c, cfg.MemoryDir); err != nil {
		c.Close()
		return nil, err
	}
	if flags := a.engineFlags(); len(flags) > 0 {
		verb := "are"
		if len(flags) == 1 {
			verb = "is"
		}
		fmt.Fprintf(a.stderr, "mnemo: note: mnemo serve holds the index and answers with its own settings; %s %s ignored\n",
			strings.Join(flags, ", "), verb)
	}
	return c, nil
}

// sameMemory refuses a server that holds the index for another memory
// folder than the one this command was given (--memory, or ROOT/memory):
// its answers would be about the wrong memories.
func sameMemory(ctx context.Context, c *remote.Client, memoryDir string) error {
	st, err := c.Status(ctx)
	if err != nil {
		return fmt.Errorf("ask mnemo serve which memory folder it serves: %w", err)
	}
	if samePath(st.MemoryDir, memoryDir) {
		return nil
	}
	return usagef("mnemo serve holds the index %s for the memory folder %s, not %s; stop it, or give this command another --index",
		st.IndexDir, st.MemoryDir, memoryDir)
}

// samePath reports whether a and b name the same folder.
func samePath(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(fa, fb)
	}
	aa, _ := filepath.Abs(a)
	bb, _ := filepath.Abs(b)
	return aa == bb
}

// engineFlags are the flags given that set how an engine ranks, which a
// running server does not take from its clients.
func (a *app) engineFlags() []string {
	var out []string
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"--decay-function", a.g.decayFunction != ""},
		{"--half-life-days", a.g.halfLifeSet},
		{"--fusion", a.g.fusion != ""},
		{"--embedder", a.g.embedder != ""},
	} {
		if f.set {
			out = append(out, f.name)
		}
	}
	return out
}

// startHandoff lets other mnemo commands reach e while serve holds it: it
// listens on the socket beside the index and answers there until stop is
// called or ctx ends; other serves' MCP calls are served by serveMCP. stop
// returns once no request is running, so that e can be closed. A socket
// that cannot be made is logged, not fatal: serve still works, and other
// commands report the index in use.
func startHandoff(ctx context.Context, e *engine.Engine, sess *sessions.Corpus, indexDir string, serveMCP func(context.Context, io.ReadWriteCloser) error, logf func(string)) (stop func()) {
	ln, err := remote.Listen(indexDir)
	if err != nil {
		logf("other commands cannot reach this server: " + err.Error())
		return func() {}
	}
	logf("other commands reach this server on " + ln.Addr().String())
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		var sb sessions.Index
		if sess != nil {
			sb = sess
		}
		if err := remote.ServeOpts(ctx, ln, e, remote.Options{Sessions: sb, MCP: serveMCP}); err != nil {
			logf("other commands can no longer reach this server: " + err.Error())
		}
	}()
	return func() {
		cancel()
		<-done
	}
}
