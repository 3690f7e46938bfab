package transcript

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// The one file rule for every transcript root, in sync and in serve alike:
// a transcript (and every file read beside it: Gemini's .project_root,
// CodeArchitect's full.md and summary.md) is read only if it is a regular
// file inside its source's folder — not a symbolic link, FIFO, device or
// socket, and not reached through a link that leaves the folder. It is
// opened non-blocking (a FIFO can never hold a read), checked again with
// fstat on the open file (so a swap between the check and the open is
// refused too), and every read of it is bounded. engine/vault applies the
// same discipline to memories.

// ErrNotRegular is returned for a transcript path that is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// fileKind names what a non-regular file is, for the error.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	case m.IsDir():
		return "folder"
	}
	return "irregular file"
}

// within is path relative to root, if root is set and path lies below it.
func within(root, path string) (string, bool) {
	if root == "" {
		return "", false
	}
	rel, err := filepath.Rel(root, path)
	if err != nil || !filepath.IsLocal(rel) {
		return "", false
	}
	return rel, true
}

// lstatRule is Lstat of path, inside root when it lies below it (through
// os.Root, so that a folder link out of root is refused).
func lstatRule(root, path string) (fs.FileInfo, error) {
	if rel, ok := within(root, path); ok {
		r, err := os.OpenRoot(root)
		if err != nil {
			return nil, err
		}
		defer r.Close()
		return r.Lstat(rel)
	}
	return os.Lstat(path)
}

// openRegular opens path for reading under the file rule. root is the
// source's folder ("" when the caller named a file directly).
func openRegular(root, path string) (*os.File, fs.FileInfo, error) {
	fi, err := lstatRule(root, path)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s is a %s: %w", path, fileKind(fi.Mode()), ErrNotRegular)
	}
	const flags = os.O_RDONLY | syscall.O_NONBLOCK
	var f *os.File
	if rel, ok := within(root, path); ok {
		r, err := os.OpenRoot(root)
		if err != nil {
			return nil, nil, err
		}
		f, err = r.OpenFile(rel, flags, 0)
		r.Close()
		if err != nil {
			return nil, nil, err
		}
	} else if f, err = os.OpenFile(path, flags|noFollow, 0); err != nil {
		return nil, nil, err
	}
	ofi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !ofi.Mode().IsRegular() || !os.SameFile(fi, ofi) {
		f.Close()
		return nil, nil, fmt.Errorf("%s changed into a %s while being opened: %w", path, fileKind(ofi.Mode()), ErrNotRegular)
	}
	return f, ofi, nil
}

// open opens the transcript being read under the file rule, and checks that
// it is still the file the Read began with.
func (r *run) open() (*os.File, error) {
	return r.openFile(r.path)
}

// openFile opens path (the transcript, or a file beside it) under the rule.
func (r *run) openFile(path string) (*os.File, error) {
	f, fi, err := openRegular(r.src.dir(), path)
	if err != nil {
		return nil, err
	}
	if path == r.path && r.fi != nil && !os.SameFile(fi, r.fi) {
		f.Close()
		return nil, fmt.Errorf("%s was replaced while being read", path)
	}
	return f, nil
}

// readSmall reads a small file beside a transcript (Gemini's .project_root,
// CodeArchitect's summary.md) under the rule, at most max bytes; ok is false
// if it is missing, refused or longer.
func (r *run) readSmall(path string, max int64) ([]byte, bool) {
	f, err := r.openFile(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	return readAtMost(f, max)
}

// readSmallFile reads a small file outside any transcript root under the
// rule, at most max bytes; ok is false if it is missing, refused or longer.
func readSmallFile(path string, max int64) ([]byte, bool) {
	f, _, err := openRegular("", path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	return readAtMost(f, max)
}

// readAtMost reads f whole if it holds at most max bytes.
func readAtMost(f *os.File, max int64) ([]byte, bool) {
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil || int64(len(b)) > max {
		return nil, false
	}
	return b, true
}

// statRegular is the rule's check of a file beside a transcript.
func statRegular(root, path string) (fs.FileInfo, error) {
	fi, err := lstatRule(root, path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is a %s: %w", path, fileKind(fi.Mode()), ErrNotRegular)
	}
	return fi, nil
}

// statRule is the file rule's check of the path a Read is given: a regular
// file (CodeArchitect: a folder) inside the source's folder.
func statRule(src Source, path string) (fs.FileInfo, error) {
	fi, err := lstatRule(src.dir(), path)
	if err != nil {
		return nil, err
	}
	want := fi.Mode().IsRegular()
	if src.Kind == CodeArchitect || formats[src.Kind].folders {
		want = fi.IsDir()
	}
	if !want {
		return nil, fmt.Errorf("%s is a %s: %w", path, fileKind(fi.Mode()), ErrNotRegular)
	}
	return fi, nil
}
