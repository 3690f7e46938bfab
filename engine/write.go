package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"mnemo/engine/vault"
	"mnemo/markdown"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// Errors of the write operations, in addition to those in api.go.
var (
	ErrConflict = errors.New("memory changed since it was read (checksum mismatch); read it again and retry")
	ErrExists   = vault.ErrExists
	ErrInvalid  = vault.ErrInvalid
	ErrNoMatch  = errors.New("edit target not found as expected")
)

// Limits on what a write may name. File names are capped well below the
// 255 bytes most file systems allow, leaving room for "-NN.md".
const (
	maxTitleBytes = 512
	maxSlugBytes  = 96
	MaxTags       = 64 // the front ends state it in their schemas
	maxTagBytes   = 128
	maxNameBytes  = 255
)

// lockWrites takes the engine's write lock, which serialises every
// read-modify-write of memory files, so a checksum check and the write that
// follows it cannot interleave with another edit. It covers the files only:
// the caller releases it (unlock may be called more than once) before the
// index is brought up to date, so that writes arriving together share one
// index commit (SyncPaths). An engine closed meanwhile refuses with
// ErrClosed: its index may already be another writer's.
func (e *Engine) lockWrites() (unlock func(), err error) {
	e.writeMu.Lock()
	if e.closed.Load() {
		e.writeMu.Unlock()
		return nil, ErrClosed
	}
	var once sync.Once
	return func() { once.Do(e.writeMu.Unlock) }, nil
}

// WriteRequest asks Write to create a memory.
type WriteRequest struct {
	Title   string   // required; one line; the file name is made from it
	Content string   // the markdown body, without frontmatter
	Folder  string   // relative to the memory folder; "" is the root; created if missing
	Tags    []string // stored lowercased, without '#', deduplicated
	// Overwrite replaces the memory with the same title in Folder, keeping
	// its created date and read time. Without it Write fails with ErrExists.
	Overwrite bool
}

// EditOp names an edit.
type EditOp string

// The edits Edit applies to a memory's body. The frontmatter is never
// edited except for "modified".
const (
	Append         EditOp = "append"          // Content after the body, as a new paragraph
	Prepend        EditOp = "prepend"         // Content before the body, as a new paragraph
	FindReplace    EditOp = "find_replace"    // every occurrence of Find becomes Content
	ReplaceSection EditOp = "replace_section" // the body under heading Section becomes Content
)

// EditRequest asks Edit to change one memory.
type EditRequest struct {
	ID      string // memory:// URI, relative path or title (see Resolve)
	Op      EditOp
	Content string
	// Find is the exact text find_replace looks for. ExpectedCount, if
	// positive, is how many occurrences there must be; 0 means "at least one".
	Find          string
	ExpectedCount int
	// Section is the heading replace_section replaces the body of, matched
	// case-insensitively on its text; a leading "##" also pins its level.
	Section string
	// Checksum, if set, is the SHA-256 (hex) of the file as the caller last
	// read it; Edit fails with ErrConflict if the file has changed since.
	Checksum string
}

