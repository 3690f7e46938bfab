package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"mnemo/engine"
	"mnemo/mcp"
)

// graphCmd is `mnemo graph`: the concept graph, as the MCP tools
// BuildContext, Visualize, FindSimilarConcepts and ExtractConceptsFromFile
// see it. Like search, each subcommand syncs first unless --no-sync, and
// goes through a running mnemo serve when one holds the index.
func (a *app) graphCmd() *cobra.Command {
	var noSync bool
	cmd := &cobra.Command{
		Use:   "graph",
		Short: "Explore the concept graph built from [[WikiLinks]]",
		Long: `Explore the concept graph: every [[WikiLink]] target (outside code) is a
concept, normalised (case, spaces, underscores and slashes do not matter), and
two concepts are related by the memories that link to both.

  context CONCEPT   what surrounds a concept (as the BuildContext tool)
  show CONCEPT      a Mermaid diagram of its neighbourhood (Visualize)
  similar CONCEPT   concepts alike in meaning (FindSimilarConcepts)
  concepts [ID]     every concept with its counts, or those of one memory

Communities use Louvain at resolution $` + EnvLouvainGamma + ` (default 1).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("graph needs a subcommand: context, show, similar or concepts; see mnemo graph --help")
			}
			return usagef("unknown graph subcommand %q (want context, show, similar or concepts)", args[0])
		},
	}
	cmd.PersistentFlags().BoolVar(&noSync, "no-sync", false, "use the index as it is, without syncing first")
	cmd.AddCommand(a.graphContextCmd(&noSync), a.graphShowCmd(&noSync), a.graphSimilarCmd(&noSync), a.graphConceptsCmd(&noSync))
	return cmd
}

// conceptArg is the concept a graph subcommand names: its arguments
// joined, so that an unquoted name of several words works.
func conceptArg(args []string) (string, error) {
	name := strings.TrimSpace(strings.Join(args, " "))
	if name == "" {
		return "", usagef("a concept name is required")
	}
	return name, nil
}

// graphContextCmd is `mnemo graph context`, as the BuildContext tool.
func (a *app) graphContextCmd(noSync *bool) *cobra.Command {
	var depth, maxN int
	var content bool
	cmd := &cobra.Command{
		Use:     "context CONCEPT",
		Short:   "What surrounds a concept: direct and expanded relations, community",
		Example: `  mnemo graph context "connection pooling" --depth 3 --max 10`,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := conceptArg(args)
			if err != nil {
				return err
			}
			return a.withGraph(cmd.Context(), *noSync, func(e backend) error {
				c, err := e.BuildContext(cmd.Context(), engine.ContextQuery{Concept: name, Depth: depth, MaxEntities: maxN, IncludeContent: content})
				if err != nil {
					return err
				}
				if a.g.json {
					return writeJSON(a.stdout, c)
				}
				_, err = fmt.Fprintln(a.stdout, mcp.ContextText(&c))
				return err
			})
		},
	}
	cmd.Flags().IntVar(&depth, "depth", engine.DefaultContextDepth, fmt.Sprintf("steps out to walk, 1 to %d", engine.MaxContextDepth))
	cmd.Flags().IntVar(&maxN, "max", engine.DefaultMaxEntities, fmt.Sprintf("direct relations, and expanded ones, at most, 1 to %d", engine.MaxEntities))
	cmd.Flags().BoolVar(&content, "content", false, "add a preview of a memory to each relation")
	return cmd
}

// graphShowCmd is `mnemo graph show`, as the Visualize tool.
func (a *app) graphShowCmd(noSync *bool) *cobra.Command {
	var depth, maxN int
	cmd := &cobra.Command{
		Use:   "show CONCEPT",
		Short: "Print a Mermaid diagram of a concept's neighbourhood",
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := conceptArg(args)
			if err != nil {
				return err
			}
			return a.withGraph(cmd.Context(), *noSync, func(e backend) error {
				d, err := e.Visualize(cmd.Context(), name, depth, maxN)
				if err != nil {
					return err
				}
				if a.g.json {
					return writeJSON(a.stdout, d)
				}
				_, err = fmt.Fprint(a.stdout, d.Mermaid)
				return err
			})
		},
	}
	cmd.Flags().IntVar(&depth, "depth", engine.DefaultContextDepth, fmt.Sprintf("steps out to draw, 1 to %d", engine.MaxContextDepth))
	cmd.Flags().IntVar(&maxN, "max", engine.DefaultVisualNodes, fmt.Sprintf("concepts in the diagram at most, 1 to %d", engine.MaxVisualNodes))
	return cmd
}

// graphSimilarCmd is `mnemo graph similar`, as the FindSimilarConcepts tool.
func (a *app) graphSimilarCmd(noSync *bool) *cobra.Command {
	var maxN int
	cmd := &cobra.Command{
		Use:   "similar CONCEPT",
		Short: "Concepts closest in meaning (cosine of concept vectors, 0 to 1)",
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := conceptArg(args)
			if err != nil {
				return err
			}
			return a.withGraph(cmd.Context(), *noSync, func(e backend) error {
				s, err := e.FindSimilarConcepts(cmd.Context(), name, maxN)
				if err != nil {
					return err
				}
				if a.g.json {
					return writeJSON(a.stdout, s)
				}
				_, err = fmt.Fprintln(a.stdout, mcp.SimilarText(&s))
				return err
			})
		},
	}
	cmd.Flags().IntVar(&maxN, "max", engine.DefaultSimilar, fmt.Sprintf("results at most, 1 to %d", engine.MaxSimilar))
	return cmd
}

// graphConceptsCmd is `mnemo graph concepts`: every concept, or (with an
// ID) those of one memory, as the ExtractConceptsFromFile tool.
func (a *app) graphConceptsCmd(noSync *bool) *cobra.Command {
	return &cobra.Command{
		Use:   "concepts [ID]",
		Short: "List every concept with its mentions and files, or the concepts of one memory",
		RunE: func(cmd *cobra.Command, args []string) error {
			id := strings.TrimSpace(strings.Join(args, " "))
			return a.withGraph(cmd.Context(), *noSync, func(e backend) error {
				if id != "" {
					return a.fileConcepts(cmd.Context(), e, id)
				}
				return a.allConcepts(cmd.Context(), e)
			})
		},
	}
}

// fileConcepts prints the concepts one memory links to.
func (a *app) fileConcepts(ctx context.Context, e backend, id string) error {
	fc, err := e.FileConcepts(ctx, id)
	if err != nil {
		return err
	}
	if a.g.json {
		return writeJSON(a.stdout, fc)
	}
	_, err = fmt.Fprintln(a.stdout, mcp.FileConceptsText(&fc))
	return err
}

// allConcepts prints every concept with its mentions and files.
func (a *app) allConcepts(ctx context.Context, e backend) error {
	cs, err := e.Concepts(ctx)
	if err != nil {
		return err
	}
	if cs == nil {
		cs = []engine.ConceptInfo{}
	}
	if a.g.json {
		return writeJSON(a.stdout, struct {
			Concepts []engine.ConceptInfo `json:"concepts"`
		}{cs})
	}
	var b strings.Builder
	fmt.Fprintln(&b, plural(len(cs), "concept", "concepts"))
	for _, c := range cs {
		fmt.Fprintf(&b, "%6d  %5d  %s\n", c.Mentions, c.Files, c.Name)
	}
	_, err = fmt.Fprint(a.stdout, b.String())
	return err
}

// withGraph runs fn on the index after an incremental sync (unless
// noSync, which opens it read-only), as search does.
func (a *app) withGraph(ctx context.Context, noSync bool, fn func(backend) error) error {
	return a.withEngine(ctx, noSync, nil, func(e backend) error {
		if !noSync {
			if _, err := e.Sync(ctx, false); err != nil {
				return fmt.Errorf("sync before graph query: %w", err)
			}
		}
		return fn(e)
	})
}
