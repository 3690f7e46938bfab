package sessions

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"

	"github.com/klauspost/compress/zstd"
	bolt "go.etcd.io/bbolt"
)

// The redacted text of every message is kept in the state store: Bleve
// does not store it (engine/fulltext maps the field unstored), and show,
// snippets, archived sessions and a rebuild from the store read it. It is
// kept in blocks of up to textBlock consecutive messages of a session,
// zstd-compressed: at 100k messages of generated prose 42 MiB of text
// took 50 MiB of pages one by one and ~24 MiB so (docs/design.md). zstd
// is klauspost/compress, which the Zed reader (engine/transcript)
// already links.
var sbTextBlocks = []byte("textblocks") // sid|first seq → block

// textBlock is how many messages one block holds: 32 compress to 0.56 of
// their bytes (one message alone: 0.85, 64: 0.52), and a snippet decodes
// one block, ~0.1 ms. Blocks of 16 decode in 17 µs against 29 at 1M
// messages and took ~8 % off a hybrid search's CPU, but a 1M sync took
// 92 s against 73 (alternated) and the store 56 MiB more
// (docs/benchmarks.md).
const textBlock = 32

// metaTextForm records that every text is in blocks: a store written
// before holds them one by one in sbTexts, which readers still take and a
// writer's open converts (convertTexts).
const (
	metaTextForm   = "textForm"
	textFormBlocks = "blocks32"
)

var zstdCodec = sync.OnceValues(func() (*zstd.Encoder, *zstd.Decoder) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderCRC(false))
	if err != nil {
		panic(err) // only for invalid options
	}
	// Not WithDecoderLowmem: on the 1M history's blocks (~7.9 KB stored, 32
	// messages) it decoded one in 69 µs against 52 (a query decodes ~70).
	dec, err := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(64<<20))
	if err != nil {
		panic(err)
	}
	return enc, dec
})

// textEntry is one message's text in a block.
type textEntry struct {
	seq  uint32
	text string
}

// encodeBlock compresses entries (in seq order): each as uvarint seq,
// uvarint length, text.
func encodeBlock(es []textEntry) []byte {
	n := 0
	for _, e := range es {
		n += 2*binary.MaxVarintLen32 + len(e.text)
	}
	raw := make([]byte, 0, n)
	for _, e := range es {
		raw = binary.AppendUvarint(raw, uint64(e.seq))
		raw = binary.AppendUvarint(raw, uint64(len(e.text)))
		raw = append(raw, e.text...)
	}
	enc, _ := zstdCodec()
	return enc.EncodeAll(raw, nil)
}

func decodeBlock(b []byte) ([]textEntry, error) {
	raw, err := decompressBlock(b)
	if err != nil {
		return nil, err
	}
	var out []textEntry
	for len(raw) > 0 {
		seq, n := binary.Uvarint(raw)
		if n <= 0 || seq > 0xffffffff {
			return nil, errors.New("text block: bad sequence number")
		}
		raw = raw[n:]
		l, n := binary.Uvarint(raw)
		if n <= 0 || l > uint64(len(raw)-n) {
			return nil, errors.New("text block: bad length")
		}
		out = append(out, textEntry{seq: uint32(seq), text: string(raw[n : n+int(l)])})
		raw = raw[n+int(l):]
	}
	return out, nil
}

// decompressBlock is a stored block's entries as encodeBlock wrote them
// (entryIn reads them).
func decompressBlock(b []byte) ([]byte, error) {
	_, dec := zstdCodec()
	raw, err := dec.DecodeAll(b, nil)
	if err != nil {
		return nil, fmt.Errorf("text block: %w", err)
	}
	return raw, nil
}

// blockAt positions c on the block of sid that holds seq if any: the one
// keyed at or before seq. Its key is nil when sid has none there.
func blockAt(c *bolt.Cursor, sid, seq uint32) (k, v []byte) {
	want := seqKey(sid, seq)
	if k, v = c.Seek(want); k == nil {
		k, v = c.Last()
	} else if !bytes.Equal(k, want) {
		k, v = c.Prev()
	}
	if len(k) != 8 || binary.BigEndian.Uint32(k) != sid {
		return nil, nil
	}
	return k, v
}

