//go:build !linux

package store

// releaseMapping does nothing where there is no madvise to ask.
func releaseMapping(addr, n uintptr) error { return nil }

// mappedFileBytes is 0 where there is nothing to release.
func mappedFileBytes() int64 { return 0 }
