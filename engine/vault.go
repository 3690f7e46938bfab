package engine

// The vault is the memory folder on disk. This file holds the one rule for
// what a memory file is, and every read and write of one goes through it:
//
//   - A memory file is a regular file inside the memory folder whose name
//     ends in .md or .markdown. Symbolic links, folders, devices, FIFOs and
//     sockets are never memories: they are refused with a clear error
//     (ErrNotRegular) after an Lstat, without being opened.
//   - Every access goes through an os.Root opened on the memory folder, so
//     no path, symlinked folder or race can reach a file outside it.
//   - Every read is bounded by Config.MaxFileBytes; every write is atomic (a
//     hidden temporary file in the same folder, flushed, then renamed).
//
// Symbolic links inside the vault are not followed by the scan: a memory
// has one path, its real one. An identifier that goes through an in-vault
// folder link (a/up/x.md with a/up → ..) is resolved to that real path.

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mnemo/engine/vault"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrNotRegular reports a path that names something other than a regular
// file — a symbolic link, a folder, a device, a FIFO or a socket — where a
// memory file was expected. Such entries are left alone: never opened, read,
// replaced or indexed.
var ErrNotRegular = errors.New("not a regular file; memory files are regular files inside the memory folder")

// openVault opens the memory folder as an os.Root. It is opened per
// operation (one open(2)), so a memory folder that is replaced while the
// engine runs is seen as it is now.
func (e *Engine) openVault() (*os.Root, error) {
	r, err := os.OpenRoot(e.root)
	if err != nil {
		return nil, fmt.Errorf("open memory folder: %w", err)
	}
	return r, nil
}

// kindOf names a file's type for an error message.
func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsRegular():
		return "a regular file"
	}
	return "a special file"
}

// statMemory checks that rel is a memory file: it Lstats rel inside r (a
// symlinked folder on the way may be followed only while it stays inside)
// and refuses anything but a regular file.
func (e *Engine) statMemory(r *os.Root, rel string) (fs.FileInfo, error) {
	return e.statAt(r, filepath.FromSlash(rel), rel)
}

// statAt is statMemory for the memory rel, which is name inside r.
func (e *Engine) statAt(r *os.Root, name, rel string) (fs.FileInfo, error) {
	fi, err := r.Lstat(name)
	if err != nil {
		return nil, e.vaultErr(rel, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, e.notRegular(rel, fi.Mode())
	}
	return fi, nil
}

// notRegular is the error for a non-regular entry at rel. A link that
// leaves the memory folder is reported as ErrOutsideRoot.
func (e *Engine) notRegular(rel string, m fs.FileMode) error {
	if m&fs.ModeSymlink != 0 {
		if _, err := vault.RealRel(e.root, rel); errors.Is(err, ErrOutsideRoot) {
			return fmt.Errorf("%s is a symbolic link out of the memory folder: %w", rel, ErrOutsideRoot)
		}
	}
	return fmt.Errorf("%s is %s: %w", rel, kindOf(m), ErrNotRegular)
}

// vaultErr wraps an error of an os.Root operation on rel. os.Root refuses
// a path that escapes through a symlink with an unexported error; that case
// is reported as ErrOutsideRoot.
func (e *Engine) vaultErr(rel string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w", rel, err)
	}
	if _, rerr := vault.RealRel(e.root, rel); errors.Is(rerr, ErrOutsideRoot) {
		return fmt.Errorf("%s: %w", rel, ErrOutsideRoot)
	}
	return fmt.Errorf("%s: %w", rel, err)
}

// readMemory reads the memory file rel: regular files only, at most
// Config.MaxFileBytes. The file opened must be the one Lstat saw, so an
// entry swapped for a link or a FIFO in between is refused, and the open
// does not block on a FIFO either way.
func (e *Engine) readMemory(rel string) ([]byte, fs.FileInfo, error) {
	r, err := e.openVault()
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	return e.readIn(r, rel)
}

// readIn is readMemory on an open vault.
func (e *Engine) readIn(r *os.Root, rel string) ([]byte, fs.FileInfo, error) {
	return e.readAt(r, filepath.FromSlash(rel), rel)
}

