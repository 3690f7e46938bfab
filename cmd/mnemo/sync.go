package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

func (a *app) syncCmd() *cobra.Command {
	var full bool
	cmd := &cobra.Command{
		Use:   "sync [--full]",
		Short: "Bring the index in step with the memory folder",
		Long: `Index new and changed memories and drop deleted ones. Unchanged files are
skipped by checksum; --full rebuilds the index from scratch.

On a terminal a progress bar runs on stderr; the summary line goes to stdout,
or the full report with --json.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("sync takes no arguments (got %q)", args[0])
			}
			bar := newProgress(a.stderr, "indexing")
			start := time.Now()
			return a.withEngine(cmd.Context(), false, bar.update, func(e backend) error {
				r, err := e.Sync(cmd.Context(), full)
				bar.done()
				if err != nil {
					return err
				}
				if a.g.json {
					return writeJSON(a.stdout, normalizeReport(r))
				}
				_, err = fmt.Fprintln(a.stdout, syncSummary(r, time.Since(start)))
				return err
			})
		},
	}
	cmd.Flags().BoolVar(&full, "full", false, "rebuild the index from scratch")
	return cmd
}

// progress draws a progress bar on a terminal and nothing elsewhere. Its
// update method fits engine.Config.Progress and is safe for concurrent use.
type progress struct {
	mu   sync.Mutex
	w    io.Writer // nil: not a terminal, draw nothing
	desc string
	bar  *progressbar.ProgressBar
}

func newProgress(w io.Writer, desc string) *progress {
	if !isTerminal(w) {
		return &progress{}
	}
	return &progress{w: w, desc: desc}
}

func (p *progress) update(done, total int) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar == nil {
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription(p.desc),
			progressbar.OptionSetItsString("files"),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	}
	if total != p.bar.GetMax() {
		p.bar.ChangeMax(total)
	}
	_ = p.bar.Set(done)
}

// done removes the bar, so what follows starts on a clean line.
func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		_ = p.bar.Clear()
		p.bar = nil
	}
}

// isTerminal reports whether w is a terminal; only then is a bar drawn.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
