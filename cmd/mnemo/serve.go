package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"mnemo/decay"
	"mnemo/engine"
	"mnemo/engine/admit"
	"mnemo/engine/sessions"
	"mnemo/mcp"
)

// Environment variables serve reads (flags override them).
const (
	EnvDebounce    = "MAENIFOLD_DEBOUNCE_MS"     // watcher debounce in milliseconds, default 150
	EnvAutoSync    = "MAENIFOLD_AUTO_SYNC"       // "false" turns the watcher off
	EnvSessions    = "MAENIFOLD_SESSIONS"        // "false": serve does not index agent sessions
	EnvMaxSearches = "MAENIFOLD_MAX_SEARCHES"    // searches at once, default one per core
	EnvSearchQueue = "MAENIFOLD_SEARCH_QUEUE_MS" // longest wait for a turn before "busy", default 5000
)

// serveFlags is how serve runs, from its flags and the environment.
type serveFlags struct {
	watch    bool
	debounce time.Duration // 0: the engine's default
	http     string        // --http: serve MCP over streamable HTTP here instead of stdio
	g        globals       // the shared flags, for the MCP server's GetConfig

	maxSearches int           // 0: the gate's default (one per core)
	searchQueue time.Duration // 0: the gate's default (5 s)
	debugAddr   string        // --debug-addr: net/http/pprof on this loopback address

	token          httpTokenSource // what --http and --debug-addr require of every request
	sessionTimeout time.Duration   // 0: mcp's default
	page           *webPage        // --http: the web page at /, beside /mcp (ui.go)
}

// serveHelp is serve's --help text.
const serveHelp = `Open the index as its one writer, bring it up to date with the memory folder
(an incremental sync picks up whatever changed while nothing ran), then watch
the folder and index every change shortly after it is written, until SIGINT
or SIGTERM; the index is then closed cleanly.

Each event is logged to stderr as one line with a UTC timestamp.
$` + EnvDebounce + ` (or --debounce-ms) sets how long a file must be quiet before
it is re-indexed (default 150). $` + EnvAutoSync + `=false (or --no-watch) turns
the watcher off: serve then syncs once and keeps the index open.

It also serves the MCP tools (SearchMemories, ReadMemory, WriteMemory, …) to
the agent that started it, over stdin/stdout, unless stdin is a terminal or
/dev/null; when that client hangs up, serve stops. With --http ADDR it serves
them over streamable HTTP at http://ADDR/mcp instead; ADDR must be a loopback
address such as 127.0.0.1:8765. Every HTTP request needs the header
"Authorization: Bearer TOKEN": $` + EnvHTTPToken + `, or the file --token-file
names (mode 0600), or else INDEX/` + tokenName + `, made at first start; serve logs
the line that adds it to Claude Code, never the token. Requests from a web page
(an Origin header) are refused; idle MCP sessions close after --session-timeout
($` + EnvSessionTimeout + `, default 30m).

Several serves may run on one root (one per agent): the first holds the index,
the others forward every tool call (and their web page's API calls) to it over
the socket. When it stops or
dies, one of them takes the index over and the rest attach to that one; a call
cut by the handover answers "mnemo: retry: …".

At most $` + EnvMaxSearches + ` searches (or --max-searches; default one per
core) run at once; the others wait their turn in arrival order for at most
$` + EnvSearchQueue + ` milliseconds (or --search-queue-ms; default 5000) and then
get a "server busy, retry" tool error instead of an ever later answer.
--debug-addr 127.0.0.1:PORT serves Go's profiler (net/http/pprof) at
http://127.0.0.1:PORT/debug/pprof/ — loopback only, off by default, and only
to requests with a loopback Host and the same bearer token as --http.

It also keeps the agent-sessions index (see mnemo sessions --help) in step
with the transcript roots, watched the same way, and serves SearchSessions,
GetSession and GetMessage; --no-sessions (or $` + EnvSessions + `=false) turns
that off, --source KIND=DIR (repeatable) replaces the default roots.

While it runs, the other commands (search, read, status, eval, sync) from
any terminal go through it, over the socket INDEX/serve.sock: they see its
latest state, and their reads are recorded; the socket and the process behind
it must be this user's.`

