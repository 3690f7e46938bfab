package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"mnemo/decay"
	"mnemo/engine"
	"mnemo/engine/embed"
)

// EnvRoot names the folder that holds memory/ and index/ when --root is not given.
const EnvRoot = "MAENIFOLD_ROOT"

// EnvLouvainGamma is the resolution of the concept graph's communities.
const EnvLouvainGamma = "MAENIFOLD_LOUVAIN_GAMMA"

// globals are the flags every command shares.
type globals struct {
	root, memory, index string
	json                bool
	decayFunction       string
	halfLifeDays        float64
	halfLifeSet         bool // --half-life-days was given (0 is an invalid value, not "unset")
	fusion              string
	embedder            string
}

// app is one run of the CLI: the shared flags and where output goes.
type app struct {
	g              globals
	stdout, stderr io.Writer
}

// usageError marks a mistake in how mnemo was called; it exits with status 2.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// engineUsageErrors are the engine's answers to a malformed Query or path:
// the caller's mistake, so they exit 2 like a bad flag.
var engineUsageErrors = []error{
	engine.ErrEmptyQuery, engine.ErrNoTerms, engine.ErrBadPage, engine.ErrBadPageSize,
	engine.ErrBadMode, engine.ErrBadSort, engine.ErrOutsideRoot, engine.ErrBadGraphArg,
	engine.ErrBadMinScore, engine.ErrBadRange,
}

func isUsage(err error) bool {
	var u usageError
	if errors.As(err, &u) {
		return true
	}
	for _, e := range engineUsageErrors {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// exitCode is 0 for success, 2 for a usage error and 1 for anything else.
func exitCode(err error) int {
	switch {
	case err == nil:
		return 0
	case isUsage(err):
		return 2
	}
	return 1
}

// run is the whole CLI: it parses args, runs one command and returns the exit
// status. Errors are printed to stderr as one line, "mnemo: <message>".
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	a := &app{stdout: stdout, stderr: stderr}
	root := a.rootCmd()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	msg := err.Error()
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		msg = "interrupted"
	}
	fmt.Fprintf(stderr, "mnemo: %s\n", oneLine(msg))
	return exitCode(err)
}

// oneLine joins a multi-line message (errors.Join makes those) with "; ".
func oneLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, "; ")
}

