package vectors

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	chromem "github.com/philippgille/chromem-go"
)

// Chromem is a Store over chromem-go collections, in memory. The vectors
// are persisted by the caller (the engine keeps them in its bbolt state
// store and loads them at open: measured faster than chromem-go's own gob
// file per document, docs/design.md).
//
// Items are spread over several collections by a hash of their id, and a
// query asks every collection at once and merges: chromem-go's query cost
// grows faster than linearly with a collection's size, so several small
// collections answer sooner than one large one even on two cores.
type Chromem struct {
	mu     sync.RWMutex
	shards []*chromem.Collection
	items  map[string][][]float32 // id → unit vectors by chunk (nil: left out); shared with chromem-go
	chunks int
}

// DefaultShards is how many collections NewChromem makes when asked for 0:
// the fastest of 1, 2, 4, 8 and 16 at 10k chunks on two cores, and never
// the slowest at 1k or 48k (BenchmarkQuery): each collection's query
// starts its own goroutines, so more collections than cores cost more
// than they save on a small store.
const DefaultShards = 4

// NewChromem returns an empty store of shards collections (0 means
// DefaultShards).
func NewChromem(shards int) (*Chromem, error) {
	if shards <= 0 {
		shards = DefaultShards
	}
	db := chromem.NewDB()
	// Vectors come in ready-made: chromem-go must never embed a text itself.
	noEmbed := func(context.Context, string) ([]float32, error) {
		return nil, errors.New("vectors are computed by the caller, not by chromem-go")
	}
	s := &Chromem{items: map[string][][]float32{}}
	for i := range shards {
		c, err := db.CreateCollection("chunks-"+strconv.Itoa(i), nil, noEmbed)
		if err != nil {
			return nil, fmt.Errorf("create vector collection %d: %w", i, err)
		}
		s.shards = append(s.shards, c)
	}
	return s, nil
}

func (s *Chromem) shardOf(id string) int { return shardOf(id, len(s.shards)) }

// shardOf is the collection of n an item falls in, by a hash of its id.
func shardOf(id string, n int) int { return shardOfBytes([]byte(id), n) }

// shardOfBytes is shardOf of an id held in bytes (Flat's, made by its
// key function).
// It is FNV-1a (hash/fnv's New32a) written out, so that a Flat loading a
// million items allocates no hash for each.
func shardOfBytes(id []byte, n int) int {
	h := uint32(2166136261)
	for _, c := range id {
		h ^= uint32(c)
		h *= 16777619
	}
	return int(h % uint32(n))
}

// chunkID names a chunk in chromem-go: the item id, '#', the chunk number.
func chunkID(id string, chunk int) string { return id + "#" + strconv.Itoa(chunk) }

func splitChunkID(cid string) (string, int) {
	i := strings.LastIndexByte(cid, '#')
	if i < 0 {
		return cid, 0
	}
	n, _ := strconv.Atoi(cid[i+1:])
	return cid[:i], n
}