// Write creates a memory from req and indexes it before returning, so the
// next search finds it. The file is named after the title (see slug) in
// req.Folder; a different memory that already has that file name pushes the
// new one to "-2", "-3", …. A memory with the same title in the same folder
// is the same memory: Write refuses it with ErrExists unless req.Overwrite.
func (e *Engine) Write(ctx context.Context, req WriteRequest) (Memory, error) {
	if e.cfg.ReadOnly {
		return Memory{}, ErrReadOnly
	}
	title, tags, folder, err := e.writeArgs(req)
	if err != nil {
		return Memory{}, err
	}
	now := e.now().UTC().Truncate(time.Second)
	render := func(rel string, created time.Time) ([]byte, error) {
		front, err := renderFront(title, created, now, tags)
		if err != nil {
			return nil, err
		}
		data := append(front, withNewline(req.Content)...)
		return data, e.checkSize(rel, data)
	}
	// Most writes create a memory, whose file does not depend on what the
	// folder holds: it is written and flushed before the write lock is
	// taken, so that writers do not queue behind each other's fsync, and
	// only named under the lock. An overwrite keeps the created date of
	// the file it replaces, so it writes under the lock.
	data, err := render(path.Join(folder, slug(title)+".md"), now)
	if err != nil {
		return Memory{}, err
	}
	tmp, err := e.vault.Stage(folder, data, 0o644)
	if err != nil {
		return Memory{}, fmt.Errorf("write: %w", e.vault.WrapErr(folder, err))
	}
	unlock, err := e.lockWrites()
	if err != nil {
		e.vault.Discard(tmp)
		return Memory{}, err
	}
	defer unlock()
	rel, existing, err := e.target(folder, title)
	if err != nil {
		e.vault.Discard(tmp)
		return Memory{}, err
	}
	if !existing {
		if err := e.vault.Place(tmp, rel, true); err != nil {
			return Memory{}, err
		}
		return e.indexed(ctx, rel, unlock)
	}
	e.vault.Discard(tmp)
	if !req.Overwrite {
		return Memory{}, fmt.Errorf("%s has the title %q (set overwrite to replace it): %w", rel, title, ErrExists)
	}
	if err := e.overwrite(rel, now, render); err != nil {
		return Memory{}, err
	}
	return e.indexed(ctx, rel, unlock)
}

// writeArgs checks a write's title, content, tags and folder, and makes the
// folder (inside the vault) if it is new: the title, the tags and the
// folder as the file system spells it.
func (e *Engine) writeArgs(req WriteRequest) (title string, tags []string, folder string, err error) {
	if title, err = cleanTitle(req.Title); err != nil {
		return "", nil, "", err
	}
	if err := e.checkContent(req.Content); err != nil {
		return "", nil, "", err
	}
	if tags, err = cleanTags(req.Tags); err != nil {
		return "", nil, "", err
	}
	if folder, err = vault.CleanRel(vault.NFC(req.Folder)); err != nil {
		return "", nil, "", fmt.Errorf("folder: %w", err)
	}
	folder = e.vault.Spelled(folder)
	if folder != "" {
		if err := e.checkWritable(folder, true); err != nil {
			return "", nil, "", fmt.Errorf("folder: %w", err)
		}
	}
	if err := e.mkdirInside(folder); err != nil {
		return "", nil, "", fmt.Errorf("folder: %w", err)
	}
	if folder, err = vault.RealRel(e.root, folder); err != nil {
		return "", nil, "", fmt.Errorf("folder: %w", err)
	}
	return title, tags, folder, nil
}

// overwrite replaces the memory at rel, keeping its created date (now if
// it has none) and its permissions. The caller holds the write lock.
func (e *Engine) overwrite(rel string, now time.Time, render func(rel string, created time.Time) ([]byte, error)) error {
	old, fi, err := e.vault.Read(rel)
	if err != nil {
		return fmt.Errorf("overwrite: %w", err)
	}
	created := now
	if doc, err := markdown.Parse(rel, old, e.parseOptions()); err == nil && !doc.Created.IsZero() {
		created = doc.Created
	}
	data, err := render(rel, created)
	if err != nil {
		return err
	}
	return e.vault.Write(rel, data, fi.Mode().Perm(), false)
}