// serveArgs are serve's flags as given, before the environment is read.
type serveArgs struct {
	debounceMs             int
	noWatch                bool
	httpAddr, debugAddr    string
	maxSearches, queueMs   int
	noSessions             bool
	sessions               sessionsFlags
	tokenFile, sessionIdle string
}

func (a *app) serveCmd() *cobra.Command {
	var sa serveArgs
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Keep the index fresh: watch the memory folder until stopped",
		Long:  serveHelp,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("serve takes no arguments (got %q)", args[0])
			}
			return a.runServe(cmd, &sa)
		},
	}
	cmd.Flags().StringVar(&sa.tokenFile, "token-file", "", "read the HTTP bearer token from this file (mode 0600); default $"+EnvHTTPToken+", else INDEX/"+tokenName+", made at first start")
	cmd.Flags().StringVar(&sa.sessionIdle, "session-timeout", "", "close an MCP HTTP session idle this long, e.g. 30m or 2h (overrides $"+EnvSessionTimeout+"; default 30m)")
	cmd.Flags().IntVar(&sa.debounceMs, "debounce-ms", 0, "milliseconds a file must be quiet before it is re-indexed (overrides $"+EnvDebounce+"; default 150)")
	cmd.Flags().BoolVar(&sa.noWatch, "no-watch", false, "sync once and do not watch (like $"+EnvAutoSync+"=false)")
	cmd.Flags().IntVar(&sa.maxSearches, "max-searches", 0, "searches that run at once (overrides $"+EnvMaxSearches+"; default one per core)")
	cmd.Flags().IntVar(&sa.queueMs, "search-queue-ms", 0, "milliseconds a search may wait for its turn before a \"busy, retry\" error (overrides $"+EnvSearchQueue+"; default 5000)")
	cmd.Flags().StringVar(&sa.debugAddr, "debug-addr", "", "serve Go's profiler (net/http/pprof) on this loopback address, e.g. 127.0.0.1:6060; off by default")
	cmd.Flags().BoolVar(&sa.noSessions, "no-sessions", false, "do not index or serve agent sessions (like $"+EnvSessions+"=false)")
	cmd.Flags().StringArrayVar(&sa.sessions.sources, "source", nil, "KIND=DIR: a transcript root for the sessions index (repeatable; replaces the defaults)")
	cmd.Flags().StringVar(&sa.httpAddr, "http", "", "serve MCP over streamable HTTP on this loopback address (e.g. 127.0.0.1:8765) instead of stdio")
	return cmd
}

// serveFlagsOf reads serve's flags and the environment they override,
// refusing a bad value before the index is opened.
func (a *app) serveFlagsOf(cmd *cobra.Command, sa *serveArgs) (serveFlags, error) {
	given := func(name string, v *int) *int {
		if cmd.Flags().Changed(name) {
			return v
		}
		return nil
	}
	sf, err := serveOptions(given("debounce-ms", &sa.debounceMs), sa.noWatch, os.LookupEnv)
	if err != nil {
		return sf, err
	}
	sf.http, sf.g, sf.debugAddr = sa.httpAddr, a.g, sa.debugAddr
	if sa.httpAddr != "" {
		if err := mcp.CheckHTTPAddr(sa.httpAddr); err != nil {
			return sf, usageError{err} // before the index is opened
		}
	}
	if sf.maxSearches, sf.searchQueue, err = searchLimits(given("max-searches", &sa.maxSearches), given("search-queue-ms", &sa.queueMs), os.LookupEnv); err != nil {
		return sf, err
	}
	return sf, checkDebugAddr(sf.debugAddr)
}

