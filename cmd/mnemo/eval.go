package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"mnemo/engine"
	"mnemo/engine/eval"
	"mnemo/mcp/args"
)

// evalFlags are eval's own flags.
type evalFlags struct {
	search  searchFlags // defaults for the search fields of each line
	scope   bool
	asOf    bool
	exclude []string
	compare string
	metric  string
	saveRun string
	noSync  bool
}

func (a *app) evalCmd() *cobra.Command {
	var f evalFlags
	cmd := &cobra.Command{
		Use:   "eval [flags] QUERIES.jsonl",
		Short: "Measure search quality on judged queries",
		Long: `Run every judged query in QUERIES.jsonl through one engine and report how
well the results match the judgments: recall@1/5/10, nDCG@10, MRR@10 and
hit@3, overall and per category, and query latency (p50/p95/p99, ranking
only, without snippets). The definitions are those of the benchmark scorer
(tools/score.py in the shared benchmark data, which is not part of this
repository), so numbers can be compared with its tables.
An incremental sync runs first; --no-sync skips it. See docs/eval.md.

Each line is a search --batch line (id, query, optional mode, folder, tags,
from, to, now, pageSize, …) plus the judgments:
  "relevant": ["decisions/adr-001.md", …]   paths that answer the query
  "grades":   {"decisions/adr-001.md": 2}   optional graded relevance for nDCG
  "category", "category_name"               optional, for the breakdown
  "scope", "as_of"                          optional, used with --scope, --as-of
Queries without "relevant" are not run. Other fields are ignored.

--scope searches each query within its "scope" folder and scores only
results under it; --as-of evaluates recency decay at the query's "as_of".
--save-run FILE writes the ranked results in score.py's run format;
--compare OTHER_RUN runs a paired randomisation test (sign flips, 10,000
draws, fixed seed) of --metric between this run and OTHER_RUN. Its p-value
comes from Go's generator, not numpy's, so it differs from score.py's
within sampling error (about ±0.005 near 0.05).`,
		Example: `  mnemo eval my-queries.jsonl
  mnemo eval --mode fulltext --save-run fulltext.run my-queries.jsonl
  mnemo eval --compare fulltext.run my-queries.jsonl
  mnemo --memory bench/docs --index /tmp/idx eval --scope --as-of --exclude-category 5 --json bench/queries.jsonl`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("eval needs one queries file (got %d arguments); see mnemo eval --help", len(args))
			}
			if err := eval.CheckMetric(f.metric); err != nil {
				return usagef("--metric: %v", err)
			}
			return a.runEval(cmd.Context(), args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.search.mode, "mode", "m", "", "hybrid, semantic or fulltext, for lines without \"mode\" (default hybrid)")
	fl.IntVarP(&f.search.pageSize, "page-size", "n", 100, "results per query, for lines without \"pageSize\" (1 to 200)")
	fl.BoolVar(&f.scope, "scope", false, `search within each query's "scope" folder and score only results under it`)
	fl.BoolVar(&f.asOf, "as-of", false, `evaluate recency decay at each query's "as_of" time`)
	fl.StringSliceVar(&f.exclude, "exclude-category", nil, "leave out queries of this category (repeatable, or comma-separated)")
	fl.StringVar(&f.compare, "compare", "", "a saved run to test this one against (paired randomisation test)")
	fl.StringVar(&f.metric, "metric", "nDCG@10", "the metric --compare tests: "+strings.Join(eval.Metrics, ", "))
	fl.StringVar(&f.saveRun, "save-run", "", "write this run's ranked results to FILE (score.py's run format)")
	fl.BoolVar(&f.noSync, "no-sync", false, "search the index as it is, without syncing first")
	return cmd
}

// evalQuery is one line of the queries file: its judgments and its search.
type evalQuery struct {
	judged eval.Query
	search engine.Query
	id     json.RawMessage // as written, for the saved run
}

// readEvalQueries parses a queries file. Every line is checked before any
// query runs: a mistake anywhere is a usage error that names its line.
// Unjudged queries (no "relevant") are dropped; unjudged counts them.
func readEvalQueries(r io.Reader, name string, f evalFlags) (qs []evalQuery, unjudged int, err error) {
	seen := map[string]int{}
	err = eval.EachLine(r, func(n int, line []byte) error {
		bad := func(err error) error {
			return usagef("%s:%d: %s", name, n, strings.TrimPrefix(err.Error(), "json: "))
		}
		var j eval.Query
		if err := json.Unmarshal(line, &j); err != nil {
			return bad(err)
		}
		if prev, dup := seen[j.ID]; dup {
			return bad(fmt.Errorf("id %q repeats line %d", j.ID, prev))
		}
		seen[j.ID] = n
		q, err := buildQuery("", f.search)
		if err != nil {
			return bad(err)
		}
		var id json.RawMessage
		// The search fields; any other field is a judgment or a note.
		err = args.Decode(line, &q, func(name string, v json.RawMessage) error {
			if name == "id" {
				id = v
			}
			return nil
		})
		if err != nil {
			return bad(fmt.Errorf("id %q: %w", j.ID, err))
		}
		if f.scope && j.Scope != "" {
			q.Folder = strings.TrimRight(j.Scope, "/")
		}
		if f.asOf && j.AsOf != "" {
			if q.Now, err = engine.ParseDate("now", j.AsOf, false); err != nil {
				return bad(fmt.Errorf("id %q: as_of: %w", j.ID, err))
			}
		}
		if len(j.Relevant) == 0 {
			unjudged++
			return nil
		}
		qs = append(qs, evalQuery{judged: j, search: q, id: id})
		return nil
	})
	var ue usageError
	if err != nil && !errors.As(err, &ue) {
		err = fmt.Errorf("read %s: %w", name, err)
	}
	if err != nil {
		return nil, 0, err
	}
	return qs, unjudged, nil
}

