package vault

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
)

// Reader reads memory files for a sync batch, opening each folder once,
// as an os.Root reached through the vault's (so a folder link out of the
// memory folder is refused as it is by Read). A file then costs one
// fstatat, one openat, one fstat, its reads and a close, where Read opens
// the vault and walks every folder of the path twice. The rules are
// Read's: the same Lstat, size bound, O_NONBLOCK open and same-file check,
// in the file's folder. Its handles live as long as the batch (about a
// second), so a folder renamed during it is still read from for the files
// the walk listed in it. Safe for concurrent use; Close releases the
// handles.
type Reader struct {
	v     *Vault
	mu    sync.Mutex
	vault *os.Root
	dirs  map[string]*os.Root // by path relative to the vault; "" is the vault
}

// NewReader returns a Reader of v with no folder open yet.
func (v *Vault) NewReader() *Reader { return &Reader{v: v} }

// Read is Vault.Read(rel) through rel's folder.
func (f *Reader) Read(rel string) ([]byte, fs.FileInfo, error) {
	dir, name := path.Split(rel)
	r, err := f.folder(strings.TrimSuffix(dir, "/"))
	if err != nil {
		return nil, nil, f.v.WrapErr(rel, err)
	}
	return f.v.readAt(r, name, rel)
}

// folder returns the open folder dir (relative to the vault), opening the
// vault and the folder on first use. Failures are not kept: the next file
// tries again, and gets the error of its own attempt (Read names the file
// in it).
func (f *Reader) folder(dir string) (*os.Root, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r := f.dirs[dir]; r != nil {
		return r, nil
	}
	if f.vault == nil {
		v, err := f.v.OpenRoot()
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

// Close closes every folder the reader opened.
func (f *Reader) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.dirs {
		r.Close()
	}
	f.vault, f.dirs = nil, nil
}
