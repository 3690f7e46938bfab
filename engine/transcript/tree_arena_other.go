//go:build !unix

package transcript

// mapBlock is nil where anonymous mappings are not at hand: the arena
// takes its blocks from the heap.
func mapBlock(int) []byte { return nil }

// freeBlock has nothing to give back: the collector frees heap blocks.
func freeBlock([]byte) {}