// Put replaces the chunks of each item. A batch is added to the
// collections concurrently, one goroutine per collection: opening an index
// loads every vector through here.
func (s *Chromem) Put(ctx context.Context, items ...Item) error {
	type add struct {
		id   string
		unit [][]float32
		docs []chromem.Document
	}
	adds := make([]add, 0, len(items))
	byShard := make([][]chromem.Document, len(s.shards))
	last := make(map[string]int, len(items))
	for i, it := range items {
		last[it.ID] = i
	}
	for i, it := range items {
		if it.ID == "" {
			return errors.New("vector store: item id is empty")
		}
		if last[it.ID] != i {
			continue // the same item again later in the batch: the later one stands
		}
		a := add{id: it.ID, unit: make([][]float32, len(it.Vectors))}
		meta := make(map[string]string, len(it.Labels)+len(it.Meta))
		for k, v := range it.Meta {
			meta[k] = v
		}
		for _, l := range it.Labels {
			meta[l] = "1"
		}
		for i, v := range it.Vectors {
			if a.unit[i] = unit(v); a.unit[i] == nil {
				continue
			}
			a.docs = append(a.docs, chromem.Document{ID: chunkID(it.ID, i), Metadata: meta, Embedding: a.unit[i]})
		}
		adds = append(adds, a)
		sh := s.shardOf(it.ID)
		byShard[sh] = append(byShard[sh], a.docs...)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range adds {
		if err := s.deleteLocked(ctx, a.id); err != nil {
			return err
		}
	}
	errs := make([]error, len(s.shards))
	var wg sync.WaitGroup
	for i, docs := range byShard {
		if len(docs) == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, d := range docs {
				if err := s.shards[i].AddDocument(ctx, d); err != nil {
					errs[i] = fmt.Errorf("vector store: add %s: %w", d.ID, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, a := range adds {
		if len(a.docs) > 0 {
			s.items[a.id] = a.unit
			s.chunks += len(a.docs)
		}
	}
	return nil
}

// Delete drops every chunk of the item.
func (s *Chromem) Delete(ctx context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deleteLocked(ctx, id)
}

func (s *Chromem) deleteLocked(ctx context.Context, id string) error {
	old, ok := s.items[id]
	if !ok {
		return nil
	}
	var ids []string
	for i, v := range old {
		if v != nil {
			ids = append(ids, chunkID(id, i))
		}
	}
	if len(ids) > 0 {
		if err := s.shards[s.shardOf(id)].Delete(ctx, nil, nil, ids...); err != nil {
			return fmt.Errorf("vector store: delete %s: %w", id, err)
		}
	}
	delete(s.items, id)
	s.chunks -= len(ids)
	return nil
}

// Len is the number of chunks held.
func (s *Chromem) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.chunks
}

// Nearest returns item id's chunk nearest q.
func (s *Chromem) Nearest(q []float32, id string) (Hit, bool) {
	s.mu.RLock()
	vs := s.items[id]
	s.mu.RUnlock()
	h, ok := Hit{ID: id, Similarity: -2}, false
	for i, v := range vs {
		if v == nil || len(v) != len(q) {
			continue
		}
		if d := dot(q, v); d > h.Similarity {
			h.Chunk, h.Similarity, ok = i, d, true
		}
	}
	return h, ok
}

// Query asks every collection for its n nearest chunks in scope, at once,
// and keeps each item's nearest.
func (s *Chromem) Query(ctx context.Context, q []float32, n int, scope []string) (Found, error) {
	if n <= 0 {
		return Found{}, fmt.Errorf("vector store: asked for %d results, want > 0", n)
	}
	var where map[string]string
	if len(scope) > 0 {
		where = make(map[string]string, len(scope))
		for _, l := range scope {
			where[l] = "1"
		}
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	type part struct {
		res  []chromem.Result
		full bool // returned n chunks: there may be more
		err  error
	}
	parts := make([]part, len(s.shards))
	var wg sync.WaitGroup
	for i, c := range s.shards {
		count := c.Count()
		if count == 0 {
			continue
		}
		// chromem-go refuses nResults above the collection's size. One
		// more than n tells whether the n-th ties with a chunk left out.
		k := min(n+1, count)
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := c.QueryEmbedding(ctx, q, k, where, nil)
			parts[i] = part{res: res, full: len(res) > n, err: err}
		}()
	}
	wg.Wait()
	f := Found{Bound: -1, Complete: true}
	best := map[string]int{} // id → index in f.Hits
	for _, p := range parts {
		if p.err != nil {
			return Found{}, fmt.Errorf("vector store: query: %w", p.err)
		}
		res := p.res
		if p.full {
			f.Complete = false
			f.Bound = max(f.Bound, res[n-1].Similarity)
			// Which of the chunks that tie with the one left out chromem-go
			// returns is a race between its goroutines: keep none of them,
			// so the same query always finds the same items (those left out
			// are at most Bound, as every chunk not returned is).
			out := res[n].Similarity
			for res = res[:n]; len(res) > 0 && res[len(res)-1].Similarity == out; {
				res = res[:len(res)-1]
			}
		}
		for _, r := range res {
			id, chunk := splitChunkID(r.ID)
			if j, ok := best[id]; ok {
				if r.Similarity > f.Hits[j].Similarity {
					f.Hits[j].Chunk, f.Hits[j].Similarity = chunk, r.Similarity
				}
				continue
			}
			best[id] = len(f.Hits)
			f.Hits = append(f.Hits, Hit{ID: id, Chunk: chunk, Similarity: r.Similarity})
		}
	}
	slices.SortFunc(f.Hits, func(a, b Hit) int {
		if c := cmp.Compare(b.Similarity, a.Similarity); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return f, nil
}