// textTx reads one message's text (blockReader.text), through cache
// when one is given.
func textTx(tx *bolt.Tx, cache *blockCache, sid, seq uint32) (string, bool, error) {
	r := blockReader{tx: tx, cache: cache}
	t, ok, err := r.text(sid, seq)
	return string(t), ok, err
}

// blockCacheSize is how many decoded blocks a store keeps for the
// re-rank and snippets: a page's hits in one session mostly share a block
// (the LoCoMo bench: up to 100 snippets a query, +1.8 ms of CPU a query
// when each decoded its block), most of a page's hits are among the
// re-rank's fifty candidates (at 1M messages 10 of the 14 blocks a page's
// snippets read), and 128 blocks are ~3 MB.
const blockCacheSize = 128

// blockCache keeps the last blocks decoded (decompressBlock), by key,
// each with the bytes it was decoded from: an entry serves only a block
// stored with the same bytes, so no write needs to invalidate it. What
// it hands out is shared: read, never written.
type blockCache struct {
	mu      sync.Mutex
	entries map[uint64]cachedBlock
	ring    []uint64 // keys in the order they came in, to evict the oldest
	next    int
}

type cachedBlock struct {
	stored []byte
	raw    []byte
}

// decode is decompressBlock(v) for the block at key, from the cache when
// it holds the same bytes; a nil cache decodes.
func (c *blockCache) decode(key uint64, v []byte) ([]byte, error) {
	if c == nil {
		return decompressBlock(v)
	}
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if ok && bytes.Equal(e.stored, v) {
		return e.raw, nil
	}
	raw, err := decompressBlock(v)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries, c.ring = map[uint64]cachedBlock{}, make([]uint64, 0, blockCacheSize)
	}
	if _, had := c.entries[key]; !had {
		if len(c.ring) < blockCacheSize {
			c.ring = append(c.ring, key)
		} else {
			delete(c.entries, c.ring[c.next])
			c.ring[c.next] = key
			c.next = (c.next + 1) % blockCacheSize
		}
	}
	c.entries[key] = cachedBlock{stored: bytes.Clone(v), raw: raw}
	return raw, nil
}

// textsTx yields the texts of sid with seq in [from, to), in order, from
// the blocks and from sbTexts merged (a store part-way through
// convertTexts holds some of each); a broken block ends it with an error.
func textsTx(tx *bolt.Tx, sid, from, to uint32) iter.Seq2[textEntry, error] {
	return func(yield func(textEntry, error) bool) {
		blocks, stop := iter.Pull2(blockTexts(tx, sid, from, to))
		defer stop()
		b, err, more := blocks()
		for k, v := range oneByOne(tx, sid, from, to) {
			seq := binary.BigEndian.Uint32(k[4:])
			for ; more && (err != nil || b.seq < seq); b, err, more = blocks() {
				if !yield(b, err) || err != nil {
					return
				}
			}
			if more && err == nil && b.seq == seq {
				continue // the block's is the later write
			}
			if !yield(textEntry{seq: seq, text: string(v)}, nil) {
				return
			}
		}
		for ; more; b, err, more = blocks() {
			if !yield(b, err) || err != nil {
				return
			}
		}
	}
}

// blockTexts yields the texts of sid's blocks with seq in [from, to).
func blockTexts(tx *bolt.Tx, sid, from, to uint32) iter.Seq2[textEntry, error] {
	return func(yield func(textEntry, error) bool) {
		bb := tx.Bucket(sbTextBlocks)
		if bb == nil {
			return
		}
		c := bb.Cursor()
		k, v := blockAt(c, sid, from)
		if k == nil {
			k, v = c.Seek(seqKey(sid, from))
		}
		for ; len(k) == 8 && binary.BigEndian.Uint32(k) == sid && binary.BigEndian.Uint32(k[4:]) < to; k, v = c.Next() {
			es, err := decodeBlock(v)
			if err != nil {
				yield(textEntry{}, fmt.Errorf("texts of session %d: %w", sid, err))
				return
			}
			for _, e := range es {
				if e.seq >= from && e.seq < to && !yield(e, nil) {
					return
				}
			}
		}
	}
}

