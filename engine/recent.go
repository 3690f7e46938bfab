package engine

import (
	"context"
	"fmt"
	"sort"
	"time"
)

// Activity is one recently touched memory, as Recent returns it.
type Activity struct {
	URI      string    `json:"uri"`
	Path     string    `json:"path"`
	Title    string    `json:"title"`
	Event    string    `json:"event"` // "modified" or "read", whichever is later
	At       time.Time `json:"at"`
	Modified time.Time `json:"modified"`
	LastRead time.Time `json:"lastRead,omitzero"`
}

// DefaultRecentLimit is how many memories Recent lists when asked for 0.
const DefaultRecentLimit = 20

// Recent lists the memories modified or read most recently, newest first:
// at most limit of them (0 means DefaultRecentLimit), and only those touched within since
// of now (0 means no bound). "Modified" is the frontmatter date if the file
// has one, else the file's modification time.
func (e *Engine) Recent(ctx context.Context, limit int, since time.Duration) ([]Activity, error) {
	return e.RecentWhere(ctx, limit, since, nil)
}

// RecentWhere is Recent over the memories whose relative path keep accepts
// (nil accepts all), so that limit counts only those: a front end's
// "only thinking sessions" is a filter here, not a cut of the first page.
func (e *Engine) RecentWhere(ctx context.Context, limit int, since time.Duration, keep func(path string) bool) ([]Activity, error) {
	if limit < 0 {
		return nil, fmt.Errorf("limit %d: must be 0 (default) or more: %w", limit, ErrInvalid)
	}
	if since < 0 {
		return nil, fmt.Errorf("since %s: must not be negative: %w", since, ErrInvalid)
	}
	if limit == 0 {
		limit = DefaultRecentLimit
	}
	var cutoff time.Time
	if since > 0 {
		cutoff = e.now().Add(-since)
	}
	e.mu.RLock()
	out := make([]Activity, 0, min(limit, len(e.files)))
	for p, r := range e.files {
		if keep != nil && !keep(p) {
			continue
		}
		a := Activity{URI: URI(p), Path: p, Title: r.Title, Modified: r.Modified, LastRead: e.reads[p]}
		if a.Modified.IsZero() {
			a.Modified = r.mtime()
		}
		a.Event, a.At = "modified", a.Modified
		if a.LastRead.After(a.At) {
			a.Event, a.At = "read", a.LastRead
		}
		if !cutoff.IsZero() && a.At.Before(cutoff) {
			continue
		}
		out = append(out, a)
	}
	e.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		if !out[i].At.Equal(out[j].At) {
			return out[i].At.After(out[j].At)
		}
		return out[i].Path < out[j].Path
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out, ctx.Err()
}
