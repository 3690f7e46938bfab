package embed

import "sync"

// unknownCacheWords is how many stand-ins one generation of the cache
// holds; two generations are kept. A full sync of tldr (38,430 pages)
// asks for 664,571 stand-ins, one per unknown word per Embed call, of
// 74,375 distinct words: 4,096 a generation answers 83.5% of them (an
// unbounded cache 88.8%) in at most about 4 MB.
const unknownCacheWords = 4096

// maxCachedWord is the longest word whose stand-in is kept: a long run
// of letters (a hash, a base64 blob) is rarely seen twice, and would
// make the cache's size depend on its keys.
const maxCachedWord = 64

// unknownCache keeps the stand-ins of recently seen unknown words,
// shared by every Embed call: sync workers embed the memories of one
// folder at a time, which repeat the same command names and jargon. It
// is bounded by two generations: when the current one is full it becomes
// the old one and the older is dropped, and a word found in the old one
// moves to the current. Entries are never changed once stored, so a hit
// is the vector unknown would build, bit for bit. Safe for concurrent use.
type unknownCache struct {
	mu       sync.RWMutex
	max      int // words per generation
	cur, old map[string]*unknownWord
}

func newUnknownCache(max int) *unknownCache {
	return &unknownCache{max: max, cur: make(map[string]*unknownWord, max)}
}

// get returns the cached stand-in of tok, or nil.
func (c *unknownCache) get(tok []byte) *unknownWord {
	c.mu.RLock()
	u := c.cur[string(tok)]
	if u != nil {
		c.mu.RUnlock()
		return u
	}
	u = c.old[string(tok)]
	c.mu.RUnlock()
	if u != nil {
		c.put(string(tok), u)
	}
	return u
}

// put stores u as tok's stand-in in the current generation.
func (c *unknownCache) put(tok string, u *unknownWord) {
	if len(tok) > maxCachedWord {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.cur[tok]; ok {
		return
	}
	if len(c.cur) >= c.max {
		c.old, c.cur = c.cur, make(map[string]*unknownWord, c.max)
	}
	c.cur[tok] = u
}
