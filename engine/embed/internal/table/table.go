// Package table is the on-disk format of the built-in word-vector table
// (engine/embed/glove.bin). It lives in its own package because two programs
// must agree on it byte for byte: the converter that writes it
// (engine/embed/internal/gen) and the embedder that reads it at start-up.
//
// # Format, version 1
//
// All integers and floats are little-endian; float32 is IEEE 754.
//
//	offset  size        field
//	0       8           magic "MNEMOWV\x00"
//	8       4           version (uint32) = 1
//	12      4           dim: components per vector (uint32)
//	16      4           n: number of words (uint32)
//	20      4           a: SIF smoothing parameter (float32)
//	24      4           wordBytes: length of the word block (uint32)
//	28      4·dim       common component u (dim × float32, unit length)
//	…       wordBytes   n words, each a uint8 byte length then UTF-8 bytes,
//	                    in descending corpus frequency (row r = rank r)
//	…       4·n         per-row dequantisation scale (n × float32)
//	…       n·dim       quantised vectors, row-major (n·dim × int8)
//	…       4           CRC-32C (Castagnoli) of every byte before it
//
// A row's vector is scale[r]·q[r·dim+i]. The rows are ordered by frequency
// because the embedder derives each word's SIF weight from its rank instead of
// storing a weight per word (see Weights). The common component is stored
// rather than recomputed so that every text's vector is a pure function of
// the text and this file, never of the rest of a corpus.
package table

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"strings"
	"unicode"
)

// Magic opens every table file.
const Magic = "MNEMOWV\x00"

// Version is the only format version this package reads and writes.
const Version = 1

const headerLen = 28

// maxDim bounds the dimension a header may claim, so that a corrupt header
// cannot make the decoder compute absurd sizes before the length check.
const maxDim = 4096

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Table is a decoded word-vector table.
type Table struct {
	Dim    int
	A      float32   // SIF smoothing parameter a
	Common []float32 // common component u, unit length, removed from every sentence vector
	Words  []string  // row order: most frequent first
	Scales []float32 // per-row dequantisation scale
	// Quant holds len(Words)·Dim int8 values stored as bytes. Decode makes
	// it alias its input, so a table decoded from a //go:embed variable reads
	// the binary's data instead of copying 14 MB onto the heap.
	Quant []byte
	// Index finds each word's row. Decode fills it; Encode ignores it.
	Index *Index
}

// Row returns the dequantised vector of row r, for tests and diagnostics;
// the hot path reads Quant directly.
func (t *Table) Row(r int) []float32 {
	v := make([]float32, t.Dim)
	q := t.Quant[r*t.Dim : (r+1)*t.Dim]
	for i := range v {
		v[i] = t.Scales[r] * float32(int8(q[i]))
	}
	return v
}

// Weights returns the SIF weight a/(a+p(r)) of every row r of an n-row table.
// GloVe's vocabulary is sorted by corpus frequency but the counts are not
// published, so p(r) is the Zipf estimate 1/((r+1)·H_n), H_n = Σ_{k=1..n} 1/k:
// a word's share of the tokens falls as the inverse of its rank. With
// a = 3e-4 and n = 140k this gives "the" a weight of 0.004, rank 100 about
// 0.27 and rank 1000 about 0.79.
func Weights(n int, a float64) []float64 {
	var h float64
	for k := n; k >= 1; k-- { // smallest terms first, for accuracy
		h += 1 / float64(k)
	}
	w := make([]float64, n)
	for r := range w {
		p := 1 / (float64(r+1) * h)
		w[r] = a / (a + p)
	}
	return w
}

// Encode serialises t in the format described in the package comment.
func Encode(t *Table) ([]byte, error) {
	n := len(t.Words)
	switch {
	case t.Dim <= 0 || t.Dim > maxDim:
		return nil, fmt.Errorf("encode table: dim %d out of range 1..%d", t.Dim, maxDim)
	case len(t.Common) != t.Dim:
		return nil, fmt.Errorf("encode table: common component has %d components, want %d", len(t.Common), t.Dim)
	case len(t.Scales) != n:
		return nil, fmt.Errorf("encode table: %d scales for %d words", len(t.Scales), n)
	case len(t.Quant) != n*t.Dim:
		return nil, fmt.Errorf("encode table: %d quantised values for %d words of dim %d", len(t.Quant), n, t.Dim)
	}
	wordBytes := 0
	for _, w := range t.Words {
		if len(w) == 0 || len(w) > 255 {
			return nil, fmt.Errorf("encode table: word %q: length %d out of range 1..255", w, len(w))
		}
		wordBytes += 1 + len(w)
	}
	b := make([]byte, 0, headerLen+4*t.Dim+wordBytes+4*n+n*t.Dim+4)
	b = append(b, Magic...)
	b = binary.LittleEndian.AppendUint32(b, Version)
	b = binary.LittleEndian.AppendUint32(b, uint32(t.Dim))
	b = binary.LittleEndian.AppendUint32(b, uint32(n))
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(t.A))
	b = binary.LittleEndian.AppendUint32(b, uint32(wordBytes))
	for _, c := range t.Common {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(c))
	}
	for _, w := range t.Words {
		b = append(b, byte(len(w)))
		b = append(b, w...)
	}
	for _, s := range t.Scales {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(s))
	}
	b = append(b, t.Quant...)
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	return b, nil
}