// runServe is serve once its arguments are checked: it reads the rest of
// its configuration, then serves until stopped.
func (a *app) runServe(cmd *cobra.Command, sa *serveArgs) error {
	sf, err := a.serveFlagsOf(cmd, sa)
	if err != nil {
		return err
	}
	cfg, err := a.engineConfig(cmd.Context()) // includes --embedder / MAENIFOLD_EMBEDDER
	if err != nil {
		return err
	}
	// One gate for the process: MCP's searches, the socket's and the
	// sessions corpus's all wait in the same queue.
	cfg.Admit = admit.New(sf.maxSearches, sf.searchQueue)
	withSessions, err := sessionsOn(sa.noSessions, os.LookupEnv)
	if err != nil {
		return err
	}
	if sf.sessionTimeout, err = sessionTimeout(sa.sessionIdle, os.LookupEnv); err != nil {
		return err
	}
	if sf.http != "" || sf.debugAddr != "" {
		if sf.token, err = httpToken(cfg.IndexDir, sa.tokenFile, os.LookupEnv); err != nil {
			return err
		}
	}
	if sf.http != "" {
		sf.page = newWebPage(cfg.IndexDir, sf.token.token)
	}
	log := newLogger(a.stderr)
	log.print(fmt.Sprintf("serve pid=%d memory=%s index=%s watch=%t debounce=%s",
		os.Getpid(), cfg.MemoryDir, cfg.IndexDir, sf.watch, debounceText(sf.debounce)))
	r := &roles{a: a, sf: sf, cfg: cfg, sessFlags: &sa.sessions, withSessions: withSessions, logf: log.print,
		mcpLog: slog.New(slog.NewTextHandler(logWriter(log.print), &slog.HandlerOptions{Level: slog.LevelWarn}))}
	r.proxy = mcp.NewProxy(mcp.ProxyOptions{Version: buildVersion(), Logger: r.mcpLog})
	return serve(cmd.Context(), r, sf, log.print)
}

// serveOptions reads serve's flags (flagMs nil: --debounce-ms not given)
// and environment; bad values are usage errors naming the flag or variable.
func serveOptions(flagMs *int, noWatch bool, lookup func(string) (string, bool)) (serveFlags, error) {
	sf := serveFlags{watch: !noWatch}
	if v, ok := lookup(EnvAutoSync); ok && strings.TrimSpace(v) != "" {
		on, err := parseSwitch(v)
		if err != nil {
			return sf, usagef("$%s=%q: want true or false", EnvAutoSync, v)
		}
		sf.watch = sf.watch && on
	}
	ms, name := 0, ""
	switch v, ok := lookup(EnvDebounce); {
	case flagMs != nil:
		ms, name = *flagMs, "--debounce-ms"
	case ok && strings.TrimSpace(v) != "":
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return sf, usagef("$%s=%q: want a whole number of milliseconds", EnvDebounce, v)
		}
		ms, name = n, "$"+EnvDebounce
	}
	if name != "" {
		if ms < 1 || ms > 60_000 {
			return sf, usagef("%s %d: want 1 to 60000 milliseconds", name, ms)
		}
		sf.debounce = time.Duration(ms) * time.Millisecond
	}
	return sf, nil
}

// searchLimits reads the search gate's settings (a nil flag was not
// given); 0 leaves the gate's default (admit.New).
func searchLimits(flagMax, flagQueueMs *int, lookup func(string) (string, bool)) (int, time.Duration, error) {
	read := func(flag *int, flagName, env string, lo, hi int) (int, error) {
		n, name := 0, ""
		switch v, ok := lookup(env); {
		case flag != nil:
			n, name = *flag, flagName
		case ok && strings.TrimSpace(v) != "":
			var err error
			if n, err = strconv.Atoi(strings.TrimSpace(v)); err != nil {
				return 0, usagef("$%s=%q: want a whole number", env, v)
			}
			name = "$" + env
		default:
			return 0, nil
		}
		if n < lo || n > hi {
			return 0, usagef("%s %d: want %d to %d", name, n, lo, hi)
		}
		return n, nil
	}
	max, err := read(flagMax, "--max-searches", EnvMaxSearches, 1, 1024)
	if err != nil {
		return 0, 0, err
	}
	ms, err := read(flagQueueMs, "--search-queue-ms", EnvSearchQueue, 1, 600_000)
	if err != nil {
		return 0, 0, err
	}
	return max, time.Duration(ms) * time.Millisecond, nil
}

