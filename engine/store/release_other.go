//go:build !linux

package store

// releaseMapping does nothing where there is no madvise to ask.
func releaseMapping(addr, n uintptr) error { return nil }
