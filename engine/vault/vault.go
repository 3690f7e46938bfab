// Package vault is the memory folder on disk, as a value: the one rule for
// what a memory file is, and every read, write and walk of one.
//
//   - A memory file is a regular file inside the memory folder whose name
//     ends in .md or .markdown. Symbolic links, folders, devices, FIFOs and
//     sockets are never memories: they are refused with a clear error
//     (ErrNotRegular) after an Lstat, without being opened.
//   - Every access goes through an os.Root opened on the memory folder, so
//     no path, symlinked folder or race can reach a file outside it.
//   - Every read is bounded by Options.MaxFileBytes; every write is atomic
//     (a hidden temporary file in the same folder, flushed, then renamed).
//
// Symbolic links inside the vault are not followed by the walk: a memory
// has one path, its real one. An identifier that goes through an in-vault
// folder link (a/up/x.md with a/up → ..) is resolved to that real path
// (RealRel).
package vault

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"
)

// Options say how Open sets a vault up.
type Options struct {
	// MaxFileBytes bounds every read of a memory file; it must be > 0.
	MaxFileBytes int64
	// IndexDir is the index folder; when it lies inside the memory folder
	// the ignore rules leave it out.
	IndexDir string
	// ReadOnly: the vault never writes, so whether its volume folds case
	// is probed without creating a file.
	ReadOnly bool
	// FoldsCase says the volume folds case without probing it (tests
	// simulate such a volume on one that does not); false means probe.
	FoldsCase bool
	// ToolIgnore is ignore rules a tool's own layout adds (Logseq's
	// logseq/ folder), applied before the vault's .mnemoignore so that
	// file can bring a path back.
	ToolIgnore string
	// Indexed reports the size and modification time an index holds for
	// rel (size -1 if none). Place moves a replaced file's time on when
	// both would stay the same, so that the change is seen; nil means no
	// index.
	Indexed func(rel string) (size, mtimeNs int64)
}

// Vault is one memory folder. It holds no open file: the folder is opened
// per operation (one open(2)), so a memory folder replaced while the
// engine runs is seen as it is now. Safe for concurrent use.
type Vault struct {
	root      string // absolute
	limit     int64
	indexRel  string // the index folder relative to root, "" if outside it
	foldsCase bool
	tool      string
	indexed   func(rel string) (size, mtimeNs int64)
	ignore    atomic.Pointer[Rules] // the rules last loaded (ignore.go)
}

// Open sets up the vault of the memory folder root, which the caller has
// checked is a folder. It probes whether the volume folds case (see
// Options.ReadOnly), which a writer does with a file of its own.
func Open(root string, opts Options) (*Vault, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("memory folder: %w", err)
	}
	v := &Vault{root: root, limit: opts.MaxFileBytes, tool: opts.ToolIgnore, indexed: opts.Indexed}
	v.foldsCase = opts.FoldsCase || foldsCase(root, opts.ReadOnly)
	if ia, err := filepath.Abs(opts.IndexDir); err == nil && opts.IndexDir != "" {
		if r, err := filepath.Rel(root, ia); err == nil && r != "." && filepath.IsLocal(r) {
			v.indexRel = filepath.ToSlash(r)
		}
	}
	return v, nil
}

// Root is the memory folder's absolute path.
func (v *Vault) Root() string { return v.root }

// IndexRel is the index folder relative to the memory folder, "" when it
// lies outside it.
func (v *Vault) IndexRel() string { return v.indexRel }

// Abs is rel's absolute path, for messages and for the watcher, which
// matches the paths fsnotify reports. File access goes through OpenRoot.
func (v *Vault) Abs(rel string) string { return filepath.Join(v.root, filepath.FromSlash(rel)) }

// OpenRoot opens the memory folder as an os.Root, for a series of
// operations that must see one folder; the caller closes it.
func (v *Vault) OpenRoot() (*os.Root, error) {
	r, err := os.OpenRoot(v.root)
	if err != nil {
		return nil, fmt.Errorf("open memory folder: %w", err)
	}
	return r, nil
}

