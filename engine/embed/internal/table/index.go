package table

import (
	"errors"
	"hash/maphash"
	"math/bits"
)

// Index finds the row of a word. It is the embedder's hottest look-up (a
// sync of tldr makes about three million, most of them of short words
// the table has), so it is built for that rather than being a
// map[string]int32, which costs twice as much here (BenchmarkIndex): one
// flat array of 12-byte slots, open addressing with linear probing at a
// load of at most 0.55. A slot holds a tag (the top 24 bits of the hash
// and the word's length) beside the row and the word's offset in one
// block of text: a probe compares the tag, and the bytes only when the
// tag agrees, which is almost only for the word itself. The index holds
// no pointer per word, so the garbage collector has nothing in it to
// scan. It is read-only once built and safe for concurrent use.
type Index struct {
	seed  maphash.Seed
	slots []slot
	mask  uint64
	block string // the words; slot.off says where each starts
}

type slot struct {
	tag uint32 // hash bits 40..63, then the word's length; 0 marks an empty slot
	row uint32
	off uint32
}

// maxWordLen is the longest word an Index holds: the table format stores
// lengths in one byte.
const maxWordLen = 255

// errDuplicate is what add returns for a word the index already has.
var errDuplicate = errors.New("duplicate word")

// newIndex returns an empty index for n words over block, the text whose
// substrings they are.
func newIndex(block string, n int) *Index {
	size := uint64(1) << bits.Len64(uint64(n+n*4/5)) // load <= 1/1.8
	return &Index{seed: maphash.MakeSeed(), slots: make([]slot, size), mask: size - 1, block: block}
}

// NewIndex indexes words, row r being words[r]. Words must be 1 to 255
// bytes long and distinct.
func NewIndex(words []string) (*Index, error) {
	n := 0
	for _, w := range words {
		n += len(w)
	}
	b := make([]byte, 0, n)
	for _, w := range words {
		b = append(b, w...)
	}
	x := newIndex(string(b), len(words))
	off := 0
	for r, w := range words {
		if len(w) == 0 || len(w) > maxWordLen {
			return nil, errors.New("word of length 0 or over 255 bytes")
		}
		if err := x.add(off, len(w), r); err != nil {
			return nil, err
		}
		off += len(w)
	}
	return x, nil
}

// add indexes block[off:off+n] as row r; n is 1 to maxWordLen.
func (x *Index) add(off, n, r int) error {
	w := x.block[off : off+n]
	h := maphash.String(x.seed, w)
	tag := uint32(h>>32)&^0xff | uint32(n)
	for i := h & x.mask; ; i = (i + 1) & x.mask {
		s := &x.slots[i]
		if s.tag == 0 {
			*s = slot{tag: tag, row: uint32(r), off: uint32(off)}
			return nil
		}
		if s.tag == tag && x.block[s.off:s.off+uint32(n)] == w {
			return errDuplicate
		}
	}
}

// Row returns the row of word w, or false if the table lacks it.
func (x *Index) Row(w []byte) (int32, bool) {
	if len(w) == 0 || len(w) > maxWordLen {
		return -1, false
	}
	h := maphash.Bytes(x.seed, w)
	tag := uint32(h>>32)&^0xff | uint32(len(w))
	for i := h & x.mask; ; i = (i + 1) & x.mask {
		s := &x.slots[i]
		if s.tag == tag && x.block[s.off:s.off+uint32(len(w))] == string(w) {
			return int32(s.row), true
		}
		if s.tag == 0 {
			return -1, false
		}
	}
}
