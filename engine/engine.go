package engine

import (
	"context"
	"errors"
)

// Engine is an open memory index. Safe for concurrent use.
type Engine struct{ cfg Config }

var errTODO = errors.New("engine: under construction")

// Open opens (creating if needed) the index for cfg.
func Open(ctx context.Context, cfg Config) (*Engine, error) { return nil, errTODO }

// Close flushes state and releases the index.
func (e *Engine) Close() error { return errTODO }

// Sync brings the indexes in step with the memory folder; full rebuilds them.
func (e *Engine) Sync(ctx context.Context, full bool) (Report, error) { return Report{}, errTODO }

// Search answers q.
func (e *Engine) Search(ctx context.Context, q Query) (Page, error) { return Page{}, errTODO }

// Read returns one memory by memory:// URI, relative path or title, and records the read.
func (e *Engine) Read(ctx context.Context, id string) (Memory, error) { return Memory{}, errTODO }

// Status describes the engine.
func (e *Engine) Status(ctx context.Context) (Status, error) { return Status{}, errTODO }