// oneByOne yields the keys and texts sbTexts holds of sid in [from, to).
func oneByOne(tx *bolt.Tx, sid, from, to uint32) iter.Seq2[[]byte, []byte] {
	return func(yield func(k, v []byte) bool) {
		tb := tx.Bucket(sbTexts)
		if tb == nil {
			return
		}
		c := tb.Cursor()
		for k, v := c.Seek(seqKey(sid, from)); len(k) == 8 && binary.BigEndian.Uint32(k) == sid && binary.BigEndian.Uint32(k[4:]) < to; k, v = c.Next() {
			if !yield(k, v) {
				return
			}
		}
	}
}

// putTextsTx writes the texts of es (of sid, in seq order) into blocks:
// the blocks of sid from the one that holds es[0] on are read, merged
// with es (es wins at an equal seq) and written again, except a full
// block that ends before es[0]. An append rewrites at most the last,
// partial block. Any text of es still in sbTexts is deleted.
func putTextsTx(tx *bolt.Tx, sid uint32, es []textEntry) error {
	if len(es) == 0 {
		return nil
	}
	bb := tx.Bucket(sbTextBlocks)
	bb.FillPercent = appendFill
	var tail []textEntry
	var old [][]byte
	c := bb.Cursor()
	k, v := blockAt(c, sid, es[0].seq)
	if k == nil {
		k, v = c.Seek(seqKey(sid, es[0].seq))
	}
	for ; len(k) == 8 && binary.BigEndian.Uint32(k) == sid; k, v = c.Next() {
		got, err := decodeBlock(v)
		if err != nil {
			return fmt.Errorf("texts of session %d: %w", sid, err)
		}
		if len(old) == 0 && len(got) >= textBlock && got[len(got)-1].seq < es[0].seq {
			continue // full, and before every new text: it stays
		}
		old = append(old, append([]byte(nil), k...))
		tail = append(tail, got...)
	}
	for _, k := range old {
		if err := bb.Delete(k); err != nil {
			return err
		}
	}
	merged := mergeTexts(tail, es)
	for lo := 0; lo < len(merged); lo += textBlock {
		blk := merged[lo:min(lo+textBlock, len(merged))]
		if err := bb.Put(seqKey(sid, blk[0].seq), encodeBlock(blk)); err != nil {
			return err
		}
	}
	if tb := tx.Bucket(sbTexts); tb != nil {
		for _, e := range es {
			if err := tb.Delete(seqKey(sid, e.seq)); err != nil {
				return err
			}
		}
	}
	return nil
}

// mergeTexts merges two runs in seq order; b wins at an equal seq.
func mergeTexts(a, b []textEntry) []textEntry {
	out := make([]textEntry, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i].seq < b[j].seq):
			out = append(out, a[i])
			i++
		case i == len(a) || b[j].seq < a[i].seq:
			out = append(out, b[j])
			j++
		default:
			out = append(out, b[j])
			i, j = i+1, j+1
		}
	}
	return out
}

