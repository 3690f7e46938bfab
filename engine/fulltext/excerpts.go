package fulltext

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"sort"
	"strings"
)

// An excerpt index is what snippets need of one text, computed once at
// index time so that a search never re-reads, re-parses or re-tokenises a
// memory: the plain text, its chunks' byte ranges, and for every term the
// byte ranges where it occurs — English terms exactly as the index's
// analyzer makes them (stopwords left out: they are never query terms),
// CJK terms as the cjk analyzer emits them. Both come from the analysis
// pass that also feeds the full-text index (tokens.go). A
// search then looks up only the query's terms (binary search over the
// sorted term table) and touches nothing else of the memory.
//
// CJK terms are kept only for texts with CJK letters of their own.
// Tokenising afresh (matchSpans) also marks, in a text without CJK, the
// Latin words of a query that has CJK letters as
// the cjk analyzer spells them — unstemmed, stopwords included: a CJK
// query with "the" in it marked every "the". The stored index marks the
// stemmed words only, as for any other query.
//
// Encoding (varints are unsigned):
//
//	len(text) text
//	nChunks  (start, len)…
//	nTerms   nTerms × uint32 LE offset of its entry, counted from the first entry
//	entries: len(key) key nSpans (start − previous start, len)…
//
// A key is a namespace byte (nsEN or nsCJK) then the term; keys are sorted.
const (
	nsEN  = 0
	nsCJK = 1
)

// maxWindowSpans bounds the work of choosing windows in a memory that
// matches very often: windows start at its first maxWindowSpans matches
// (MatchCount still counts all of them).
const maxWindowSpans = 1024

// excerptTerm is one key of an excerpt index and where it occurs.
type excerptTerm struct {
	key   string // nsEN or nsCJK, then the term
	spans []span
}

// EncodeExcerpts encodes the excerpt index of text: chunks are byte
// ranges of text, terms the analysis pass's keys (tokens.go). Keys are
// written in order, and each key's spans sorted where they are not already.
func EncodeExcerpts(text string, chunks [][2]int, terms []excerptTerm) []byte {
	var x ExcerptEncoder
	return x.Encode(text, chunks, terms)
}

// ExcerptEncoder is EncodeExcerpts with buffers kept from one index to the
// next. A sync worker keeps one and stores an exact-size copy: a fresh
// buffer grows once or twice per file and keeps up to twice what it holds.
type ExcerptEncoder struct {
	out   []byte
	order []uint64 // keyOrder's
}

// Encode returns the excerpt index, in a buffer the next call reuses.
func (x *ExcerptEncoder) Encode(text string, chunks [][2]int, terms []excerptTerm) []byte {
	x.order = keyOrder(x.order[:0], terms)
	out := x.out[:0]
	if out == nil {
		out = make([]byte, 0, 2*len(text)+64)
	}
	out = binary.AppendUvarint(out, uint64(len(text)))
	out = append(out, text...)
	out = binary.AppendUvarint(out, uint64(len(chunks)))
	for _, c := range chunks {
		out = binary.AppendUvarint(out, uint64(c[0]))
		out = binary.AppendUvarint(out, uint64(c[1]-c[0]))
	}
	out = binary.AppendUvarint(out, uint64(len(terms)))
	table := len(out)
	out = slices.Grow(out, 4*len(terms))[:table+4*len(terms)] // every byte is set below
	entries := len(out)
	byStart := func(a, b span) int { return a.start - b.start }
	for i, k := range x.order {
		t := terms[k]
		binary.LittleEndian.PutUint32(out[table+4*i:], uint32(len(out)-entries))
		out = binary.AppendUvarint(out, uint64(len(t.key)))
		out = append(out, t.key...)
		if !slices.IsSortedFunc(t.spans, byStart) {
			slices.SortStableFunc(t.spans, byStart)
		}
		out = binary.AppendUvarint(out, uint64(len(t.spans)))
		prev := 0
		for _, s := range t.spans {
			out = binary.AppendUvarint(out, uint64(s.start-prev))
			out = binary.AppendUvarint(out, uint64(s.end-s.start))
			prev = s.start
		}
	}
	x.out = out
	return out
}