// sessionsOn says whether serve indexes agent sessions: yes, unless
// --no-sessions or $MAENIFOLD_SESSIONS=false.
func sessionsOn(noSessions bool, lookup func(string) (string, bool)) (bool, error) {
	if noSessions {
		return false, nil
	}
	if v, ok := lookup(EnvSessions); ok && strings.TrimSpace(v) != "" {
		on, err := parseSwitch(v)
		if err != nil {
			return false, usagef("$%s=%q: want true or false", EnvSessions, v)
		}
		return on, nil
	}
	return true, nil
}

// openServeSessions opens the sessions index beside the memory index.
func openServeSessions(ctx context.Context, sf *sessionsFlags, cfg engine.Config) (*sessions.Corpus, error) {
	home, err := os.UserHomeDir()
	if err != nil && len(sf.sources) == 0 {
		return nil, usagef("no home folder to find transcripts in (%v); give --source KIND=DIR or --no-sessions", err)
	}
	srcs, err := sessionSources(sf, home, sessions.Scratch(cfg.IndexDir), os.Getenv)
	if err != nil {
		return nil, err
	}
	mirror, err := sessionsMirror(os.LookupEnv)
	if err != nil {
		return nil, err
	}
	s, err := sessions.Open(ctx, sessions.Config{IndexDir: cfg.IndexDir, Sources: srcs, Embedder: cfg.Embedder, Fusion: cfg.Fusion, MirrorDeleted: mirror, Admit: cfg.Admit})
	if err != nil {
		return nil, fmt.Errorf("sessions index: %w", err)
	}
	return s, nil
}

func parseSwitch(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "t", "true", "yes", "on":
		return true, nil
	case "0", "f", "false", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("not a boolean: %q", v)
}

func debounceText(d time.Duration) string {
	if d == 0 {
		return "150ms"
	}
	return d.String()
}

// serve runs the MCP front door and the profiler (if asked for) for as
// long as serve runs, and behind the door the roles (share.go), until ctx
// is done, the stdio client hangs up, or one of them fails. It returns
// once all have stopped, the index closed.
func serve(ctx context.Context, r *roles, sf serveFlags, logf func(string)) error {
	g, ctx := errgroup.WithContext(ctx)
	// run starts one part; its failure stops the others, but an error it
	// returns because serve is already stopping is not one.
	run := func(name string, fn func(context.Context) error) {
		g.Go(func() error {
			if err := fn(ctx); err != nil && ctx.Err() == nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			return nil
		})
	}
	if sf.debugAddr != "" {
		logf("the profiler answers requests with the header Authorization: Bearer <token>, the token " + sf.token.where)
		run("debug server", func(ctx context.Context) error { return serveDebug(ctx, sf.debugAddr, sf.token.token, logf) })
	}
	g.Go(func() error {
		err := r.run(ctx)
		if err != nil && ctx.Err() == nil {
			return err // an index that cannot be opened: serve stops with its own error
		}
		return nil
	})
	run("servers", func(ctx context.Context) error {
		if err := runServers(ctx, r.proxy.Server(), sf, logf); err != nil {
			return err
		}
		return errHungUp // the MCP client hung up: serving is over
	})
	g.Go(func() error {
		<-ctx.Done()
		logf("stopping")
		return nil
	})
	err := g.Wait()
	if errors.Is(err, errHungUp) {
		err = nil
	}
	if err == nil && r.closed {
		logf("stopped: index closed") // the last line: nothing runs any more
	}
	return err
}