// convertTexts moves the texts a store written before blocks holds one
// by one into blocks, convertBatch at a time, then records the form; it
// returns how many it moved. Each transaction moves texts and deletes
// them together, and readers merge both places, so a crash in between
// loses nothing and the next writer's open goes on.
func (s *sessionStore) convertTexts() (int, error) {
	n := 0
	for {
		var moved int
		err := s.db.Update(func(tx *bolt.Tx) error {
			tb := tx.Bucket(sbTexts)
			if tb == nil {
				return nil
			}
			bySID := map[uint32][]textEntry{}
			var sids []uint32
			c := tb.Cursor()
			for k, v := c.First(); k != nil && moved < convertBatch; k, v = c.Next() {
				if len(k) != 8 {
					continue
				}
				sid := binary.BigEndian.Uint32(k)
				if _, ok := bySID[sid]; !ok {
					sids = append(sids, sid)
				}
				bySID[sid] = append(bySID[sid], textEntry{seq: binary.BigEndian.Uint32(k[4:]), text: string(v)})
				moved++
			}
			for _, sid := range sids {
				if err := putTextsTx(tx, sid, bySID[sid]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return n, fmt.Errorf("move stored texts into blocks: %w", err)
		}
		n += moved
		if moved == 0 {
			break
		}
	}
	return n, s.setMeta(map[string]string{metaTextForm: textFormBlocks})
}

// textRef names one message's text for eachText.
type textRef struct{ sid, seq uint32 }

// keyOrder is the indexes of refs in the store's key order (session, then
// sequence number), in which one read transaction visits their pages.
func keyOrder(refs []textRef) []int {
	order := make([]int, len(refs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(refs[a].sid, refs[b].sid), cmp.Compare(refs[a].seq, refs[b].seq))
	})
	return order
}

// eachText calls use with the stored text of each of refs that has one,
// in the order of refs' sessions and sequence numbers, from one read
// transaction, through the block cache (the page's snippets then read
// most of their blocks decoded): no text becomes a string. The bytes use
// gets must not be written or kept. A block that does not decode skips
// its refs and the others are still read; the first such error is
// returned at the end.
func (s *sessionStore) eachText(ctx context.Context, refs []textRef, use func(i int, text []byte)) error {
	order := keyOrder(refs)
	var broken error
	err := s.db.View(func(tx *bolt.Tx) error {
		r := blockReader{tx: tx, cache: &s.blocks}
		for _, i := range order {
			if err := ctx.Err(); err != nil {
				return err
			}
			text, ok, err := r.text(refs[i].sid, refs[i].seq)
			if err != nil {
				broken = cmp.Or(broken, err)
				continue
			}
			if ok {
				use(i, text)
			}
		}
		return nil
	})
	return cmp.Or(err, broken)
}

// blockReader reads texts through cache (nil: none), keeping the last
// block it read (its key and raw entries) for the next read.
type blockReader struct {
	tx    *bolt.Tx
	cache *blockCache
	key   []byte
	raw   []byte
}

// text is the text of (sid, seq): from its block, else from sbTexts (a
// store not yet converted); ok is false when the store holds none.
func (r *blockReader) text(sid, seq uint32) ([]byte, bool, error) {
	if bb := r.tx.Bucket(sbTextBlocks); bb != nil {
		if k, v := blockAt(bb.Cursor(), sid, seq); k != nil {
			if !bytes.Equal(k, r.key) {
				raw, err := r.cache.decode(binary.BigEndian.Uint64(k), v)
				if err != nil {
					r.key = nil
					return nil, false, fmt.Errorf("text of %s: %w", docID(sid, seq), err)
				}
				r.key, r.raw = append(r.key[:0], k...), raw
			}
			if t, ok, err := entryIn(r.raw, seq); ok || err != nil {
				if err != nil {
					err = fmt.Errorf("text of %s: %w", docID(sid, seq), err)
				}
				return t, ok, err
			}
		}
	}
	if tb := r.tx.Bucket(sbTexts); tb != nil {
		if v := tb.Get(seqKey(sid, seq)); v != nil {
			return v, true, nil
		}
	}
	return nil, false, nil
}

// entryIn finds seq's text in a decoded block (encodeBlock's entries)
// without copying any.
func entryIn(raw []byte, seq uint32) ([]byte, bool, error) {
	for len(raw) > 0 {
		s, n := binary.Uvarint(raw)
		if n <= 0 || s > 0xffffffff {
			return nil, false, errors.New("text block: bad sequence number")
		}
		raw = raw[n:]
		l, n := binary.Uvarint(raw)
		if n <= 0 || l > uint64(len(raw)-n) {
			return nil, false, errors.New("text block: bad length")
		}
		if uint32(s) == seq {
			return raw[n : n+int(l)], true, nil
		}
		raw = raw[n+int(l):]
	}
	return nil, false, nil
}
