//go:build unix

package transcript

import "syscall"

// mapBlock is n zeroed bytes of anonymous memory outside the Go heap, or
// nil if the system refuses them (the caller then uses the heap).
func mapBlock(n int) []byte {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil
	}
	return b
}

// freeBlock gives a block from mapBlock back to the system.
func freeBlock(b []byte) { _ = syscall.Munmap(b) }
