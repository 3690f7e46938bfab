//go:build linux

package store

import (
	"fmt"
	"os"
	"strconv"
	"strings"
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

// mappedFileBytes is how much of the process's resident memory is file
// pages (the third field of /proc/self/statm, which counts shared memory
// too); 0 when it cannot be read.
func mappedFileBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return 0
	}
	n, _ := strconv.ParseInt(f[2], 10, 64)
	return n * int64(os.Getpagesize())
}