// KindOf names a file's type for an error message.
func KindOf(m fs.FileMode) string {
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

// StatIn checks that rel is a memory file: it Lstats rel inside r (a
// symlinked folder on the way may be followed only while it stays inside)
// and refuses anything but a regular file.
func (v *Vault) StatIn(r *os.Root, rel string) (fs.FileInfo, error) {
	return v.statAt(r, filepath.FromSlash(rel), rel)
}

// statAt is StatIn for the memory rel, which is name inside r.
func (v *Vault) statAt(r *os.Root, name, rel string) (fs.FileInfo, error) {
	fi, err := r.Lstat(name)
	if err != nil {
		return nil, v.WrapErr(rel, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, v.NotRegular(rel, fi.Mode())
	}
	return fi, nil
}

// NotRegular is the error for a non-regular entry at rel. A link that
// leaves the memory folder is reported as ErrOutsideRoot.
func (v *Vault) NotRegular(rel string, m fs.FileMode) error {
	if m&fs.ModeSymlink != 0 {
		if _, err := RealRel(v.root, rel); errors.Is(err, ErrOutsideRoot) {
			return fmt.Errorf("%s is a symbolic link out of the memory folder: %w", rel, ErrOutsideRoot)
		}
	}
	return fmt.Errorf("%s is %s: %w", rel, KindOf(m), ErrNotRegular)
}

// WrapErr wraps an error of an os.Root operation on rel. os.Root refuses
// a path that escapes through a symlink with an unexported error; that
// case is reported as ErrOutsideRoot.
func (v *Vault) WrapErr(rel string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w", rel, err)
	}
	if _, rerr := RealRel(v.root, rel); errors.Is(rerr, ErrOutsideRoot) {
		return fmt.Errorf("%s: %w", rel, ErrOutsideRoot)
	}
	return fmt.Errorf("%s: %w", rel, err)
}

// Read reads the memory file rel: regular files only, at most
// Options.MaxFileBytes. The file opened must be the one Lstat saw, so an
// entry swapped for a link or a FIFO in between is refused, and the open
// does not block on a FIFO either way.
func (v *Vault) Read(rel string) ([]byte, fs.FileInfo, error) {
	r, err := v.OpenRoot()
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	return v.ReadIn(r, rel)
}

// ReadIn is Read on an open vault.
func (v *Vault) ReadIn(r *os.Root, rel string) ([]byte, fs.FileInfo, error) {
	return v.readAt(r, filepath.FromSlash(rel), rel)
}

// readAt reads the memory rel, which is name inside r (the vault, or the
// folder that holds it), with Read's rules.
func (v *Vault) readAt(r *os.Root, name, rel string) ([]byte, fs.FileInfo, error) {
	fi, err := v.statAt(r, name, rel)
	if err != nil {
		return nil, nil, err
	}
	limit := v.limit
	if fi.Size() > limit {
		return nil, nil, fmt.Errorf("%s is %d bytes, over the %d-byte limit: %w", rel, fi.Size(), limit, ErrInvalid)
	}
	f, err := r.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, v.WrapErr(rel, err)
	}
	defer f.Close()
	ofi, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", rel, err)
	}
	if !ofi.Mode().IsRegular() || !os.SameFile(fi, ofi) {
		return nil, nil, fmt.Errorf("%s changed into %s while being opened: %w", rel, KindOf(ofi.Mode()), ErrNotRegular)
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
// that would return its end (one syscall of seven a file). Otherwise, as
// for a file that grew since fstat, it reads on, still bounded.
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

// Write writes data to rel atomically: a hidden temporary file in the
// same folder (the walk ignores hidden files), flushed to disk, then
// renamed over rel. With noClobber it fails with ErrExists if rel exists
// (a hard link makes the check and the rename one step). It never replaces
// anything but a regular file: a link, FIFO or device at rel is refused.
func (v *Vault) Write(rel string, data []byte, perm fs.FileMode, noClobber bool) error {
	tmp, err := v.Stage(path.Dir(rel), data, perm)
	if err != nil {
		return fmt.Errorf("write: %w", v.WrapErr(rel, err))
	}
	return v.Place(tmp, rel, noClobber)
}

// Stage writes data to a new hidden file in folder, flushed to disk, and
// returns its name (relative to the memory folder) for Place or Discard.
// It takes no lock: the flush, the slow part of a write, can run beside
// other writes.
func (v *Vault) Stage(folder string, data []byte, perm fs.FileMode) (string, error) {
	r, err := v.OpenRoot()
	if err != nil {
		return "", err
	}
	defer r.Close()
	return writeTemp(r, folder, data, perm)
}

// Discard removes a file Stage wrote that is not to be placed.
func (v *Vault) Discard(tmp string) {
	if r, err := v.OpenRoot(); err == nil {
		r.Remove(tmp)
		r.Close()
	}
}

// Place renames the staged file tmp to rel, as Write says, or removes it
// if it cannot.
func (v *Vault) Place(tmp, rel string, noClobber bool) error {
	r, err := v.OpenRoot()
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
			return v.NotRegular(rel, fi.Mode())
		}
	}
	oldSize, oldMtime := v.stamp(rel)
	if noClobber {
		err = RenameNoClobber(r, tmp, name)
	} else {
		err = r.Rename(tmp, name)
	}
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s: %w", rel, ErrExists)
	}
	if err != nil {
		return fmt.Errorf("write: %w", v.WrapErr(rel, err))
	}
	// Sync notices a change by size and modification time. On a file
	// system with coarse timestamps an edit of the same size could keep
	// both, and go unnoticed: move the time on.
	if fi, err := r.Lstat(name); err == nil && fi.Mode().IsRegular() && oldSize == fi.Size() && oldMtime == fi.ModTime().UnixNano() {
		t := time.Unix(0, oldMtime).Add(time.Millisecond)
		r.Chtimes(name, t, t)
	}
	return nil
}

// stamp is the size and modification time the index holds for rel (size
// -1 if none).
func (v *Vault) stamp(rel string) (size, mtimeNs int64) {
	if v.indexed == nil {
		return -1, 0
	}
	return v.indexed(rel)
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

// RenameNoClobber renames src to dst inside r unless dst exists
// (fs.ErrExist). A hard link followed by removing src makes the check and
// the rename one step; where links are not supported it falls back to
// check-then-rename.
func RenameNoClobber(r *os.Root, src, dst string) error {
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