// target picks the file for a new memory titled title in folder: the path
// of the memory that already has this title there (existing true), or the
// first free name among slug.md, slug-2.md, …. A name held by anything but
// a regular file (a link, a FIFO, a device) is passed over without being
// opened: it is not a memory, and not ours to replace.
func (e *Engine) target(folder, title string) (rel string, existing bool, err error) {
	e.mu.RLock()
	for p, r := range e.files {
		if vault.DirectlyIn(p, folder) && sameTitle(r.Title, title) {
			if rel == "" || p < rel {
				rel = p
			}
		}
	}
	e.mu.RUnlock()
	r, err := e.vault.OpenRoot()
	if err != nil {
		return "", false, err
	}
	defer r.Close()
	if rel != "" {
		if _, err := e.vault.StatIn(r, rel); err == nil {
			return rel, true, nil
		}
	}
	base := slug(title)
	for n := 1; n <= 10000; n++ {
		name := base + ".md"
		if n > 1 {
			name = fmt.Sprintf("%s-%d.md", base, n)
		}
		rel = path.Join(folder, name)
		if _, err := r.Lstat(filepath.FromSlash(rel)); errors.Is(err, fs.ErrNotExist) {
			return rel, false, nil
		}
		data, _, err := e.vault.ReadIn(r, rel)
		if err != nil {
			continue // not a regular file, unreadable or too large
		}
		// A file not indexed yet may still be the same memory.
		if doc, err := markdown.Parse(rel, data, e.parseOptions()); err == nil && sameTitle(doc.Title, title) {
			return e.vault.Spelled(rel), true, nil
		}
	}
	return "", false, fmt.Errorf("no free file name for %q in %q: %w", title, folder, ErrExists)
}

// Edit applies one edit to a memory's body, sets its frontmatter
// "modified" to now, and re-indexes it before returning. The file is left
// untouched when the edit cannot apply: a checksum mismatch (ErrConflict),
// a find_replace whose Find occurs a different number of times than
// ExpectedCount, or a section that is missing or ambiguous (ErrNoMatch).
func (e *Engine) Edit(ctx context.Context, req EditRequest) (Memory, error) {
	if e.cfg.ReadOnly {
		return Memory{}, ErrReadOnly
	}
	switch req.Op {
	case Append, Prepend, FindReplace, ReplaceSection:
	default:
		return Memory{}, fmt.Errorf("operation %q: want append, prepend, find_replace or replace_section: %w", req.Op, ErrInvalid)
	}
	if err := e.checkContent(req.Content); err != nil {
		return Memory{}, err
	}
	if req.ExpectedCount < 0 {
		return Memory{}, fmt.Errorf("expectedCount %d: must be 0 (any) or more: %w", req.ExpectedCount, ErrInvalid)
	}
	rel, err := e.Resolve(req.ID)
	if err != nil {
		return Memory{}, err
	}

	unlock, err := e.lockWrites()
	if err != nil {
		return Memory{}, err
	}
	defer unlock()
	data, fi, err := e.vault.Read(rel)
	if err != nil {
		return Memory{}, fmt.Errorf("edit: %w", err)
	}
	if want := strings.ToLower(strings.TrimSpace(req.Checksum)); want != "" {
		if got := vault.Hash(data); got != want {
			return Memory{}, fmt.Errorf("%s: checksum %.12s… is not the file's %.12s…: %w", rel, want, got, ErrConflict)
		}
	}
	front, body, hasFront := markdown.SplitFrontmatter(data)
	if !hasFront {
		body = data
	}
	newBody, err := applyEdit(string(body), req)
	if err != nil {
		return Memory{}, fmt.Errorf("%s: %w", rel, err)
	}
	now := e.now().UTC().Truncate(time.Second)
	var out []byte
	switch {
	case hasFront:
		out = append(out, "---\n"...)
		out = append(out, touchModified(front, now)...)
		out = append(out, "---\n"...)
	case !bytes.HasPrefix(bytes.TrimPrefix(data, []byte("\uFEFF")), []byte("---")):
		// No frontmatter yet: add one that only says when it was modified.
		out = append(out, "---\nmodified: "+now.Format(time.RFC3339)+"\n---\n"...)
	}
	out = append(out, newBody...)
	if err := e.checkSize(rel, out); err != nil {
		return Memory{}, err
	}
	// Sync would skip a file it cannot parse (a NUL byte, invalid UTF-8):
	// refuse the edit rather than write a memory that then drops out of
	// the index.
	if _, err := markdown.Parse(rel, out, e.parseOptions()); err != nil {
		return Memory{}, fmt.Errorf("%s would not be indexable after this edit (%v); nothing changed: %w", rel, err, ErrInvalid)
	}
	if err := e.vault.Write(rel, out, fi.Mode().Perm(), false); err != nil {
		return Memory{}, err
	}
	return e.indexed(ctx, rel, unlock)
}

