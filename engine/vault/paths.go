package vault

import (
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// URIScheme prefixes every memory's URI: memory:// + path without ".md".
const URIScheme = "memory://"

// URI returns the memory:// URI of a relative memory path: the path
// without ".md" (a .markdown file keeps its extension).
func URI(rel string) string {
	return URIScheme + strings.TrimSuffix(rel, ".md")
}

// RelOfURI is the relative path a URI made by URI names.
func RelOfURI(uri string) string {
	rel := strings.TrimPrefix(uri, URIScheme)
	if !IsMemoryName(rel) {
		rel += ".md"
	}
	return rel
}

// CleanRel turns a user-supplied folder or path into a clean, slash-separated
// path relative to the memory folder, or fails with ErrOutsideRoot when it
// tries to leave it. "" and "." mean the root itself and return "".
// It does not touch the file system: see ResolveInside for symlinks.
func CleanRel(p string) (string, error) {
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("%q: NUL byte in path: %w", p, ErrOutsideRoot)
	}
	if strings.Contains(p, "%") {
		// A URL-encoded path ("..%2f..") is decoded once so it cannot hide a traversal.
		if dec, err := url.PathUnescape(p); err == nil {
			p = dec
		}
		if strings.ContainsRune(p, 0) {
			return "", fmt.Errorf("%q: NUL byte in path: %w", p, ErrOutsideRoot)
		}
	}
	p = strings.ReplaceAll(p, "\\", "/")
	if path.IsAbs(p) || filepath.IsAbs(p) || (len(p) > 1 && p[1] == ':') {
		return "", fmt.Errorf("%q is absolute: %w", p, ErrOutsideRoot)
	}
	c := path.Clean(p)
	if c == "." {
		return "", nil
	}
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("%q: %w", p, ErrOutsideRoot)
	}
	return c, nil
}

// ResolveInside checks that rel, followed through any symlinks, still lies
// inside root (see RealRel).
func ResolveInside(root, rel string) error {
	_, err := RealRel(root, rel)
	return err
}

// Ancestors lists every folder that contains rel: "a/b/c.md" → ["a", "a/b"].
func Ancestors(rel string) []string {
	var out []string
	for i := 0; i < len(rel); i++ {
		if rel[i] == '/' {
			out = append(out, rel[:i])
		}
	}
	return out
}

// InFolder reports whether rel is folder or lies under it ("" is the
// root). Paths are relative and clean (see CleanRel); this is the one
// "is this under that folder" check, done on names. Where the file system
// decides (symlinks), see RealRel and os.Root in vault.go.
func InFolder(rel, folder string) bool {
	return folder == "" || strings.HasPrefix(rel, folder) && (len(rel) == len(folder) || rel[len(folder)] == '/')
}

// DirectlyIn reports whether rel is an entry of folder itself, not of a
// folder below it ("" is the root). It is path.Dir(rel) == folder without
// building path.Dir's string, which a Write asks of every known memory.
func DirectlyIn(rel, folder string) bool {
	if folder == "" {
		return !strings.Contains(rel, "/")
	}
	return len(rel) > len(folder)+1 && rel[len(folder)] == '/' && strings.HasPrefix(rel, folder) &&
		!strings.Contains(rel[len(folder)+1:], "/")
}

// InAnyFolder reports whether rel lies under one of folders.
func InAnyFolder(rel string, folders []string) bool {
	for _, f := range folders {
		if InFolder(rel, f) {
			return true
		}
	}
	return false
}

// NFC is s in Unicode normalisation form C. Titles and the paths mnemo
// creates are NFC, so "Café" typed precomposed or decomposed is one memory
// in one file.
func NFC(s string) string { return norm.NFC.String(s) }

// RealRel returns where rel really is, relative to the root, with every
// symlink in it resolved (a part that does not exist yet is kept as
// written). Writes go to the real path so that a memory written through a
// symlinked folder is indexed under the one path the scan will find.
func RealRel(root, rel string) (string, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("resolve memory folder: %w", err)
	}
	p, rest := filepath.Join(root, filepath.FromSlash(rel)), ""
	for {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			r, err := filepath.Rel(realRoot, filepath.Join(real, rest))
			if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
				return "", fmt.Errorf("%q: %w", rel, ErrOutsideRoot)
			}
			if r == "." {
				return "", nil
			}
			return filepath.ToSlash(r), nil
		}
		if !os.IsNotExist(err) {
			return "", fmt.Errorf("resolve %q: %w", rel, err)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return rel, nil
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// memoryExts are the file name extensions of memory files.
var memoryExts = []string{".md", ".markdown"}

// IsMemoryName reports whether a file name has a memory extension.
func IsMemoryName(name string) bool {
	ext := path.Ext(name)
	for _, m := range memoryExts {
		if strings.EqualFold(ext, m) {
			return true
		}
	}
	return false
}
