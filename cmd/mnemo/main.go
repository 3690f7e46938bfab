// Command mnemo keeps a folder of markdown memories searchable from the shell
// and serves it to agents over MCP (`mnemo serve`). Each subcommand lives in
// the file named after it; `mnemo --help` lists them. When a `mnemo serve`
// holds the index, the other subcommands hand their request to it over its
// socket (handoff.go), so every process sees one fresh index.
package main

import (
	"context"
	"io"
	"log"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// Bleve's index code logs to the standard logger ("unable to load
	// snapshot, … continuing") as it falls back from a damaged snapshot;
	// the engine finds and reports that damage itself, in one line.
	log.SetOutput(io.Discard)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
