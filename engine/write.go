package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
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
	ErrExists   = errors.New("a memory already exists there")
	ErrInvalid  = errors.New("invalid request")
	ErrNoMatch  = errors.New("edit target not found as expected")
)

// Limits on what a write may name. File names are capped well below the
// 255 bytes most file systems allow, leaving room for "-NN.md".
const (
	maxTitleBytes = 512
	maxSlugBytes  = 96
	maxTags       = 64
	maxTagBytes   = 128
	maxNameBytes  = 255
)

// writeMu serialises every read-modify-write of memory files in this
// process, so a checksum check and the write that follows it cannot
// interleave with another edit. Writes are rare and short; one lock is enough.
var writeMu sync.Mutex

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
	title, err := cleanTitle(req.Title)
	if err != nil {
		return Memory{}, err
	}
	if err := e.checkContent(req.Content); err != nil {
		return Memory{}, err
	}
	tags, err := cleanTags(req.Tags)
	if err != nil {
		return Memory{}, err
	}
	folder, err := cleanRel(req.Folder)
	if err != nil {
		return Memory{}, fmt.Errorf("folder: %w", err)
	}
	if folder != "" {
		if err := e.checkWritable(folder); err != nil {
			return Memory{}, fmt.Errorf("folder: %w", err)
		}
	}

	writeMu.Lock()
	defer writeMu.Unlock()
	if err := e.mkdirInside(folder); err != nil {
		return Memory{}, fmt.Errorf("folder: %w", err)
	}
	if folder, err = realRel(e.root, folder); err != nil {
		return Memory{}, fmt.Errorf("folder: %w", err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	created := now
	rel, existing, err := e.target(folder, title)
	if err != nil {
		return Memory{}, err
	}
	perm := fs.FileMode(0o644)
	if existing {
		if !req.Overwrite {
			return Memory{}, fmt.Errorf("%s has the title %q (set overwrite to replace it): %w", rel, title, ErrExists)
		}
		full := e.abs(rel)
		if fi, err := os.Stat(full); err == nil {
			perm = fi.Mode().Perm()
		}
		if data, err := os.ReadFile(full); err == nil {
			if doc, err := markdown.Parse(rel, data, markdown.Options{MaxBytes: e.cfg.MaxFileBytes}); err == nil && !doc.Created.IsZero() {
				created = doc.Created
			}
		}
	}
	front, err := renderFront(title, created, now, tags)
	if err != nil {
		return Memory{}, err
	}
	data := append(front, withNewline(req.Content)...)
	if err := e.checkSize(rel, data); err != nil {
		return Memory{}, err
	}
	if err := e.writeFile(rel, data, perm, !existing); err != nil {
		return Memory{}, err
	}
	return e.indexed(ctx, rel)
}

// target picks the file for a new memory titled title in folder: the path
// of the memory that already has this title there (existing true), or the
// first free name among slug.md, slug-2.md, ….
func (e *Engine) target(folder, title string) (rel string, existing bool, err error) {
	e.mu.RLock()
	for p, r := range e.files {
		if path.Dir(p) == orDot(folder) && strings.EqualFold(r.Title, title) {
			if rel == "" || p < rel {
				rel = p
			}
		}
	}
	e.mu.RUnlock()
	if rel != "" {
		if _, err := os.Lstat(e.abs(rel)); err == nil {
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
		data, err := os.ReadFile(e.abs(rel))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if _, lerr := os.Lstat(e.abs(rel)); lerr == nil {
				continue // a dangling symlink: not ours to replace
			}
			return rel, false, nil
		case err != nil:
			continue // a folder or an unreadable file by that name
		}
		// A file not indexed yet may still be the same memory.
		if doc, err := markdown.Parse(rel, data, markdown.Options{MaxBytes: e.cfg.MaxFileBytes}); err == nil && strings.EqualFold(doc.Title, title) {
			return rel, true, nil
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

	writeMu.Lock()
	defer writeMu.Unlock()
	full := e.abs(rel)
	fi, err := os.Stat(full)
	if err != nil {
		return Memory{}, fmt.Errorf("edit %s: %w", rel, err)
	}
	if fi.Size() > e.cfg.MaxFileBytes {
		return Memory{}, fmt.Errorf("edit %s: %d bytes, over the %d-byte limit: %w", rel, fi.Size(), e.cfg.MaxFileBytes, ErrInvalid)
	}
	data, err := os.ReadFile(full)
	if err != nil {
		return Memory{}, fmt.Errorf("edit %s: %w", rel, err)
	}
	if want := strings.ToLower(strings.TrimSpace(req.Checksum)); want != "" {
		if got := contentHash(data); got != want {
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
	now := time.Now().UTC().Truncate(time.Second)
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
	if err := e.writeFile(rel, out, fi.Mode().Perm(), false); err != nil {
		return Memory{}, err
	}
	return e.indexed(ctx, rel)
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
	writeMu.Lock()
	defer writeMu.Unlock()
	if err := os.Remove(e.abs(rel)); err != nil {
		return fmt.Errorf("delete %s: %w", rel, err)
	}
	if err := e.carryRead(rel, ""); err != nil {
		return fmt.Errorf("forget read time of %s: %w", rel, err)
	}
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
	dst, err := cleanRel(newPath)
	if err != nil {
		return Memory{}, fmt.Errorf("destination: %w", err)
	}
	if dst == "" {
		return Memory{}, fmt.Errorf("destination is required: %w", ErrInvalid)
	}
	trimmed := strings.TrimRight(strings.ReplaceAll(newPath, "\\", "/"), " ")
	if strings.HasSuffix(trimmed, "/") {
		dst = path.Join(dst, path.Base(rel))
	} else if fi, err := os.Stat(e.abs(dst)); err == nil && fi.IsDir() {
		dst = path.Join(dst, path.Base(rel))
	} else if !strings.EqualFold(path.Ext(dst), ".md") {
		dst += ".md"
	}
	if err := e.checkWritable(dst); err != nil {
		return Memory{}, fmt.Errorf("destination: %w", err)
	}
	dir, err := realRel(e.root, path.Dir(dst))
	if err != nil {
		return Memory{}, fmt.Errorf("destination: %w", err)
	}
	dst = path.Join(dir, path.Base(dst))
	if dst == rel {
		return e.memoryAt(rel)
	}

	writeMu.Lock()
	defer writeMu.Unlock()
	if err := e.mkdirInside(path.Dir(dst)); err != nil {
		return Memory{}, fmt.Errorf("destination: %w", err)
	}
	src, to := e.abs(rel), e.abs(dst)
	if ti, terr := os.Lstat(to); terr == nil {
		// Only the same file under another case (a case-insensitive file
		// system) may be renamed onto itself.
		if si, serr := os.Lstat(src); serr != nil || !os.SameFile(si, ti) {
			return Memory{}, fmt.Errorf("%s: %w", dst, ErrExists)
		}
		err = os.Rename(src, to)
	} else {
		err = renameNoClobber(src, to)
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
	if _, err := e.SyncPaths(ctx, []string{rel, dst}); err != nil {
		return Memory{}, fmt.Errorf("moved %s to %s, but updating the index failed: %w", rel, dst, err)
	}
	return e.memoryAt(dst)
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

// cleanTitle checks a title and collapses its whitespace, as Parse does.
func cleanTitle(t string) (string, error) {
	t = strings.Join(strings.Fields(t), " ")
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
	if len(tags) > maxTags {
		return nil, fmt.Errorf("%d tags, over the limit of %d: %w", len(tags), maxTags, ErrInvalid)
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
// part a plain, visible name, the whole inside the memory folder (through
// symlinks) and outside the index folder.
func (e *Engine) checkWritable(rel string) error {
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
	if err := resolveInside(e.root, rel); err != nil {
		return err
	}
	if idx, err := filepath.Abs(e.cfg.IndexDir); err == nil {
		if full := e.abs(rel); full == idx || strings.HasPrefix(full, idx+string(filepath.Separator)) {
			return fmt.Errorf("%q is inside the index folder: %w", rel, ErrOutsideRoot)
		}
	}
	return nil
}

// mkdirInside creates folder (relative) and checks again, now that it
// exists, that it did not land outside the memory folder.
func (e *Engine) mkdirInside(folder string) error {
	if folder == "" || folder == "." {
		return nil
	}
	if err := os.MkdirAll(e.abs(folder), 0o755); err != nil {
		return err
	}
	return resolveInside(e.root, folder)
}

func (e *Engine) abs(rel string) string { return filepath.Join(e.root, filepath.FromSlash(rel)) }

func orDot(s string) string {
	if s == "" {
		return "."
	}
	return s
}

// writeFile writes data to rel atomically: a hidden temporary file in the
// same folder (sync ignores hidden files), flushed, then renamed over rel.
// With noClobber the rename fails with ErrExists if rel appeared meanwhile.
func (e *Engine) writeFile(rel string, data []byte, perm fs.FileMode, noClobber bool) error {
	full := e.abs(rel)
	old := e.stamp(rel)
	f, err := os.CreateTemp(filepath.Dir(full), ".mnemo-*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", rel, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // a no-op once renamed
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, perm)
	}
	if err == nil {
		if noClobber {
			err = renameNoClobber(tmp, full)
		} else {
			err = os.Rename(tmp, full)
		}
	}
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s: %w", rel, ErrExists)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", rel, err)
	}
	// Sync notices a change by size and modification time. On a file
	// system with coarse timestamps an edit of the same size could keep
	// both, and go unnoticed: move the time on.
	if fi, err := os.Stat(full); err == nil && old.size == fi.Size() && old.mtimeNs == fi.ModTime().UnixNano() {
		t := time.Unix(0, old.mtimeNs).Add(time.Millisecond)
		os.Chtimes(full, t, t)
	}
	return nil
}

// stamp is the size and modification time the index holds for rel.
func (e *Engine) stamp(rel string) seen {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if r := e.files[rel]; r != nil {
		return seen{size: r.Size, mtimeNs: r.MtimeNs}
	}
	return seen{size: -1}
}

// renameNoClobber renames src to dst unless dst exists (fs.ErrExist). A
// hard link followed by removing src makes the check and the rename one
// step; where links are not supported it falls back to check-then-rename.
func renameNoClobber(src, dst string) error {
	err := os.Link(src, dst)
	if err == nil {
		return os.Remove(src)
	}
	if errors.Is(err, fs.ErrExist) {
		return fs.ErrExist
	}
	if _, err := os.Lstat(dst); err == nil {
		return fs.ErrExist
	}
	return os.Rename(src, dst)
}

// indexed re-indexes rel and returns it as a Memory.
func (e *Engine) indexed(ctx context.Context, rel string) (Memory, error) {
	rep, err := e.SyncPaths(ctx, []string{rel})
	if err != nil {
		return Memory{}, fmt.Errorf("wrote %s, but indexing it failed: %w", rel, err)
	}
	for _, s := range rep.Skipped {
		if s.Path == rel {
			return Memory{}, fmt.Errorf("wrote %s, but it is not indexed: %s", rel, s.Reason)
		}
	}
	return e.memoryAt(rel)
}