// Delete removes a memory file and its read time, and drops it from the
// indexes before returning.
func (e *Engine) Delete(ctx context.Context, id string) error {
	if e.cfg.ReadOnly {
		return ErrReadOnly
	}
	rel, err := e.Resolve(id)
	if err != nil {
		return err
	}
	unlock, err := e.lockWrites()
	if err != nil {
		return err
	}
	defer unlock()
	r, err := e.vault.OpenRoot()
	if err != nil {
		return err
	}
	defer r.Close()
	if _, err := e.vault.StatIn(r, rel); err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	if err := r.Remove(filepath.FromSlash(rel)); err != nil {
		return fmt.Errorf("delete %s: %w", rel, err)
	}
	if err := e.carryRead(rel, ""); err != nil {
		return fmt.Errorf("forget read time of %s: %w", rel, err)
	}
	unlock()
	if _, err := e.SyncPaths(ctx, []string{rel}); err != nil {
		return fmt.Errorf("deleted %s, but updating the index failed: %w", rel, err)
	}
	return nil
}

// Move renames a memory to newPath (relative to the memory folder; ".md" is
// added if missing). A newPath that ends in "/" or names an existing folder
// moves the file into that folder under its own name. The destination must
// not exist (ErrExists). The read time moves with the file, so a move keeps
// the memory's recency.
func (e *Engine) Move(ctx context.Context, id, newPath string) (Memory, error) {
	if e.cfg.ReadOnly {
		return Memory{}, ErrReadOnly
	}
	rel, err := e.Resolve(id)
	if err != nil {
		return Memory{}, err
	}
	dst, err := e.moveTarget(rel, newPath)
	if err != nil {
		return Memory{}, err
	}
	if dst == rel {
		return e.memoryAt(rel)
	}

	unlock, err := e.lockWrites()
	if err != nil {
		return Memory{}, err
	}
	defer unlock()
	if err := e.mkdirInside(path.Dir(dst)); err != nil {
		return Memory{}, fmt.Errorf("destination: %w", err)
	}
	r, err := e.vault.OpenRoot()
	if err != nil {
		return Memory{}, err
	}
	defer r.Close()
	si, err := e.vault.StatIn(r, rel)
	if err != nil {
		return Memory{}, fmt.Errorf("move: %w", err)
	}
	src, to := filepath.FromSlash(rel), filepath.FromSlash(dst)
	if ti, terr := r.Lstat(to); terr == nil {
		// Only the same file under another case (a case-insensitive file
		// system) may be renamed onto itself.
		if !os.SameFile(si, ti) {
			return Memory{}, fmt.Errorf("%s: %w", dst, ErrExists)
		}
		err = r.Rename(src, to)
	} else {
		err = vault.RenameNoClobber(r, src, to)
	}
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return Memory{}, fmt.Errorf("%s: %w", dst, ErrExists)
		}
		return Memory{}, fmt.Errorf("move %s to %s: %w", rel, dst, err)
	}
	if err := e.carryRead(rel, dst); err != nil {
		return Memory{}, fmt.Errorf("move read time of %s: %w", rel, err)
	}
	m, err := e.memoryAt(dst)
	unlock()
	if err != nil {
		return Memory{}, err
	}
	if _, err := e.SyncPaths(ctx, []string{rel, dst}); err != nil {
		return Memory{}, fmt.Errorf("moved %s to %s, but updating the index failed: %w", rel, dst, err)
	}
	return m, nil
}

