// Package safefile writes and reads the small files a process keeps in a
// folder other processes may also write to (the index folder: writer.pid,
// serve.addr, the HTTP token), so that a link planted there cannot turn a
// write or a read against its owner.
//
// A write never opens the final name: it creates a new file under a random
// name with O_EXCL (which fails on any existing entry, a symbolic link
// included, and so never follows one), flushes it, and renames it over the
// final name (a rename replaces a link; it does not write through it). A
// read opens only a regular file that is not a link.
package safefile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// TempPrefix and TempSuffix frame the names of Write's temporary files
// (and the engine's own, in the memory folder): ".mnemo-<hex>.tmp". A
// process that holds the index removes those a crash left (RemoveStale).
const (
	TempPrefix = ".mnemo-"
	TempSuffix = ".tmp"
)

// Write replaces path with a new file holding data, mode perm, without
// following a link at path or at the temporary name.
func Write(path string, data []byte, perm os.FileMode) error {
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(filepath.Dir(path), TempPrefix+hex.EncodeToString(rnd[:])+TempSuffix)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm) // the umask may have narrowed or, never, widened it
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ErrNotRegular is Read's answer to a link, folder, FIFO or device.
var ErrNotRegular = errors.New("not a regular file")

// Read returns the contents of path, at most max bytes, if it is a regular
// file and not a link; private also demands that only its owner, this
// user, may read or write it (mode 0600 or narrower), where the system
// has such modes.
func Read(path string, max int64, private bool) ([]byte, error) {
	before, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !before.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w", path, ErrNotRegular)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !os.SameFile(before, fi) {
		return nil, fmt.Errorf("%s changed while it was opened: %w", path, ErrNotRegular)
	}
	if private {
		if err := checkPrivate(fi); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s is over %d bytes", path, max)
	}
	return b, nil
}

// IsTemp reports whether name (a base name) is one of Write's or the
// engine's temporary files.
func IsTemp(name string) bool {
	return strings.HasPrefix(name, TempPrefix) && strings.HasSuffix(name, TempSuffix) && len(name) > len(TempPrefix)+len(TempSuffix)
}
