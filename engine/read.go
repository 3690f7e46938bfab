package engine

import (
	"context"
	"fmt"
	"mnemo/engine/vault"
	"mnemo/markdown"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Resolve turns a memory identifier — a memory:// URI, a path relative to
// the memory folder (with or without .md), or a title — into the relative
// path of an existing memory file: its real path, if the identifier goes
// through a symlinked folder inside the memory folder. Identifiers that
// leave the memory folder fail with ErrOutsideRoot, ones that name a link,
// FIFO, device or socket with ErrNotRegular, unknown ones with ErrNotFound.
// Paths and titles match in either Unicode normal form (NFC or NFD).
func (e *Engine) Resolve(id string) (string, error) {
	id = strings.TrimSpace(id)
	if id == "" {
		return "", fmt.Errorf("memory identifier is required: %w", ErrNotFound)
	}
	isURI := strings.HasPrefix(strings.ToLower(id), vault.URIScheme)
	p := id
	if isURI {
		p = id[len(vault.URIScheme):]
	}
	rel, err := vault.CleanRel(p)
	if err != nil {
		return "", err
	}
	if rel != "" && !tooLongForAPath(rel) { // a very long id can still be a title
		found, err := e.resolvePath(rel)
		if err != nil || found != "" {
			return found, err
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
		if sameTitle(r.Title, id) {
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
	if len(matches) == 0 && e.gs.g != nil {
		// An alias (frontmatter aliases, Logseq's alias::) names its memory.
		matches = e.gs.g.Declaring(markdown.NormalizeConcept(id))
	}
	e.mu.RUnlock()
	switch len(matches) {
	case 0:
		return "", fmt.Errorf("%q: no memory has this path, title, file name or alias: %w", id, ErrNotFound)
	case 1:
		return matches[0], nil
	default:
		sort.Strings(matches)
		return "", fmt.Errorf("%q names %d memories (%s); use a path: %w", id, len(matches), strings.Join(matches, ", "), ErrNotFound)
	}
}

// resolvePath finds the memory file at rel (".md" added unless it has a
// memory extension), as written or in NFC: its real relative path, or ""
// when there is none.
func (e *Engine) resolvePath(rel string) (string, error) {
	if !vault.IsMemoryName(rel) {
		rel += ".md"
	}
	r, err := e.vault.OpenRoot()
	if err != nil {
		return "", err
	}
	defer r.Close()
	for _, cand := range []string{rel, vault.NFC(rel)} {
		real, err := vault.RealRel(e.root, e.vault.Spelled(cand))
		if err != nil {
			return "", err
		}
		fi, err := r.Lstat(filepath.FromSlash(real))
		if err != nil {
			continue
		}
		if !fi.Mode().IsRegular() {
			return "", e.vault.NotRegular(cand, fi.Mode())
		}
		return real, nil
	}
	return "", nil
}

// Read returns one memory and records the read: its recency clock restarts,
// and the boost survives restarts, edits and moves.
func (e *Engine) Read(ctx context.Context, id string) (Memory, error) {
	rel, err := e.Resolve(id)
	if err != nil {
		return Memory{}, err
	}
	m, err := e.memoryAt(rel)
	if err != nil {
		return Memory{}, err
	}
	now := e.now().UTC()
	m.LastRead = now
	if e.cfg.ReadOnly {
		return m, nil
	}
	if err := e.recordRead(rel, now); err != nil {
		return m, err
	}
	return m, nil
}

// Peek returns one memory as Read does without recording the read: for
// listings that show content (RecentActivity's includeContent), which
// must not change what they list.
func (e *Engine) Peek(ctx context.Context, id string) (Memory, error) {
	rel, err := e.Resolve(id)
	if err != nil {
		return Memory{}, err
	}
	if err := ctx.Err(); err != nil {
		return Memory{}, err
	}
	return e.memoryAt(rel)
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

// memoryAt reads rel as Read does, without recording a read.
func (e *Engine) memoryAt(rel string) (Memory, error) {
	data, fi, err := e.vault.Read(rel)
	if err != nil {
		return Memory{}, fmt.Errorf("read: %w", err)
	}
	doc, err := markdown.Parse(rel, data, e.parseOptions())
	if err != nil {
		return Memory{}, fmt.Errorf("read %s: %w", rel, err)
	}
	m := Memory{
		URI: URI(rel), Path: rel, Title: doc.Title, Content: doc.Body,
		Created: doc.Created, Modified: doc.Modified, Tags: nonNil(doc.Tags), Links: nonNil(doc.Links),
		Meta: doc.Meta, Checksum: vault.Hash(data),
	}
	if m.Modified.IsZero() {
		m.Modified = fi.ModTime().UTC()
	}
	e.mu.RLock()
	m.LastRead = e.reads[rel]
	e.mu.RUnlock()
	return m, nil
}

// URI returns the memory:// URI of a relative memory path: the path
// without ".md" (a .markdown file keeps its extension).
func URI(rel string) string { return vault.URI(rel) }

// sameTitle compares titles as Write and Resolve do: case-insensitively,
// after NFC normalisation.
func sameTitle(a, b string) bool { return strings.EqualFold(vault.NFC(a), vault.NFC(b)) }
