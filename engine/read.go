package engine

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Resolve turns a memory identifier — a memory:// URI, a path relative to
// the memory folder (with or without .md), or a title — into the relative
// path of an existing memory. Identifiers that leave the memory folder fail
// with ErrOutsideRoot; unknown ones with ErrNotFound.
func (e *Engine) Resolve(id string) (string, error) {
	id = strings.TrimSpace(id)
	if id == "" {
		return "", fmt.Errorf("memory identifier is required: %w", ErrNotFound)
	}
	isURI := strings.HasPrefix(strings.ToLower(id), uriScheme)
	p := id
	if isURI {
		p = id[len(uriScheme):]
	}
	rel, err := cleanRel(p)
	if err != nil {
		return "", err
	}
	if rel != "" && !tooLongForAPath(rel) { // a very long id can still be a title
		if !strings.EqualFold(filepath.Ext(rel), ".md") {
			rel += ".md"
		}
		if err := resolveInside(e.root, rel); err != nil {
			return "", err
		}
		if fi, err := os.Stat(filepath.Join(e.root, filepath.FromSlash(rel))); err == nil && fi.Mode().IsRegular() {
			return rel, nil
		}
	}
	if isURI {
		return "", fmt.Errorf("%s: %w", id, ErrNotFound)
	}
	// A title: case-insensitive, exact. Else a file name without its
	// folder ("use-bbolt" for decisions/use-bbolt.md), which a memory with
	// a title other than its file name is also known by.
	e.mu.RLock()
	var matches []string
	for p, r := range e.files {
		if strings.EqualFold(r.Title, id) {
			matches = append(matches, p)
		}
	}
	if len(matches) == 0 && !strings.Contains(id, "/") {
		stem := strings.TrimSuffix(strings.ToLower(id), ".md")
		for p := range e.files {
			if strings.ToLower(strings.TrimSuffix(path.Base(p), path.Ext(p))) == stem {
				matches = append(matches, p)
			}
		}
	}
	e.mu.RUnlock()
	switch len(matches) {
	case 0:
		return "", fmt.Errorf("%q: no memory has this path, title or file name: %w", id, ErrNotFound)
	case 1:
		return matches[0], nil
	default:
		sort.Strings(matches)
		return "", fmt.Errorf("%q names %d memories (%s); use a path: %w", id, len(matches), strings.Join(matches, ", "), ErrNotFound)
	}
}

// Read returns one memory and records the read: its recency clock restarts,
// and the boost survives restarts, edits and moves.
func (e *Engine) Read(ctx context.Context, id string) (Memory, error) {
	rel, err := e.Resolve(id)
	if err != nil {
		return Memory{}, err
	}
	if fi, err := os.Stat(filepath.Join(e.root, filepath.FromSlash(rel))); err == nil && fi.Size() > e.cfg.MaxFileBytes {
		return Memory{}, fmt.Errorf("read %s: %d bytes, over the %d-byte limit", rel, fi.Size(), e.cfg.MaxFileBytes)
	}
	m, err := e.memoryAt(rel)
	if err != nil {
		return Memory{}, err
	}
	now := time.Now().UTC()
	m.LastRead = now
	if e.cfg.ReadOnly {
		return m, nil
	}
	if err := e.st.recordRead(rel, now); err != nil {
		return m, fmt.Errorf("record read of %s: %w", rel, err)
	}
	e.mu.Lock()
	e.reads[rel] = now
	e.mu.Unlock()
	return m, nil
}

func sortSkips(s []Skip) { sort.Slice(s, func(i, j int) bool { return s[i].Path < s[j].Path }) }

func sortWarnings(w []Warning) {
	sort.SliceStable(w, func(i, j int) bool { return w[i].Path < w[j].Path })
}

// tooLongForAPath reports a path no file system here could hold (a name over
// 255 bytes, or 4,096 in all), so it is simply not found rather than an
// operating-system error.
func tooLongForAPath(rel string) bool {
	if len(rel) > 4096 {
		return true
	}
	for _, part := range strings.Split(rel, "/") {
		if len(part)+len(".md") > 255 {
			return true
		}
	}
	return false
}
