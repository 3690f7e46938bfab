package engine

import (
	"context"
	"time"
)

// Searcher is the memory corpus as the front ends that do not change
// memories reach it: search, read, list, status, sync and the concept
// graph. *Engine implements it, and so does a client of the serve that
// holds the index (cmd/mnemo/remote), so a command or the web page need
// not know which it has.
type Searcher interface {
	Search(ctx context.Context, q Query) (Page, error)
	Read(ctx context.Context, id string) (Memory, error)
	Resolve(id string) (string, error)
	List(ctx context.Context, folder string) (Listing, error)
	Backlinks(ctx context.Context, id string) ([]string, error)
	Status(ctx context.Context) (Status, error)
	Sync(ctx context.Context, full bool) (Report, error)
	BuildContext(ctx context.Context, q ContextQuery) (ConceptContext, error)
	Visualize(ctx context.Context, concept string, depth, maxNodes int) (Diagram, error)
	FindSimilarConcepts(ctx context.Context, concept string, maxResults int) (Similar, error)
	Concepts(ctx context.Context) ([]ConceptInfo, error)
	FileConcepts(ctx context.Context, id string) (FileConcepts, error)
}

// Memories is the memory corpus as the MCP tools use it: Searcher, plus
// recent activity and the writes. *Engine implements it.
type Memories interface {
	Searcher
	Peek(ctx context.Context, id string) (Memory, error)
	RecentWhere(ctx context.Context, limit int, since time.Duration, keep func(path string) bool) ([]Activity, error)
	Write(ctx context.Context, req WriteRequest) (Memory, error)
	Edit(ctx context.Context, req EditRequest) (Memory, error)
	Delete(ctx context.Context, id string) error
	Move(ctx context.Context, id, newPath string) (Memory, error)
}

var _ Memories = (*Engine)(nil)