// readAt reads the memory rel, which is name inside r (the vault, or the
// folder that holds it), with readMemory's rules.
func (e *Engine) readAt(r *os.Root, name, rel string) ([]byte, fs.FileInfo, error) {
	fi, err := e.statAt(r, name, rel)
	if err != nil {
		return nil, nil, err
	}
	limit := e.cfg.MaxFileBytes
	if fi.Size() > limit {
		return nil, nil, fmt.Errorf("%s is %d bytes, over the %d-byte limit: %w", rel, fi.Size(), limit, ErrInvalid)
	}
	f, err := r.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, e.vaultErr(rel, err)
	}
	defer f.Close()
	ofi, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", rel, err)
	}
	if !ofi.Mode().IsRegular() || !os.SameFile(fi, ofi) {
		return nil, nil, fmt.Errorf("%s changed into %s while being opened: %w", rel, kindOf(ofi.Mode()), ErrNotRegular)
	}
	data, err := readBounded(f, ofi.Size(), limit)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", rel, err)
	}
	if int64(len(data)) > limit {
		return nil, nil, fmt.Errorf("%s grew over the %d-byte limit while being read: %w", rel, limit, ErrInvalid)
	}
	return data, ofi, nil
}

// readBounded reads f to its end, or to one byte past limit (which tells
// the caller it is too big). size is what fstat said: a buffer of size+1
// takes the whole file in one read, where io.ReadAll grows from 512 bytes.
// A first read that stops at exactly size bytes is the whole file — a
// regular file's read stops short only at its end — which saves the read
// that would return its end (one syscall of seven a file; on tldr 38k
// files). Otherwise, as for a file that grew since fstat, it reads on,
// still bounded.
func readBounded(f io.Reader, size, limit int64) ([]byte, error) {
	data := make([]byte, max(0, min(size, limit))+1)
	n, err := f.Read(data)
	switch {
	case err == nil && int64(n) == size && n < len(data):
		return data[:n], nil
	case err == io.EOF:
		return data[:n], nil
	case err != nil:
		return nil, err
	}
	m, err := io.ReadFull(f, data[n:])
	n += m
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return data[:n], nil
	case err != nil:
		return nil, err
	}
	rest, err := io.ReadAll(io.LimitReader(f, limit+1-int64(n)))
	if err != nil {
		return nil, err
	}
	return append(data, rest...), nil
}

// folderReader reads memory files for a sync batch, opening each folder
// once, as an os.Root reached through the vault's (so a folder link out of
// the memory folder is refused as it is by readMemory). A file then costs
// one fstatat, one openat, one fstat, its reads and a close, where
// readMemory opens the vault and walks every folder of the path twice —
// 26 µs a file on tldr. The rules are readMemory's: the same Lstat, size
// bound, O_NONBLOCK open and same-file check, in the file's folder. Its
// handles live as long as the batch (about a second), so a folder renamed
// during it is still read from for the files the scan listed in it. Safe
// for concurrent use; close releases the handles.
type folderReader struct {
	e     *Engine
	mu    sync.Mutex
	vault *os.Root
	dirs  map[string]*os.Root // by path relative to the vault; "" is the vault
}

func (e *Engine) newFolderReader() *folderReader { return &folderReader{e: e} }

// read is readMemory(rel) through rel's folder.
func (f *folderReader) read(rel string) ([]byte, fs.FileInfo, error) {
	dir, name := path.Split(rel)
	r, err := f.folder(strings.TrimSuffix(dir, "/"))
	if err != nil {
		return nil, nil, f.e.vaultErr(rel, err)
	}
	return f.e.readAt(r, name, rel)
}

// folder returns the open folder dir (relative to the vault), opening the
// vault and the folder on first use. Failures are not kept: the next file
// tries again, and gets the error of its own attempt (read names the file
// in it).
func (f *folderReader) folder(dir string) (*os.Root, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r := f.dirs[dir]; r != nil {
		return r, nil
	}
	if f.vault == nil {
		v, err := f.e.openVault()
		if err != nil {
			return nil, err
		}
		f.vault, f.dirs = v, map[string]*os.Root{"": v}
		if dir == "" {
			return v, nil
		}
	}
	r, err := f.vault.OpenRoot(filepath.FromSlash(dir))
	if err != nil {
		return nil, err
	}
	f.dirs[dir] = r
	return r, nil
}

