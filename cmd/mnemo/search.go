package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"mnemo/engine"
)

// searchFlags are the Query fields as typed on the command line, before
// parsing. With --batch and in eval they are the defaults a line's own
// fields (args.Query's JSON: the SearchMemories argument names) override.
type searchFlags struct {
	mode     string
	page     int
	pageSize int
	folder   string
	tags     []string
	from, to string
	minScore float64
	sort     string
	now      string
}

func (a *app) searchCmd() *cobra.Command {
	var (
		f      searchFlags
		batch  string
		noSync bool
	)
	cmd := &cobra.Command{
		Use:   "search [flags] QUERY...",
		Short: "Search the memories",
		Long: `Search the memories for QUERY (the arguments joined with spaces).

An incremental sync runs first, so results reflect the folder as it is now;
--no-sync skips it and opens the index read-only.

--batch FILE reads one JSON query per line (FILE "-" is stdin) and writes one
JSON result line per query, in order, with one engine for the whole batch:
  in:  {"id", "query", optional "mode", "folder", "tags", "from", "to", "now",
        "page", "pageSize", "minScore", "sort"} — the SearchMemories argument
        names, plus "now"; "page_size" and "min_score" are accepted too
  out: {"id", "totalCount", "results": [{"path", "uri", "score", "textScore", "semanticScore"}]}
A query that fails gives {"id", "error", "totalCount": 0, "results": []} and the
batch goes on; the number of failures is reported on stderr. Flags given with
--batch are the defaults for fields a line leaves out.

Dates are RFC3339 (2024-05-01T09:30:00Z) or YYYY-MM-DD (UTC; as --to it means
the end of that day).`,
		Example: `  mnemo search bbolt transactions
  mnemo search --mode fulltext --tag decision,db --from 2024-01-01 "write lock"
  mnemo search --no-sync --batch queries.jsonl > run.jsonl`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if batch != "" {
				if len(args) > 0 {
					return usagef("--batch takes its queries from the file, not from arguments (got %q)", strings.Join(args, " "))
				}
				if err := explicitPages(cmd); err != nil {
					return err
				}
				return a.runBatch(cmd.Context(), batch, f, noSync)
			}
			if len(args) == 0 {
				return usagef("search needs a query (or --batch FILE); see mnemo search --help")
			}
			if err := explicitPages(cmd); err != nil {
				return err
			}
			q, err := buildQuery(strings.Join(args, " "), f)
			if err != nil {
				return err
			}
			if _, err := q.Validate(); err != nil {
				return err // a usage error, before any index is opened
			}
			return a.search(cmd.Context(), q, noSync)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.mode, "mode", "m", "", "hybrid, semantic or fulltext (default hybrid)")
	fl.IntVarP(&f.page, "page", "p", 0, "page number, from 1 (default 1)")
	fl.IntVarP(&f.pageSize, "page-size", "n", 0, "results per page, 1 to 200 (default 10)")
	fl.StringVar(&f.folder, "folder", "", "only memories under this folder of the memory folder")
	fl.StringSliceVarP(&f.tags, "tag", "t", nil, "only memories with every one of these tags: --tag a,b (or --tag a --tag b) means a AND b")
	fl.StringVar(&f.from, "from", "", "only memories created at or after this date")
	fl.StringVar(&f.to, "to", "", "only memories created at or before this date")
	fl.Float64Var(&f.minScore, "min-score", 0, "drop results scoring below this (scores are 0 to 1)")
	fl.StringVar(&f.sort, "sort", "", "relevance or recency (default relevance)")
	fl.StringVar(&f.now, "now", "", "the clock for recency decay (default the current time)")
	fl.StringVar(&batch, "batch", "", "run the JSONL queries in FILE (\"-\" for stdin); see above")
	fl.BoolVar(&noSync, "no-sync", false, "search the index as it is, without syncing first")
	return cmd
}

func (a *app) search(ctx context.Context, q engine.Query, noSync bool) error {
	return a.withEngine(ctx, noSync, nil, func(e backend) error {
		if !noSync {
			rep, err := e.Sync(ctx, false)
			if err != nil {
				return fmt.Errorf("sync before search: %w", err)
			}
			a.noteRebuild(rep)
		}
		p, err := e.Search(ctx, q)
		if err != nil {
			return err
		}
		if a.g.json {
			return writeJSON(a.stdout, normalizePage(p))
		}
		return writePage(a.stdout, p, strings.EqualFold(string(q.Sort), string(engine.ByRecency)))
	})
}

// explicitPages refuses --page 0 and --page-size 0: the engine reads 0 as
// "the default", which a person who typed 0 did not mean.
func explicitPages(cmd *cobra.Command) error {
	for _, name := range []string{"page", "page-size"} {
		if fl := cmd.Flags().Lookup(name); fl != nil && fl.Changed && fl.Value.String() == "0" {
			return usagef("--%s 0: pages and page sizes count from 1", name)
		}
	}
	return nil
}

// noteRebuild says on stderr, in one line, that the sync a command ran
// first had to rebuild the index (damaged, older, new embedder): the
// command took longer than usual, and the index was not what it should be.
func (a *app) noteRebuild(rep engine.Report) {
	if rep.Rebuilt != "" {
		fmt.Fprintf(a.stderr, "mnemo: rebuilt the index: %s\n", oneLine(rep.Rebuilt))
	}
}

// buildQuery turns the search flags and the query text into an engine.Query.
// It parses what only the command line can get wrong (dates, tag lists); the
// engine validates the rest (mode, sort, page bounds, empty queries).
func buildQuery(text string, f searchFlags) (engine.Query, error) {
	q := engine.Query{
		Text:     text,
		Mode:     engine.Mode(strings.ToLower(strings.TrimSpace(f.mode))),
		Page:     f.page,
		PageSize: f.pageSize,
		Folder:   strings.TrimSpace(f.folder),
		Tags:     splitTags(f.tags),
		MinScore: f.minScore,
		Sort:     engine.Sort(strings.ToLower(strings.TrimSpace(f.sort))),
	}
	var err error
	if q.From, err = engine.ParseDate("from", f.from, false); err != nil {
		return engine.Query{}, usageError{err}
	}
	if q.To, err = engine.ParseDate("to", f.to, true); err != nil {
		return engine.Query{}, usageError{err}
	}
	if q.Now, err = engine.ParseDate("now", f.now, false); err != nil {
		return engine.Query{}, usageError{err}
	}
	if !q.From.IsZero() && !q.To.IsZero() && q.From.After(q.To) {
		return engine.Query{}, usagef("from %s is after to %s", f.from, f.to)
	}
	return q, nil
}

// splitTags accepts tags repeated and comma-separated, trimmed, empties dropped.
func splitTags(in []string) []string {
	var out []string
	for _, s := range in {
		for _, t := range strings.Split(s, ",") {
			if t = strings.TrimSpace(t); t != "" {
				out = append(out, t)
			}
		}
	}
	return out
}