// evalOutput is eval's JSON. Subsets have score.py's shape and keys.
type evalOutput struct {
	Queries         string                 `json:"queries"`
	Mode            string                 `json:"mode"` // the default; lines may override it
	Scope           bool                   `json:"scope"`
	AsOf            bool                   `json:"asOf"`
	ExcludeCategory []string               `json:"excludeCategory"`
	Unjudged        int                    `json:"unjudged"` // queries without "relevant", not run
	Failed          []evalFailure          `json:"failed"`
	Subsets         map[string]eval.Subset `json:"subsets"`
	LatencyMs       eval.Latency           `json:"latencyMs"`
	Compare         *evalCompare           `json:"compare,omitempty"`
}

// evalFailure is a query the engine refused; it scores as an empty list.
type evalFailure struct {
	ID    string `json:"id"`
	Error string `json:"error"`
}

// evalCompare is the paired test against another run.
type evalCompare struct {
	Run     string                 `json:"run"`
	Missing int                    `json:"missing"` // queries the other run lacks, scored as empty
	Subsets map[string]eval.Subset `json:"subsets"`
	Metric  string                 `json:"metric"`
	Diff    float64                `json:"diff"` // mean of this run's metric minus the other's
	P       float64                `json:"p"`
	N       int                    `json:"n"`
	Draws   int                    `json:"draws"`
}

// runEval reads the queries, runs them through one engine, scores the run
// and prints the report.
func (a *app) runEval(ctx context.Context, path string, f evalFlags) error {
	qs, judged, unjudged, err := loadEval(path, f)
	if err != nil {
		return err
	}
	var other eval.Run
	if f.compare != "" {
		if other, err = readRunFile(f.compare); err != nil {
			return err
		}
	}
	var r evalRun
	err = a.withEngine(ctx, f.noSync, nil, func(e backend) error {
		if !f.noSync {
			rep, err := e.Sync(ctx, false)
			if err != nil {
				return fmt.Errorf("sync before eval: %w", err)
			}
			a.noteRebuild(rep)
		}
		r, err = runEvalQueries(ctx, e, qs)
		return err
	})
	if err != nil {
		return err
	}
	if f.saveRun != "" {
		if err := writeRunFile(f.saveRun, r.saved); err != nil {
			return err
		}
	}
	out, err := scoreEval(path, f, judged, unjudged, r, other)
	if err != nil {
		return err
	}
	if len(r.failed) > 0 {
		fmt.Fprintf(a.stderr, "mnemo: eval: %d of %d queries failed and score as empty lists (first: %s: %s)\n",
			len(r.failed), len(qs), r.failed[0].ID, r.failed[0].Error)
	}
	if out.Compare != nil && out.Compare.Missing > 0 {
		fmt.Fprintf(a.stderr, "mnemo: eval: %d of %d queries are missing from %s and score as empty lists\n",
			out.Compare.Missing, len(qs), f.compare)
	}
	if a.g.json {
		return writeJSON(a.stdout, out)
	}
	return writeEval(a.stdout, out)
}

// loadEval reads the queries of path and keeps those the options select
// (--scope, --exclude-category), with their judgments.
func loadEval(path string, f evalFlags) (qs []evalQuery, judged []eval.Query, unjudged int, err error) {
	in, err := os.Open(path)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("eval: %w", err)
	}
	qs, unjudged, err = readEvalQueries(in, path, f)
	in.Close()
	if err != nil {
		return nil, nil, 0, err
	}
	opt := eval.Options{Scope: f.scope, ExcludeCategory: f.exclude}
	keep := qs[:0]
	for _, q := range qs {
		if opt.Selects(q.judged) {
			keep = append(keep, q)
			judged = append(judged, q.judged)
		}
	}
	return keep, judged, unjudged, nil
}

// evalRun is what running the queries gave: the ranked paths by query,
// the latencies of those that answered, those that failed, and every
// answer as search --batch would write it (for --save-run).
type evalRun struct {
	run    eval.Run
	lat    []time.Duration
	failed []evalFailure
	saved  []batchResult
}