// moveTarget is where Move puts rel when asked for newPath: into the
// folder newPath names (ending in "/" or an existing folder) under rel's
// own name, else at newPath with rel's extension if it has none; the
// folder as the volume lists it, the name as given, so that a case-only
// rename is one.
func (e *Engine) moveTarget(rel, newPath string) (string, error) {
	dst, err := vault.CleanRel(vault.NFC(newPath))
	if err != nil {
		return "", fmt.Errorf("destination: %w", err)
	}
	if dst == "" {
		return "", fmt.Errorf("destination is required: %w", ErrInvalid)
	}
	trimmed := strings.TrimRight(strings.ReplaceAll(newPath, "\\", "/"), " ")
	if strings.HasSuffix(trimmed, "/") {
		dst = path.Join(dst, path.Base(rel))
	} else if e.isFolder(dst) {
		dst = path.Join(dst, path.Base(rel))
	} else if !vault.IsMemoryName(dst) {
		dst += path.Ext(rel)
	}
	if err := e.checkWritable(dst, false); err != nil {
		return "", fmt.Errorf("destination: %w", err)
	}
	dir, err := vault.RealRel(e.root, e.vault.Spelled(path.Dir(dst)))
	if err != nil {
		return "", fmt.Errorf("destination: %w", err)
	}
	return path.Join(dir, path.Base(dst)), nil
}

// slug turns a title into a file name (without ".md") that is safe on
// every common file system and keeps the title readable in any script:
// letters, digits and combining marks are kept (lowercased), every run of
// anything else — spaces, punctuation, path separators, control characters —
// becomes one '-'. It is at most maxSlugBytes long, cut on a rune boundary.
// A title with nothing to keep becomes "untitled".
func slug(title string) string {
	var b strings.Builder
	pending := false
	for _, r := range strings.ToLower(title) {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.In(r, unicode.Mn, unicode.Mc) {
			pending = true
			continue
		}
		n := utf8.RuneLen(r)
		if pending && b.Len() > 0 {
			n++
		}
		if b.Len()+n > maxSlugBytes {
			break
		}
		if pending && b.Len() > 0 {
			b.WriteByte('-')
		}
		pending = false
		b.WriteRune(r)
	}
	s := b.String()
	if s == "" {
		return "untitled"
	}
	if reservedName(s) {
		s += "-memory"
	}
	return s
}

// reservedName reports Windows device names, which no file may be called.
func reservedName(s string) bool {
	switch s {
	case "con", "prn", "aux", "nul":
		return true
	}
	return len(s) == 4 && (strings.HasPrefix(s, "com") || strings.HasPrefix(s, "lpt")) && s[3] >= '1' && s[3] <= '9'
}

// cleanTitle checks a title, collapses its whitespace as Parse does, and
// normalises it to NFC (see vault.NFC).
func cleanTitle(t string) (string, error) {
	t = vault.NFC(strings.Join(strings.Fields(t), " "))
	switch {
	case t == "":
		return "", fmt.Errorf("title is required: %w", ErrInvalid)
	case !utf8.ValidString(t):
		return "", fmt.Errorf("title is not valid UTF-8: %w", ErrInvalid)
	case len(t) > maxTitleBytes:
		return "", fmt.Errorf("title is %d bytes, over the %d-byte limit: %w", len(t), maxTitleBytes, ErrInvalid)
	case hasControl(t):
		return "", fmt.Errorf("title contains control characters or invalid UTF-8: %w", ErrInvalid)
	}
	return t, nil
}

// cleanTags lowercases tags, drops a leading '#', and removes duplicates.
func cleanTags(tags []string) ([]string, error) {
	if len(tags) > MaxTags {
		return nil, fmt.Errorf("%d tags, over the limit of %d: %w", len(tags), MaxTags, ErrInvalid)
	}
	out := []string{}
	seen := map[string]bool{}
	for _, t := range tags {
		t = strings.ToLower(strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(t), "#")))
		switch {
		case t == "":
			continue
		case !utf8.ValidString(t) || hasControl(t) || strings.ContainsAny(t, ",\n"):
			return nil, fmt.Errorf("tag %.40q: no commas or control characters: %w", t, ErrInvalid)
		case len(t) > maxTagBytes:
			return nil, fmt.Errorf("tag %.40q…: over the %d-byte limit: %w", t, maxTagBytes, ErrInvalid)
		case seen[t]:
			continue
		}
		seen[t] = true
		out = append(out, t)
	}
	return out, nil
}

