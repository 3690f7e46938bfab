package engine

import (
	"context"
	"slices"

	"mnemo/markdown"
)

// Backlinks lists the memories that link to the memory id names (by its
// note concept or one of its aliases), sorted by path, without the memory
// itself: what a reader of a note wants beside it, "who points here". It
// reads the concept graph as it is; the memory is not marked as read.
func (e *Engine) Backlinks(ctx context.Context, id string) ([]string, error) {
	rel, err := e.Resolve(id)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	out := []string{}
	if e.gs.g == nil {
		return out, nil
	}
	concept := e.gs.g.Resolve(markdown.NoteConcept(rel, e.flavor))
	names := append([]string{concept}, e.gs.g.Aliases(concept)...)
	for _, c := range names {
		for _, p := range e.gs.g.Postings(c) {
			if p.Path != rel && !slices.Contains(out, p.Path) {
				out = append(out, p.Path)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}