// keepFresh keeps the index e fresh while this serve holds it: the
// watchers (or one sync, without --no-watch), until ctx is done. The
// sessions' vectors load before their first sync (loadSessionVectors):
// the load holds the corpus's read lock, so a sync beside it would wait
// for it, and a transcript appended right after the start-up sync with it.
func keepFresh(ctx context.Context, e *engine.Engine, sess *sessions.Corpus, sf serveFlags, logf func(string)) error {
	if !sf.watch {
		r, err := e.Sync(ctx, false)
		if err != nil {
			if ctx.Err() != nil {
				return nil // stopped during the sync: the next start finishes it
			}
			return err
		}
		logf(syncLine(r))
		if sess != nil {
			loadSessionVectors(sess, logf)
			sr, err := sess.Sync(ctx, false)
			if err != nil && ctx.Err() == nil {
				return fmt.Errorf("sessions: %w", err)
			}
			logf(sessionsSyncSummary(sr))
		}
		<-ctx.Done()
		return nil
	}
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		if err := e.Watch(ctx, engine.WatchOptions{Debounce: sf.debounce, Log: logf}); err != nil && ctx.Err() == nil {
			return fmt.Errorf("watcher: %w", err)
		}
		return nil
	})
	if sess != nil {
		g.Go(func() error {
			loadSessionVectors(sess, logf)
			if err := sess.Watch(ctx, sessions.WatchOptions{Debounce: sf.debounce, RescanEvery: sessions.RescanEvery, Log: logf}); err != nil && ctx.Err() == nil {
				return fmt.Errorf("sessions watcher: %w", err)
			}
			return nil
		})
	}
	return g.Wait()
}

// errHungUp stops serve's other parts when the MCP client hangs up.
var errHungUp = errors.New("mcp client hung up")

// loadSessionVectors loads the sessions' vectors while serve starts
// (sessions.Corpus.LoadVectors), not in the first query that needs them,
// and logs how long it took. A failure is logged, not fatal: the queries
// that need the vectors report it, full-text ones still answer.
func loadSessionVectors(sess *sessions.Corpus, logf func(string)) {
	start := time.Now()
	if err := sess.LoadVectors(); err != nil {
		logf("sessions vectors not loaded: " + err.Error())
		return
	}
	logf(fmt.Sprintf("sessions vectors loaded in %dms", time.Since(start).Milliseconds()))
}

// runServers is serve's MCP front door, srv (the roles' proxy), over
// stdio or (--http) streamable HTTP. It returns when ctx is done, or with
// nil when the stdio client hangs up; an error stops serve. Stdin that is
// a terminal or /dev/null has no MCP client on it (a person at a shell, a
// service manager): then it only waits.
func runServers(ctx context.Context, srv *sdk.Server, sf serveFlags, logf func(string)) error {
	opts := mcp.Options{
		HTTPAddr: sf.http,
		HTTP:     mcp.HTTPOptions{Token: sf.token.token, SessionTimeout: sf.sessionTimeout, Page: sf.page.handler()},
		Listening: func(url string) {
			logf("mcp listening on " + url + "; every request needs the header Authorization: Bearer <token>, the token " + sf.token.where)
			logf("add it to Claude Code with: claude mcp add --transport http mnemo " + url + ` --header "Authorization: Bearer ` + sf.token.shell + `"`)
			sf.page.listening(strings.TrimSuffix(url, "mcp"), logf)
		},
	}
	if sf.http == "" {
		if fi, err := os.Stdin.Stat(); err != nil || fi.Mode()&os.ModeCharDevice != 0 {
			logf("mcp over stdio is off: stdin is a terminal or /dev/null, not an MCP client (use --http ADDR to serve HTTP)")
			<-ctx.Done()
			return nil
		}
		logf("mcp serving on stdio")
	}
	err := mcp.ServeServer(ctx, srv, opts)
	if err == nil && ctx.Err() == nil {
		logf("mcp client closed the connection")
	}
	return err
}