func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "mnemo",
		Short: "A local memory engine for AI agents",
		Long: `mnemo keeps a folder of markdown memories searchable: a BM25 full-text index
and a vector index, searched together (hybrid), by meaning (semantic) or by
words (fulltext), with recency decay.

Memories live in ROOT/memory and the index in ROOT/index, where ROOT is
--root, else $` + EnvRoot + `, else ~/maenifold. --memory and --index set either
folder directly. The embedder is --embedder or $` + embed.EnvEmbedder + `: builtin
(default, offline), ollama:<model> ($` + embed.EnvOllamaURL + `) or openai:<model>
($` + embed.EnvOpenAIBaseURL + `, key from $` + embed.EnvOpenAIKey + ` or
$` + embed.EnvOpenAIKeyStd + `). Decay is configured by the ` + decay.EnvFunction + `,
` + decay.EnvHalfLife + `, ` + decay.EnvStrength + ` and MAENIFOLD_DECAY_GRACE_DAYS_*
variables; the flags below override them. $` + EnvLouvainGamma + ` sets the resolution of
the concept graph's communities (default 1).

An index has one writer at a time. While mnemo serve runs, the other
commands go through it (so its settings, not these flags, rank results).
While another command writes, the rest fail after a short wait with
"index is in use by PID N".

Exit status: 0 success, 1 error, 2 usage error.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.ArbitraryArgs,
		// A root that runs turns "mnemo frobnicate" into our usage error
		// instead of cobra's help page with exit 0.
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				var names []string
				for _, c := range cmd.Commands() {
					if c.IsAvailableCommand() && c.Name() != "help" {
						names = append(names, c.Name())
					}
				}
				return usagef("missing command (%s); see mnemo --help", strings.Join(names, ", "))
			}
			msg := fmt.Sprintf("unknown command %q", args[0])
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += fmt.Sprintf(" (did you mean %q?)", s[0])
			}
			return usagef("%s; see mnemo --help", msg)
		},
		PersistentPreRun: func(cmd *cobra.Command, _ []string) {
			a.g.halfLifeSet = cmd.Flags().Changed("half-life-days")
		},
	}
	root.Version = buildVersion()
	root.SetVersionTemplate("mnemo version {{.Version}}\n")
	root.SuggestionsMinimumDistance = 2
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })

	f := root.PersistentFlags()
	f.StringVar(&a.g.root, "root", "", "folder holding memory/ and index/ (default $"+EnvRoot+", else ~/maenifold)")
	f.StringVar(&a.g.memory, "memory", "", "memory folder (default ROOT/memory)")
	f.StringVar(&a.g.index, "index", "", "index folder (default ROOT/index)")
	f.BoolVar(&a.g.json, "json", false, "print JSON instead of text")
	f.StringVar(&a.g.decayFunction, "decay-function", "", "recency decay curve: exponential or power-law (overrides $"+decay.EnvFunction+")")
	f.Float64Var(&a.g.halfLifeDays, "half-life-days", 0, "days after the grace period at which a memory's weight is 0.5 (overrides $"+decay.EnvHalfLife+")")
	f.StringVar(&a.g.fusion, "fusion", "", "how hybrid mode combines the two indexes: weighted or rrf (default weighted)")
	f.StringVar(&a.g.embedder, "embedder", "", "builtin, ollama:<model> or openai:<model> (overrides $"+embed.EnvEmbedder+"; changing it re-embeds every memory)")

	root.AddCommand(a.syncCmd(), a.searchCmd(), a.readCmd(), a.statusCmd(), a.serveCmd(), a.uiCmd(), a.evalCmd(), a.graphCmd(), a.sessionsCmd())
	return root
}

// buildConfig turns the global flags and the environment (read through
// lookup, os.LookupEnv in production) into an engine.Config.
// Errors are usage errors that name the flag or variable at fault.
func buildConfig(g globals, lookup func(string) (string, bool)) (engine.Config, error) {
	cfg := engine.Config{MemoryDir: g.memory, IndexDir: g.index}
	if cfg.MemoryDir == "" || cfg.IndexDir == "" {
		root := g.root
		if root == "" {
			root, _ = lookup(EnvRoot)
			root = strings.TrimSpace(root)
		}
		if root == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return engine.Config{}, usagef("no --root, $%s or home folder: %v", EnvRoot, err)
			}
			root = filepath.Join(home, "maenifold")
		}
		if cfg.MemoryDir == "" {
			cfg.MemoryDir = filepath.Join(root, "memory")
		}
		if cfg.IndexDir == "" {
			cfg.IndexDir = filepath.Join(root, "index")
		}
	}

	d, err := decay.FromLookup(lookup)
	if err != nil {
		return engine.Config{}, usageError{err} // names each bad variable
	}
	if g.decayFunction != "" {
		// Parse the flag as if it were the variable, so it accepts the same
		// spellings ("powerlaw") and comes out canonical.
		one, err := decay.FromLookup(func(name string) (string, bool) {
			return g.decayFunction, name == decay.EnvFunction
		})
		if err != nil {
			return engine.Config{}, usagef(`--decay-function %q: want "exponential" or "power-law"`, g.decayFunction)
		}
		d.Function = one.Function
	}
	if g.halfLifeSet {
		if math.IsNaN(g.halfLifeDays) || math.IsInf(g.halfLifeDays, 0) || g.halfLifeDays <= 0 {
			return engine.Config{}, usagef("--half-life-days %v: want a positive number of days", g.halfLifeDays)
		}
		d.HalfLifeDays = g.halfLifeDays
	}
	cfg.Decay = d

	if v, ok := lookup(EnvLouvainGamma); ok && strings.TrimSpace(v) != "" {
		gamma, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(gamma) || math.IsInf(gamma, 0) || gamma <= 0 {
			return engine.Config{}, usagef("$%s %q: want a positive number (1 is classic modularity; higher gives smaller communities)", EnvLouvainGamma, v)
		}
		cfg.LouvainGamma = gamma
	}

	switch f := engine.Fusion(strings.ToLower(g.fusion)); f {
	case "":
	case engine.WeightedSum, engine.RRF:
		cfg.Fusion = f
	default:
		return engine.Config{}, usagef("--fusion %q: want weighted or rrf", g.fusion)
	}
	return cfg, nil
}

// engineConfig is buildConfig on the real environment plus the embedder,
// which may have to reach a server (an Ollama or OpenAI-compatible one) to
// learn its dimension, and so needs ctx.
func (a *app) engineConfig(ctx context.Context) (engine.Config, error) {
	cfg, err := buildConfig(a.g, os.LookupEnv)
	if err != nil {
		return engine.Config{}, err
	}
	if err := a.ensureMemory(cfg.MemoryDir); err != nil {
		return engine.Config{}, err
	}
	if cfg.Embedder, err = newEmbedder(ctx, a.g, os.LookupEnv); err != nil {
		return engine.Config{}, err
	}
	return cfg, nil
}

// ensureMemory creates the memory folder when it is ROOT/memory — ROOT
// from --root, $MAENIFOLD_ROOT or ~/maenifold — and does not exist yet, so
// that the first command on a fresh machine (and the MCP server a client
// starts there) works, and says so in one line on stderr. A --memory given
// explicitly must exist: a mistyped path would otherwise become a new,
// empty memory that every later command quietly reads.
func (a *app) ensureMemory(dir string) error {
	if a.g.memory != "" {
		return nil // the engine refuses a missing one, naming it
	}
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		return nil // there (or unreadable): the engine says what is wrong with it
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create the memory folder: %w", err)
	}
	fmt.Fprintf(a.stderr, "mnemo: created the memory folder %s (first use); memories are the markdown files in it\n", dir)
	return nil
}

// newEmbedder builds the embedder --embedder, else $MAENIFOLD_EMBEDDER,
// names (the built-in one when neither is set). A malformed setting is a
// usage error that names where it came from.
func newEmbedder(ctx context.Context, g globals, lookup func(string) (string, bool)) (embed.Embedder, error) {
	spec, from := g.embedder, "--embedder"
	if spec == "" {
		spec, _ = lookup(embed.EnvEmbedder)
		from = "$" + embed.EnvEmbedder
	}
	e, err := embed.FromSpec(ctx, spec, lookup)
	if errors.Is(err, embed.ErrBadSpec) {
		return nil, usagef("%s: %w", from, err)
	}
	return e, err
}

// withEngine opens the engine, runs fn and closes it, reporting the first
// error. While mnemo serve holds the index, fn gets a client of that server
// instead (see openBackend); progress is then not reported.
func (a *app) withEngine(ctx context.Context, readOnly bool, progress func(done, total int), fn func(backend) error) (err error) {
	cfg, err := a.engineConfig(ctx)
	if err != nil {
		return err
	}
	cfg.ReadOnly = readOnly
	cfg.Progress = progress
	e, err := a.openBackend(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := e.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close index: %w", cerr)
		}
	}()
	return fn(e)
}