// checkContent refuses bodies that sync would not index.
func (e *Engine) checkContent(s string) error {
	if strings.IndexByte(s, 0) >= 0 {
		return fmt.Errorf("content contains a NUL byte: %w", ErrInvalid)
	}
	if int64(len(s)) > e.cfg.MaxFileBytes {
		return fmt.Errorf("content is %d bytes, over the %d-byte file limit: %w", len(s), e.cfg.MaxFileBytes, ErrInvalid)
	}
	return nil
}

// checkSize refuses a file that sync would skip as too large.
func (e *Engine) checkSize(rel string, data []byte) error {
	if int64(len(data)) > e.cfg.MaxFileBytes {
		return fmt.Errorf("%s would be %d bytes, over the %d-byte file limit: %w", rel, len(data), e.cfg.MaxFileBytes, ErrInvalid)
	}
	return nil
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) || r == utf8.RuneError })
}

// checkWritable checks a cleaned relative path a write will create: every
// part a plain, visible name; the whole inside the memory folder (through
// symlinks), and not a path the scan leaves out (the index folder, a
// dependency folder, what .mnemoignore ignores) — a memory written there
// would never be found.
func (e *Engine) checkWritable(rel string, isDir bool) error {
	for _, part := range strings.Split(rel, "/") {
		switch {
		case strings.HasPrefix(part, "."):
			return fmt.Errorf("%q: hidden names are never indexed: %w", rel, ErrInvalid)
		case !utf8.ValidString(part) || hasControl(part):
			return fmt.Errorf("%q: control characters in a name: %w", rel, ErrInvalid)
		case len(part) > maxNameBytes:
			return fmt.Errorf("%.40q…: a name over %d bytes: %w", part, maxNameBytes, ErrInvalid)
		}
	}
	real, err := vault.RealRel(e.root, rel)
	if err != nil {
		return err
	}
	if e.vault.IndexRel() != "" && (vault.InFolder(rel, e.vault.IndexRel()) || vault.InFolder(real, e.vault.IndexRel())) {
		return fmt.Errorf("%q is inside the index folder: %w", rel, ErrOutsideRoot)
	}
	r, err := e.vault.OpenRoot()
	if err != nil {
		return err
	}
	defer r.Close()
	rules, err := e.vault.LoadRules(r)
	if err != nil {
		return err
	}
	if rules.Skip(rel, isDir) || rules.Skip(real, isDir) {
		return fmt.Errorf("%q is ignored (a dependency folder, or a rule in %s): a memory there would never be indexed: %w", rel, vault.IgnoreFile, ErrInvalid)
	}
	return nil
}

// mkdirInside creates folder (relative) inside the memory folder: os.Root
// follows no symlink out of it.
func (e *Engine) mkdirInside(folder string) error {
	if folder == "" || folder == "." {
		return nil
	}
	r, err := e.vault.OpenRoot()
	if err != nil {
		return err
	}
	defer r.Close()
	if err := r.MkdirAll(filepath.FromSlash(folder), 0o755); err != nil {
		return e.vault.WrapErr(folder, err)
	}
	return nil
}

// isFolder reports whether rel names a folder inside the memory folder.
func (e *Engine) isFolder(rel string) bool {
	r, err := e.vault.OpenRoot()
	if err != nil {
		return false
	}
	defer r.Close()
	fi, err := r.Stat(filepath.FromSlash(rel))
	return err == nil && fi.IsDir()
}

func orDot(s string) string {
	if s == "" {
		return "."
	}
	return s
}

// indexed reads rel back as a Memory while the write lock is still held
// (so its checksum is that of the write just made), releases the lock, and
// returns once rel is searchable.
func (e *Engine) indexed(ctx context.Context, rel string, unlock func()) (Memory, error) {
	m, err := e.memoryAt(rel)
	unlock()
	if err != nil {
		return Memory{}, err
	}
	rep, err := e.SyncPaths(ctx, []string{rel})
	if err != nil {
		return Memory{}, fmt.Errorf("wrote %s, but indexing it failed: %w", rel, err)
	}
	for _, s := range rep.Skipped {
		if s.Path == rel {
			return Memory{}, fmt.Errorf("wrote %s, but it is not indexed: %s", rel, s.Reason)
		}
	}
	return m, nil
}