// close closes every folder the reader opened.
func (f *folderReader) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.dirs {
		r.Close()
	}
	f.vault, f.dirs = nil, nil
}

// writeMemory writes data to rel atomically: a hidden temporary file in the
// same folder (the scan ignores hidden files), flushed to disk, then renamed
// over rel. With noClobber it fails with ErrExists if rel exists (a hard
// link makes the check and the rename one step). It never replaces anything
// but a regular file: a link, FIFO or device at rel is refused.
func (e *Engine) writeMemory(rel string, data []byte, perm fs.FileMode, noClobber bool) error {
	tmp, err := e.stageMemory(path.Dir(rel), data, perm)
	if err != nil {
		return fmt.Errorf("write: %w", e.vaultErr(rel, err))
	}
	return e.placeMemory(tmp, rel, noClobber)
}

// stageMemory writes data to a new hidden file in folder, flushed to disk,
// and returns its name (relative to the memory folder) for placeMemory.
// It takes no lock: the flush, the slow part of a write, can run beside
// other writes.
func (e *Engine) stageMemory(folder string, data []byte, perm fs.FileMode) (string, error) {
	r, err := e.openVault()
	if err != nil {
		return "", err
	}
	defer r.Close()
	return writeTemp(r, folder, data, perm)
}

// discardStaged removes a file stageMemory wrote that is not to be placed.
func (e *Engine) discardStaged(tmp string) {
	if r, err := e.openVault(); err == nil {
		r.Remove(tmp)
		r.Close()
	}
}

// placeMemory renames the staged file tmp to rel, as writeMemory says, or
// removes it if it cannot.
func (e *Engine) placeMemory(tmp, rel string, noClobber bool) error {
	r, err := e.openVault()
	if err != nil {
		return err
	}
	defer r.Close()
	defer r.Remove(tmp) // fails harmlessly once renamed
	name := filepath.FromSlash(rel)
	if fi, err := r.Lstat(name); err == nil {
		if noClobber {
			return fmt.Errorf("%s: %w", rel, ErrExists)
		}
		if !fi.Mode().IsRegular() {
			return e.notRegular(rel, fi.Mode())
		}
	}
	old := e.stamp(rel)
	if noClobber {
		err = renameNoClobber(r, tmp, name)
	} else {
		err = r.Rename(tmp, name)
	}
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s: %w", rel, ErrExists)
	}
	if err != nil {
		return fmt.Errorf("write: %w", e.vaultErr(rel, err))
	}
	// Sync notices a change by size and modification time. On a file
	// system with coarse timestamps an edit of the same size could keep
	// both, and go unnoticed: move the time on.
	if fi, err := r.Lstat(name); err == nil && fi.Mode().IsRegular() && old.size == fi.Size() && old.mtimeNs == fi.ModTime().UnixNano() {
		t := time.Unix(0, old.mtimeNs).Add(time.Millisecond)
		r.Chtimes(name, t, t)
	}
	return nil
}

// writeTemp writes data to a new hidden file in dir (relative to r),
// flushed to disk and with mode perm, and returns its name.
func writeTemp(r *os.Root, dir string, data []byte, perm fs.FileMode) (string, error) {
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(filepath.FromSlash(dir), ".mnemo-"+hex.EncodeToString(rnd[:])+".tmp")
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = r.Chmod(tmp, perm)
	}
	if err != nil {
		r.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// renameNoClobber renames src to dst inside r unless dst exists
// (fs.ErrExist). A hard link followed by removing src makes the check and
// the rename one step; where links are not supported it falls back to
// check-then-rename.
func renameNoClobber(r *os.Root, src, dst string) error {
	err := r.Link(src, dst)
	if err == nil {
		return r.Remove(src)
	}
	if errors.Is(err, fs.ErrExist) {
		return fs.ErrExist
	}
	if _, err := r.Lstat(dst); err == nil {
		return fs.ErrExist
	}
	return r.Rename(src, dst)
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

// abs is rel's absolute path, for messages and for the watcher, which
// matches the paths fsnotify reports. File access goes through openVault.
func (e *Engine) abs(rel string) string { return filepath.Join(e.root, filepath.FromSlash(rel)) }