// ErrCorrupt is wrapped by every error Decode returns, so callers can tell a
// damaged table from other failures with errors.Is.
var ErrCorrupt = errors.New("corrupt word-vector table")

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// Decode parses and validates a table. Quant aliases data, which must
// therefore not change afterwards; the words are copied, in one allocation.
// Every structural problem (bad magic, unknown version, checksum mismatch,
// inconsistent lengths, non-finite numbers, duplicate words) is reported as
// an error wrapping ErrCorrupt; Decode never panics on malformed input.
func Decode(data []byte) (*Table, error) {
	if len(data) < headerLen+4 {
		return nil, corrupt("%d bytes is shorter than the %d-byte header and checksum", len(data), headerLen+4)
	}
	if string(data[:8]) != Magic {
		return nil, corrupt("bad magic %q", data[:8])
	}
	le := binary.LittleEndian
	u32 := func(off int) uint32 { return le.Uint32(data[off : off+4]) }
	if v := u32(8); v != Version {
		return nil, corrupt("format version %d, this build reads only version %d", v, Version)
	}
	body := data[:len(data)-4]
	if got, want := crc32.Checksum(body, castagnoli), u32(len(data)-4); got != want {
		return nil, corrupt("checksum mismatch: computed %08x, stored %08x", got, want)
	}
	dim64, n64, wb64 := int64(u32(12)), int64(u32(16)), int64(u32(24))
	a := math.Float32frombits(u32(20))
	if dim64 <= 0 || dim64 > maxDim {
		return nil, corrupt("dim %d out of range 1..%d", dim64, maxDim)
	}
	if !(a > 0) || math.IsInf(float64(a), 0) {
		return nil, corrupt("SIF parameter a = %v, want a finite positive number", a)
	}
	// Sizes are computed in int64 so that a hostile header cannot overflow
	// them; once they match the real length they fit in an int.
	want := headerLen + 4*dim64 + wb64 + 4*n64 + n64*dim64 + 4
	if want != int64(len(data)) {
		return nil, corrupt("length %d bytes, header implies %d (dim %d, %d words, %d word bytes)", len(data), want, dim64, n64, wb64)
	}
	dim, n, wordBytes := int(dim64), int(n64), int(wb64)

	t := &Table{Dim: dim, A: a, Common: make([]float32, dim), Words: make([]string, 0, n),
		Scales: make([]float32, n)}
	off := headerLen
	var norm float64
	for i := range t.Common {
		c := math.Float32frombits(u32(off))
		if math.IsNaN(float64(c)) || math.IsInf(float64(c), 0) {
			return nil, corrupt("common component %d is %v", i, c)
		}
		t.Common[i] = c
		norm += float64(c) * float64(c)
		off += 4
	}
	if math.Abs(math.Sqrt(norm)-1) > 1e-3 {
		return nil, corrupt("common component has norm %.4f, want 1", math.Sqrt(norm))
	}

	words := string(data[off : off+wordBytes])
	t.Index = newIndex(words, n)
	for at := 0; at < len(words); {
		l := int(words[at])
		if l == 0 || at+1+l > len(words) {
			return nil, corrupt("word %d: length %d overruns the word block", len(t.Words), l)
		}
		w := words[at+1 : at+1+l]
		if len(t.Words) == n {
			return nil, corrupt("word block holds more than the %d words the header declares", n)
		}
		if err := t.Index.add(at+1, l, len(t.Words)); err != nil {
			return nil, corrupt("word %q appears twice", w)
		}
		t.Words = append(t.Words, w)
		at += 1 + l
	}
	if len(t.Words) != n {
		return nil, corrupt("word block holds %d words, header declares %d", len(t.Words), n)
	}
	off += wordBytes

	for i := range t.Scales {
		s := math.Float32frombits(u32(off))
		if !(s >= 0) || math.IsInf(float64(s), 0) {
			return nil, corrupt("row %d (%q): scale %v, want a finite non-negative number", i, t.Words[i], s)
		}
		t.Scales[i] = s
		off += 4
	}
	t.Quant = data[off : off+n*dim]
	return t, nil
}

// IsWord reports whether w belongs in the table: lower-case, made of ASCII or
// Unicode letters and digits with hyphens or apostrophes only inside, and
// containing at least one letter or digit. Anything else (punctuation, "-lrb-"
// style markup) could never come out of the tokenizer, so storing it would
// waste space.
func IsWord(w string) bool {
	if w == "" || len(w) > 255 || strings.ToLower(w) != w {
		return false
	}
	if strings.HasPrefix(w, "-") || strings.HasSuffix(w, "-") ||
		strings.HasPrefix(w, "'") || strings.HasSuffix(w, "'") {
		return false
	}
	alnum := false
	for _, r := range w {
		switch {
		case isAlnum(r):
			alnum = true
		case r == '-' || r == '\'':
		default:
			return false
		}
	}
	return alnum
}

func isAlnum(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
