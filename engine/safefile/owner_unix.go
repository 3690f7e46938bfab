//go:build unix

package safefile

import (
	"fmt"
	"os"
	"syscall"
)

// checkPrivate refuses a file another user owns or may read or write.
func checkPrivate(fi os.FileInfo) error {
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("mode %v lets other users read or write it; want 0600", fi.Mode().Perm())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("owned by user %d, not this user (%d)", st.Uid, os.Getuid())
	}
	return nil
}

// OwnedByMe reports whether this user owns the file fi describes.
func OwnedByMe(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
