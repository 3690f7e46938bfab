package transcript

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// treeIDs numbers the ids a region's first pass meets. A long transcript's
// first read is one region of millions of records (a million Claude Code
// messages are ~5.8M records), each with a 36-character UUID: held as
// strings, with a map entry and a slice slot each, they were most of such
// a sync's heap. A UUID in its canonical lowercase form is held here as its
// 16 bytes, and given back as the same string; any other id is held as it
// is.
//
// The UUIDs are found through an open-addressing table of record numbers
// (slots) beside the 16-byte keys, in pages so that growing never copies
// them: about 16 + 5/0.75…16 + 5/0.375 bytes a UUID, where a Go map keyed
// by the 16 bytes took about 46 (one 1M-message session: 266 → 130 MB).
// A byte of each slot's hash (tags) is checked before its key is: a key is
// a cache miss away, and a new id's probe passes several slots.
type treeIDs struct {
	arena  *treeArena   // where pages and slots are
	pages  [][][16]byte // by number, treeIDPage a page; zero where the id is not a UUID
	n      int32
	slots  []int32 // a UUID's number + 1, at its hash or after; 0: free
	tags   []uint8 // beside each slot, 1 + its hash's top byte mod 255; 0: free
	used   int     // UUIDs in slots
	others map[string]int32
	plain  map[int32]string // the ids that are not UUIDs, by number
}

// treeIDPage is how many keys a page holds (1 MiB of them).
const treeIDPage = 1 << 16

func newTreeIDs(a *treeArena) *treeIDs {
	return &treeIDs{arena: a, others: map[string]int32{}, plain: map[int32]string{}}
}

// len is how many ids are numbered.
func (t *treeIDs) len() int32 { return t.n }

// key is the 16 bytes held for number k.
func (t *treeIDs) key(k int32) *[16]byte { return &t.pages[k/treeIDPage][k%treeIDPage] }

// lookup is id's number, if it has one.
func (t *treeIDs) lookup(id string) (int32, bool) {
	if u, ok := packUUID(id); ok {
		return t.find(&u)
	}
	k, found := t.others[id]
	return k, found
}

// find is the number of the UUID u, if it has one.
func (t *treeIDs) find(u *[16]byte) (int32, bool) {
	if len(t.slots) == 0 {
		return 0, false
	}
	h := uuidHash(u)
	mask, tag := uint64(len(t.slots)-1), hashTag(h)
	for i := h & mask; ; i = (i + 1) & mask {
		switch t.tags[i] {
		case 0:
			return 0, false
		case tag:
			if s := t.slots[i]; *t.key(s - 1) == *u {
				return s - 1, true
			}
		}
	}
}

// hashTag is the tag of hash h: never 0, which marks a free slot.
func hashTag(h uint64) uint8 { return uint8(1 + (h>>56)%255) }

// add numbers id, which has no number yet, next.
func (t *treeIDs) add(id string) int32 {
	k := t.n
	if k%treeIDPage == 0 {
		t.pages = append(t.pages, t.arena.keys(treeIDPage))
	}
	t.n++
	u, ok := packUUID(id)
	if !ok {
		t.others[id] = k
		t.plain[k] = id
		return k
	}
	*t.key(k) = u
	if (t.used+1)*4 > len(t.slots)*3 {
		t.grow()
	}
	t.place(k)
	t.used++
	return k
}

// place puts number k in the first free slot from its key's hash.
func (t *treeIDs) place(k int32) {
	h := uuidHash(t.key(k))
	mask := uint64(len(t.slots) - 1)
	i := h & mask
	for t.tags[i] != 0 {
		i = (i + 1) & mask
	}
	t.slots[i], t.tags[i] = k+1, hashTag(h)
}

// grow doubles the table, at least 1,024 slots.
func (t *treeIDs) grow() {
	old, oldTags := t.slots, t.tags
	t.slots = t.arena.int32s(max(1024, 2*len(old)))
	t.tags = t.arena.bytes(len(t.slots))
	for _, s := range old {
		if s != 0 {
			t.place(s - 1)
		}
	}
	t.arena.release(unsafe.Pointer(unsafe.SliceData(old)))
	t.arena.release(unsafe.Pointer(unsafe.SliceData(oldTags)))
}

// uuidHash mixes both halves of u, so that UUIDs differing in any byte
// (not only random ones) spread over the table.
func uuidHash(u *[16]byte) uint64 {
	a, b := binary.LittleEndian.Uint64(u[:8]), binary.LittleEndian.Uint64(u[8:])
	h := (a ^ bits.RotateLeft64(b, 29)) * 0x9e3779b97f4a7c15
	return h ^ h>>32
}

// id is the id numbered k, as it was written.
func (t *treeIDs) id(k int32) string {
	if s, ok := t.plain[k]; ok {
		return s
	}
	return formatUUID(*t.key(k))
}

// packUUID is s's 16 bytes when s is a UUID written as 8-4-4-4-12
// lowercase hex digits (the only form that formatUUID gives back).
func packUUID(s string) (u [16]byte, ok bool) {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return u, false
	}
	// One table load a digit, and one test for all of them: every digit
	// is below 16, anything else is 0xff (a lookup a record, for its id
	// and its parent's: 2 % of a 100k sync's CPU as a branch a digit).
	var bad byte
	for j, i := range uuidDigits {
		hi, lo := hexDigit[s[i]], hexDigit[s[i+1]]
		bad |= hi | lo
		u[j] = hi<<4 | lo
	}
	return u, bad < 16
}

// uuidDigits is where each byte's two digits start in a UUID's 36 characters.
var uuidDigits = [16]int{0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34}

// hexDigit is the value of a lowercase hex digit, 0xff for any other byte.
var hexDigit = func() (t [256]byte) {
	for c := range t {
		switch {
		case c >= '0' && c <= '9':
			t[c] = byte(c - '0')
		case c >= 'a' && c <= 'f':
			t[c] = byte(c - 'a' + 10)
		default:
			t[c] = 0xff
		}
	}
	return t
}()

// formatUUID writes u as packUUID reads it.
func formatUUID(u [16]byte) string {
	const digits = "0123456789abcdef"
	var b [36]byte
	j := 0
	for i, x := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b[j] = '-'
			j++
		}
		b[j], b[j+1] = digits[x>>4], digits[x&15]
		j += 2
	}
	return string(b[:])
}
