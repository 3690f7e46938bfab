//go:build linux

package store

import (
	"fmt"
	"syscall"
)

// releaseMapping advises the kernel that the n bytes mapped at addr are
// not needed (MADV_DONTNEED): for a read-only shared file mapping that
// only unmaps the pages from this process, whose data stays in the file
// and the page cache.
func releaseMapping(addr, n uintptr) error {
	if addr == 0 || n == 0 {
		return nil
	}
	if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, addr, n, syscall.MADV_DONTNEED); errno != 0 {
		return fmt.Errorf("release the state store's pages: %w", errno)
	}
	return nil
}
