package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"mnemo/engine"
)

func (a *app) statusCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Describe the index",
		Long: `Print the memory and index folders, the number of files and chunks, the
index sizes, the embedder, the last sync, and the files skipped or indexed
with warnings (the first 20 of each in text; all of them with --json).
The index is opened read-only; while mnemo serve holds it, the server answers.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("status takes no arguments (got %q)", args[0])
			}
			err := a.withEngine(cmd.Context(), true, nil, func(e backend) error {
				s, err := e.Status(cmd.Context())
				if err != nil {
					return err
				}
				if a.g.json {
					if s.Skipped == nil {
						s.Skipped = []engine.Skip{}
					}
					if s.Warnings == nil {
						s.Warnings = []engine.Warning{}
					}
					return writeJSON(a.stdout, s)
				}
				return writeStatus(a.stdout, s, time.Now())
			})
			if errors.Is(err, engine.ErrIndexNotReady) {
				return a.unbuiltStatus()
			}
			return err
		},
	}
}

// unbuiltStatus answers status before any command built the index (a
// fresh machine): nothing is indexed yet, which is a state, not an error.
func (a *app) unbuiltStatus() error {
	cfg, err := buildConfig(a.g, os.LookupEnv)
	if err != nil {
		return err
	}
	s := engine.Status{MemoryDir: cfg.MemoryDir, IndexDir: cfg.IndexDir, ReadOnly: true,
		Skipped: []engine.Skip{}, Warnings: []engine.Warning{}, Graph: engine.GraphStatus{Communities: -1}}
	if a.g.json {
		return writeJSON(a.stdout, s)
	}
	if err := writeStatus(a.stdout, s, time.Now()); err != nil {
		return err
	}
	_, err = fmt.Fprintln(a.stdout, "The index is not built yet: mnemo sync builds it (so do mnemo search and mnemo serve).")
	return err
}
