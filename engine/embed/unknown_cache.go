package embed

import (
	"hash/maphash"
	"math/bits"
	"sync/atomic"
)

// unknownCacheWords is how many stand-ins the cache holds. A full sync of
// tldr (38,430 pages) asks for 1,064,499 stand-ins, one per occurrence in
// a chunk of an unknown word of three to 64 bytes with a letter, of 77,177
// distinct words: 16,384 entries answer 90.8% of them (8,192: 89.4%, an unbounded
// cache 92.7%) in about 3 MB (176 bytes an entry).
const unknownCacheWords = 16384

// maxCachedWord is the longest word whose stand-in is kept: a long run
// of letters (a hash, a base64 blob) is rarely seen twice, and would
// make the cache's size depend on its keys.
const maxCachedWord = 64

// unknownCache keeps the stand-ins of recently seen unknown words,
// shared by every Embed call: sync workers embed the memories of one
// folder at a time, which repeat the same command names and jargon.
//
// It is a two-way set-associative table of immutable entries reached
// through atomic pointers, so a look-up takes no lock and the workers
// never wait on, or bounce a lock's cache line between, one another. A
// word's set is two adjacent slots chosen by its hash; a new entry goes
// first and pushes the other one out, and a hit in the second slot moves
// to the first. Two workers storing at once may lose an entry, never
// corrupt one: each slot holds a whole entry or none. Entries are never
// changed once stored, so a hit is the vector unknown would build, bit
// for bit.
type unknownCache struct {
	seed  maphash.Seed
	slots []atomic.Pointer[standIn]
	mask  uint64 // len(slots) − 2: picks a set's first slot
}

// standIn is one cache entry: a word and its stand-in, f·q.
type standIn struct {
	n    uint8 // the word is word[:n]
	ok   bool  // false: the word gets no stand-in
	word [maxCachedWord]byte
	f    float32
	q    [builtinDim]byte // int8 sums of the ±1s
}

// newUnknownCache returns a cache of size entries rounded up to a power of
// two, at least two.
func newUnknownCache(size int) *unknownCache {
	n := 1 << bits.Len(uint(max(2, size)-1))
	return &unknownCache{seed: maphash.MakeSeed(), slots: make([]atomic.Pointer[standIn], n), mask: uint64(n - 2)}
}

// is reports whether e is tok's entry.
func (e *standIn) is(tok []byte) bool {
	return e != nil && int(e.n) == len(tok) && string(e.word[:e.n]) == string(tok)
}

// get returns the cached stand-in of tok, or nil.
func (c *unknownCache) get(tok []byte) *standIn {
	if len(tok) > maxCachedWord {
		return nil
	}
	i := maphash.Bytes(c.seed, tok) & c.mask
	if e := c.slots[i].Load(); e.is(tok) {
		return e
	}
	if e := c.slots[i+1].Load(); e.is(tok) {
		if first := c.slots[i].Swap(e); first != e { // most recently used first
			c.slots[i+1].Store(first)
		}
		return e
	}
	return nil
}

// put stores e in the first slot of its word's set, the entry there
// moving to the second.
func (c *unknownCache) put(e *standIn) {
	w := e.word[:e.n]
	i := maphash.Bytes(c.seed, w) & c.mask
	if first := c.slots[i].Swap(e); first != nil && !first.is(w) {
		c.slots[i+1].Store(first)
	}
}
