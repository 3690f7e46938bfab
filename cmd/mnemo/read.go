package main

import (
	"strings"

	"github.com/spf13/cobra"
)

func (a *app) readCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "read ID",
		Short: "Print one memory",
		Long: `Print one memory, found by memory:// URI, path relative to the memory folder,
or title (several arguments are joined with spaces). The read is recorded:
it counts as use for recency decay.`,
		Example: `  mnemo read memory://decisions/use-bbolt
  mnemo read decisions/use-bbolt.md
  mnemo read --json Use bbolt`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("read needs a memory URI, path or title")
			}
			id := strings.Join(args, " ")
			return a.withEngine(cmd.Context(), false, nil, func(e backend) error {
				m, err := e.Read(cmd.Context(), id)
				if err != nil {
					return err
				}
				if a.g.json {
					return writeJSON(a.stdout, m)
				}
				return writeMemory(a.stdout, m)
			})
		},
	}
}