// keyOrder appends to order the indexes of terms in key order. Each term
// becomes one integer — its key's first six bytes, big-endian and
// zero-padded (which keeps the order), over its index — so the sort
// compares integers; keys are compared only within a run of equal
// prefixes, because sorting the terms by key dominates the encoding's time.
func keyOrder(order []uint64, terms []excerptTerm) []uint64 {
	if len(terms) > 1<<16 {
		for i := range terms {
			order = append(order, uint64(i))
		}
		slices.SortFunc(order, func(a, b uint64) int { return strings.Compare(terms[a].key, terms[b].key) })
		return order
	}
	order = slices.Grow(order, len(terms))
	for i, t := range terms {
		var p uint64
		if k := t.key; len(k) >= 6 {
			p = uint64(k[0])<<40 | uint64(k[1])<<32 | uint64(k[2])<<24 | uint64(k[3])<<16 | uint64(k[4])<<8 | uint64(k[5])
		} else {
			for j := range 6 {
				p <<= 8
				if j < len(k) {
					p |= uint64(k[j])
				}
			}
		}
		order = append(order, p<<16|uint64(i))
	}
	slices.Sort(order)
	for i := 0; i < len(order); {
		j := i + 1
		for j < len(order) && order[j]>>16 == order[i]>>16 {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(order[i:j], func(a, b uint64) int {
				return strings.Compare(terms[a&0xffff].key, terms[b&0xffff].key)
			})
		}
		i = j
	}
	for i := range order {
		order[i] &= 0xffff
	}
	return order
}

// Excerpt is what a search takes from one memory's excerpt index: the
// text, where the query's terms occur in it, and its chunks' ranges.
type Excerpt struct {
	text   string
	spans  []span // merged, in order
	chunks []span
}

var ErrBadExcerpts = errors.New("malformed excerpt index")

// reader walks an encoded excerpt index; the first error sticks.
type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint() int {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 || v > 1<<40 {
		r.err = ErrBadExcerpts
		return 0
	}
	r.b = r.b[n:]
	return int(v)
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.err = ErrBadExcerpts
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

// ReadExcerpt decodes what q needs of an encoded excerpt index. b may be
// memory the caller does not own past the call: nothing returned points into it.
func ReadExcerpt(b []byte, q Terms) (Excerpt, error) {
	r := &reader{b: b}
	var x Excerpt
	x.text = string(r.bytes(r.uvarint()))
	nc := r.uvarint()
	if r.err == nil && nc > len(r.b) {
		r.err = ErrBadExcerpts
	}
	for i := 0; i < nc && r.err == nil; i++ {
		s := r.uvarint()
		x.chunks = append(x.chunks, span{s, s + r.uvarint()})
	}
	nt := r.uvarint()
	table := r.bytes(4 * nt)
	if r.err != nil {
		return Excerpt{}, r.err
	}
	entries := r.b
	entry := func(i int) (key []byte, rest *reader) {
		off := int(binary.LittleEndian.Uint32(table[4*i:]))
		if off > len(entries) {
			return nil, &reader{err: ErrBadExcerpts}
		}
		er := &reader{b: entries[off:]}
		return er.bytes(er.uvarint()), er
	}
	find := func(ns byte, term string) error {
		key := append([]byte{ns}, term...)
		i := sort.Search(nt, func(i int) bool { k, _ := entry(i); return bytes.Compare(k, key) >= 0 })
		if i == nt {
			return nil
		}
		k, er := entry(i)
		if er.err != nil || !bytes.Equal(k, key) {
			return er.err
		}
		n, pos := er.uvarint(), 0
		for j := 0; j < n && er.err == nil; j++ {
			pos += er.uvarint()
			end := pos + er.uvarint()
			if end > len(x.text) {
				return ErrBadExcerpts
			}
			x.spans = append(x.spans, span{pos, end})
		}
		return er.err
	}
	for t := range q.en {
		if err := find(nsEN, t); err != nil {
			return Excerpt{}, err
		}
	}
	for t := range q.cjk {
		if err := find(nsCJK, t); err != nil {
			return Excerpt{}, err
		}
	}
	x.spans = mergeSpans(x.spans)
	return x, nil
}

// chunkText is the plain text of chunk i, "" if there is none.
func (x Excerpt) chunkText(i int) string {
	if i < 0 || i >= len(x.chunks) {
		return ""
	}
	c := x.chunks[i]
	if c.start > c.end || c.end > len(x.text) {
		return ""
	}
	return x.text[c.start:c.end]
}
