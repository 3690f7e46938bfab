package table

import (
	"encoding/binary"
	"errors"
	"hash/maphash"
	"math/bits"
)

// Index finds the row of a word. It is the embedder's hottest look-up (a
// sync of tldr makes about three million, most of them of short words
// the table has), so it is built for that rather than being a
// map[string]int32, which costs about twice as much (BenchmarkIndex):
// one flat array of 16-byte slots, open addressing with linear probing
// at a load of at most 0.55. A slot holds a tag (hash bits and the
// word's length), the row and the word's first eight bytes, so a probe
// reads one slot, and a word of up to eight bytes — most words of most
// texts — is found or ruled out without reading anything else. Longer
// words compare their tail with the word block. The index holds no
// pointer per word, so the garbage collector has nothing in it to scan.
// It is read-only once built and safe for concurrent use.
type Index struct {
	seed  maphash.Seed // hashes words longer than eight bytes
	slots []slot
	mask  uint64
	block string   // the words
	offs  []uint32 // per row: where its word starts in block
}

type slot struct {
	tag  uint32 // hash bits 40..63, then the word's length; 0 marks an empty slot
	row  uint32
	head uint64 // the word's first eight bytes, little-endian, zero-padded
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
	return &Index{seed: maphash.MakeSeed(), slots: make([]slot, size), mask: size - 1, block: block, offs: make([]uint32, n)}
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

// add indexes block[off:off+n] as row r, which must be below the n given
// to newIndex; n is 1 to maxWordLen.
func (x *Index) add(off, n, r int) error {
	var b [maxWordLen]byte
	w := b[:copy(b[:], x.block[off:off+n])]
	if _, ok := x.Row(w); ok {
		return errDuplicate
	}
	head := load8(w)
	h := x.hash(w, head)
	for i := h & x.mask; ; i = (i + 1) & x.mask {
		if s := &x.slots[i]; s.tag == 0 {
			*s = slot{tag: tag(h, n), row: uint32(r), head: head}
			x.offs[r] = uint32(off)
			return nil
		}
	}
}

// Row returns the row of word w, or false if the table lacks it.
func (x *Index) Row(w []byte) (int32, bool) {
	n := len(w)
	if n == 0 || n > maxWordLen {
		return -1, false
	}
	head := load8(w)
	h := x.hash(w, head)
	t := tag(h, n)
	for i := h & x.mask; ; i = (i + 1) & x.mask {
		s := &x.slots[i]
		if s.tag == t && s.head == head && (n <= 8 || x.tailIs(s.row, w)) {
			return int32(s.row), true
		}
		if s.tag == 0 {
			return -1, false
		}
	}
}

// tailIs reports whether row r's word ends as w does after its first
// eight bytes; the caller has checked the rest.
func (x *Index) tailIs(r uint32, w []byte) bool {
	off := int(x.offs[r])
	return x.block[off+8:off+len(w)] == string(w[8:])
}

// hash hashes w, whose first eight bytes are head: words of up to eight
// bytes with a multiply-xorshift mix of head (MurmurHash3's finaliser),
// longer ones with maphash. No seed is needed for the short ones: the
// words in the table are fixed, so no input can lengthen a probe beyond
// the longest run of full slots.
func (x *Index) hash(w []byte, head uint64) uint64 {
	if len(w) > 8 {
		return maphash.Bytes(x.seed, w)
	}
	h := head ^ uint64(len(w))<<59
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	return h ^ h>>33
}

func tag(h uint64, n int) uint32 { return uint32(h>>32)&^0xff | uint32(n) }

// load8 returns the first eight bytes of w as a little-endian number,
// zero-padded if w is shorter.
func load8(w []byte) uint64 {
	if len(w) >= 8 {
		return binary.LittleEndian.Uint64(w)
	}
	var h uint64
	for i := len(w) - 1; i >= 0; i-- {
		h = h<<8 | uint64(w[i])
	}
	return h
}