// runEvalQueries runs every query on e, ranking only. A query that fails
// scores as an empty list; only ctx ending stops the run.
func runEvalQueries(ctx context.Context, e backend, qs []evalQuery) (evalRun, error) {
	r := evalRun{run: eval.Run{}}
	for _, q := range qs {
		sq := q.search
		sq.NoSnippets = true // ranking only, as search --batch does
		start := time.Now()
		p, err := e.Search(ctx, sq)
		took := time.Since(start)
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
		res := batchResult{ID: q.id, Results: []batchHit{}}
		paths := []string{}
		if err != nil {
			r.failed = append(r.failed, evalFailure{q.judged.ID, oneLine(err.Error())})
			res.Error = oneLine(err.Error())
		} else {
			r.lat = append(r.lat, took)
			res.TotalCount = p.TotalCount
			for _, h := range p.Results {
				paths = append(paths, h.Path)
				res.Results = append(res.Results, batchHit{h.Path, h.URI, h.Score, h.TextScore, h.SemanticScore})
			}
		}
		r.run[q.judged.ID] = paths
		r.saved = append(r.saved, res)
	}
	return r, nil
}

// scoreEval scores the run against the judgments, and against the run
// --compare read (other, if not nil) with a paired test on --metric.
func scoreEval(path string, f evalFlags, judged []eval.Query, unjudged int, r evalRun, other eval.Run) (evalOutput, error) {
	opt := eval.Options{Scope: f.scope, ExcludeCategory: f.exclude}
	rep := eval.Evaluate(judged, r.run, opt)
	out := evalOutput{
		Queries: path, Mode: orDefault(f.search.mode, string(engine.Hybrid)), Scope: f.scope, AsOf: f.asOf,
		ExcludeCategory: orEmpty(f.exclude), Unjudged: unjudged, Failed: orEmpty(r.failed),
		Subsets: rep.Subsets, LatencyMs: eval.Summarise(r.lat),
	}
	if other != nil {
		orep := eval.Evaluate(judged, other, opt)
		diff, p, err := eval.PairedTest(rep.Values(f.metric), orep.Values(f.metric))
		if err != nil {
			return out, err
		}
		out.Compare = &evalCompare{Run: f.compare, Missing: orep.Missing, Subsets: orep.Subsets,
			Metric: f.metric, Diff: diff, P: p, N: len(rep.PerQuery), Draws: eval.Draws}
	}
	return out, nil
}

// readRunFile reads a run saved by --save-run, search --batch --json or
// any tool that writes score.py's run format.
func readRunFile(path string) (eval.Run, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--compare: %w", err)
	}
	defer f.Close()
	run, err := eval.ReadRun(f)
	if err != nil {
		return nil, usagef("--compare %s: %v", path, err)
	}
	return run, nil
}

// writeRunFile writes one search --batch --json line per query.
func writeRunFile(path string, lines []batchResult) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			return fmt.Errorf("--save-run: %w", err)
		}
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("--save-run: %w", err)
	}
	return nil
}

// writeEval prints the report as score.py prints its summary: one line for
// all queries, one per category, then latency and the comparison.
func writeEval(w io.Writer, o evalOutput) error {
	bw := bufio.NewWriter(w)
	all := o.Subsets["all"]
	fmt.Fprintf(bw, "%s: %d queries, mode %s", filepath.Base(o.Queries), all.N, o.Mode)
	if o.Scope {
		fmt.Fprint(bw, ", scoped")
	}
	if o.AsOf {
		fmt.Fprint(bw, ", as of each query's date")
	}
	if len(o.ExcludeCategory) > 0 {
		fmt.Fprintf(bw, ", excluding category %s", strings.Join(o.ExcludeCategory, ","))
	}
	if len(o.Failed) > 0 {
		fmt.Fprintf(bw, ", %d failed", len(o.Failed))
	}
	if o.Unjudged > 0 {
		fmt.Fprintf(bw, " (%d unjudged not run)", o.Unjudged)
	}
	fmt.Fprintln(bw)
	fmt.Fprintln(bw, summaryLine("all", all))
	var cats []string
	for k := range o.Subsets {
		if k != "all" {
			cats = append(cats, k)
		}
	}
	slices.Sort(cats)
	for _, k := range cats {
		fmt.Fprintln(bw, summaryLine("  "+k, o.Subsets[k]))
	}
	l := o.LatencyMs
	fmt.Fprintf(bw, "latency ms: p50 %.2f  p95 %.2f  p99 %.2f  mean %.2f  max %.2f  (%d queries, ranking only)\n",
		l.P50, l.P95, l.P99, l.Mean, l.Max, l.N)
	if c := o.Compare; c != nil {
		fmt.Fprintln(bw, summaryLine(filepath.Base(c.Run), c.Subsets["all"]))
		fmt.Fprintf(bw, "%s: this run - %s = %+.4f  (paired randomisation p = %.4f, n = %d)\n",
			c.Metric, filepath.Base(c.Run), c.Diff, c.P, c.N)
	}
	return bw.Flush()
}

// summaryLine is score.py's fmt_line.
func summaryLine(label string, s eval.Subset) string {
	parts := make([]string, len(eval.Summary))
	for i, m := range eval.Summary {
		v, _ := s.Get(m)
		parts[i] = fmt.Sprintf("%s %.3f", m, v)
	}
	return fmt.Sprintf("%-28s n=%5d  ", label, s.N) + strings.Join(parts, "  ")
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// orEmpty makes a nil list print as [] rather than null.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