// serveSettings is what GetConfig shows beyond the decay variables: the
// variables serve reads, and the flags that override one.
func serveSettings(sf serveFlags, lookup func(string) (string, bool)) []decay.Setting {
	from := func(name, flag string, flagGiven bool) string {
		switch _, ok := lookup(name); {
		case flagGiven:
			return "flag " + flag
		case ok:
			return "env"
		}
		return "default"
	}
	root, _ := lookup(EnvRoot)
	if sf.g.root != "" {
		root = sf.g.root
	} else if root == "" {
		root = "~/maenifold"
	}
	debounce := strconv.FormatInt(sf.debounce.Milliseconds(), 10)
	if sf.debounce == 0 {
		debounce = "150"
	}
	gamma, gammaSet := lookup(EnvLouvainGamma)
	if strings.TrimSpace(gamma) == "" {
		gamma, gammaSet = "1", false
	}
	envMs, _ := lookup(EnvDebounce)
	envWatch, _ := lookup(EnvAutoSync)
	out := []decay.Setting{
		{Name: EnvRoot, Value: root, Source: from(EnvRoot, "--root", sf.g.root != ""), Help: "folder holding memory/ and index/"},
		{Name: EnvDebounce, Value: debounce, Source: from(EnvDebounce, "--debounce-ms", sf.debounce != 0 && strings.TrimSpace(envMs) != debounce),
			Help: "milliseconds a file must be quiet before serve re-indexes it"},
		{Name: EnvAutoSync, Value: strconv.FormatBool(sf.watch), Source: from(EnvAutoSync, "--no-watch", !sf.watch && on(envWatch)),
			Help: "whether serve watches the memory folder"},
		{Name: EnvLouvainGamma, Value: strings.TrimSpace(gamma), Source: map[bool]string{true: "env", false: "default"}[gammaSet],
			Help: "resolution of the concept graph's Louvain communities; higher gives more, smaller ones"},
	}
	maxSearches, queueMs := strconv.Itoa(admit.DefaultMax()), strconv.FormatInt(admit.DefaultQueueTimeout.Milliseconds(), 10)
	if sf.maxSearches > 0 {
		maxSearches = strconv.Itoa(sf.maxSearches)
	}
	if sf.searchQueue > 0 {
		queueMs = strconv.FormatInt(sf.searchQueue.Milliseconds(), 10)
	}
	envMax, _ := lookup(EnvMaxSearches)
	envQueue, _ := lookup(EnvSearchQueue)
	out = append(out,
		decay.Setting{Name: EnvMaxSearches, Value: maxSearches, Source: from(EnvMaxSearches, "--max-searches", sf.maxSearches > 0 && strings.TrimSpace(envMax) != maxSearches),
			Help: "searches that run at once; more wait their turn"},
		decay.Setting{Name: EnvSearchQueue, Value: queueMs, Source: from(EnvSearchQueue, "--search-queue-ms", sf.searchQueue > 0 && strings.TrimSpace(envQueue) != queueMs),
			Help: "milliseconds a search waits for its turn before a busy, retry error"})
	if sf.g.decayFunction != "" {
		out = append(out, decay.Setting{Name: decay.EnvFunction, Value: sf.g.decayFunction, Source: "flag --decay-function"})
	}
	if sf.g.halfLifeSet {
		out = append(out, decay.Setting{Name: decay.EnvHalfLife, Value: strconv.FormatFloat(sf.g.halfLifeDays, 'g', -1, 64), Source: "flag --half-life-days"})
	}
	return out
}

// on reads an unset or malformed switch as on, as serveOptions does.
func on(v string) bool {
	b, err := parseSwitch(v)
	return err != nil || b
}

// logWriter turns the MCP SDK's log output into serve's one-line records.
type logWriter func(string)

func (w logWriter) Write(p []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		w("mcp: " + l)
	}
	return len(p), nil
}

func syncLine(r engine.Report) string {
	line := fmt.Sprintf("sync added=%d updated=%d removed=%d unchanged=%d skipped=%d in %dms",
		len(r.Added), len(r.Updated), len(r.Removed), r.Unchanged, len(r.Skipped), r.Total.Milliseconds())
	if r.Rebuilt != "" {
		line += " (full rebuild: " + r.Rebuilt + ")"
	}
	return line
}

// logger writes one-line records, "2026-11-29T10:00:00Z message", from
// any goroutine.
type logger struct {
	mu sync.Mutex
	w  io.Writer
}

func newLogger(w io.Writer) *logger { return &logger{w: w} }

func (l *logger) print(msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, "%s %s\n", time.Now().UTC().Format(time.RFC3339), oneLine(msg))
}
