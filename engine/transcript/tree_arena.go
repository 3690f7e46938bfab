package transcript

import "unsafe"

// treeArena holds a region's largest arrays — the ids' 16-byte keys, their
// hash table and the records' parents, ~30 bytes a record for as long as
// the read lasts — outside the Go heap where the system allows (see
// tree_arena_unix.go), and frees them when the read ends. On the heap they
// cost twice their size: the collector lets the heap grow to twice what is
// live before it runs, so 150 MB held through a 1M-message session's read
// (5.8M records) raised the sync's peak by ~300 MB; held outside it they
// cost their size. Nothing may keep a slice of the arena once free is
// called: tree code hands out copies (treeIDs.id) and numbers only.
type treeArena struct {
	blocks [][]byte // mapped by alloc, not yet freed
}

// int32s is n zeroed int32s.
func (a *treeArena) int32s(n int) []int32 {
	if n == 0 {
		return nil
	}
	b := a.alloc(n * 4)
	return unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// keys is n zeroed 16-byte keys.
func (a *treeArena) keys(n int) [][16]byte {
	if n == 0 {
		return nil
	}
	b := a.alloc(n * 16)
	return unsafe.Slice((*[16]byte)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// bytes is n zeroed bytes.
func (a *treeArena) bytes(n int) []byte {
	if n == 0 {
		return nil
	}
	return a.alloc(n)
}

// release frees the block that starts at p (the data of a slice from
// int32s, keys or bytes); nil frees nothing.
func (a *treeArena) release(p unsafe.Pointer) {
	if p == nil {
		return
	}
	for i, b := range a.blocks {
		if unsafe.Pointer(unsafe.SliceData(b)) == p {
			a.blocks = append(a.blocks[:i], a.blocks[i+1:]...)
			freeBlock(b)
			return
		}
	}
}

// free frees every block; a nil arena frees nothing.
func (a *treeArena) free() {
	if a == nil {
		return
	}
	for _, b := range a.blocks {
		freeBlock(b)
	}
	a.blocks = nil
}

// alloc is n zeroed bytes, from the system where it allows, else the heap.
func (a *treeArena) alloc(n int) []byte {
	b := mapBlock(n)
	if b == nil {
		return make([]byte, n) // the collector frees it; freeBlock ignores it
	}
	a.blocks = append(a.blocks, b)
	return b
}

// treeInts is a growing array of int32s in arena pages of treeIDPage, so
// that growing never copies it.
type treeInts struct {
	a     *treeArena
	pages [][]int32
	n     int32
}

// push appends v.
func (s *treeInts) push(v int32) {
	if s.n%treeIDPage == 0 {
		s.pages = append(s.pages, s.a.int32s(treeIDPage))
	}
	s.pages[s.n/treeIDPage][s.n%treeIDPage] = v
	s.n++
}

// at is the k-th int32.
func (s *treeInts) at(k int32) int32 { return s.pages[k/treeIDPage][k%treeIDPage] }

// set makes the k-th int32 v.
func (s *treeInts) set(k, v int32) { s.pages[k/treeIDPage][k%treeIDPage] = v }
