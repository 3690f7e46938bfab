package vectors

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// A Flat query reads every code in scope, 1M of them for a large
// sessions history, and keeps each group's n nearest. Most codes cannot
// enter: once a group's n are found, only a code more similar than the
// worst of them can. scan.go tells those apart in integers first: the
// query rounded to 16-bit steps, dotted with the code two products to a
// 64-bit multiply (dotWide), bounds the code's similarity within a known
// error, and only a code whose bound reaches the group's worst
// kept is scored exactly (dotCode), as every code was before. The
// answer is the same to the bit: a code skipped could not have entered.
//
// dotWide runs once a code, so its instructions are the scan's cost: it
// reads the code's bytes in place (Flat's codes viewed as []byte, eight
// to a load) against the query packed in fixed blocks of eight
// dimensions, the last block padded with zeros so that a dim not a
// multiple of 8 needs no tail loop (the bytes read past a code, the next
// code's, meet only those zeros), and the built-in embedder's 13 blocks
// are written out: ~24 ns a code in cache where a loop with a bounds
// check and a re-slice a word took ~43 (BenchmarkDotWide). Before it, a
// coarser bound (coarse.go) settles most codes at about three quarters of
// its cost.

// queryCode is a query vector rounded to integer steps, for the
// prefilter, with what dotWide needs of it.
type queryCode struct {
	dims []int32 // q[i] ≈ dims[i]·step
	step float64 // 0: no prefilter (a query with no finite direction)
	// blocks packs dims for dotWide: per 8 dimensions from 8b, four words
	// dims[8b+k+4] + dims[8b+k]·2^32 (k = 0..3), in wrapping arithmetic,
	// a dimension past the last one 0 (so the last block may cover the
	// tail of a code and the start of the next: times 0, those bytes
	// add nothing).
	blocks [][4]uint64
	bias   int64   // 128·Σdims: what the codes' offset adds
	slack  float64 // what the rounding and dotCode's float32 sums may move, before scale
	coarse coarseQuery
}

// maxWideProducts bounds the terms dotWide sums so that neither of its
// two 32-bit halves overflows: each term is at most 255·levels.
const maxWideProducts = math.MaxInt32 / 255

// prefilterGuard is a margin on top of below's bound, in similarity.
const prefilterGuard = 1e-4

// quantizeQuery rounds q to integer steps, as fine as dotWide's halves
// allow (2^15-1 levels up to 257 dimensions, 127 at 66k); the step is 0
// (no prefilter) when q has no finite largest coordinate or too many
// dimensions for 127 levels.
func quantizeQuery(q []float32) queryCode {
	var maxAbs float64
	for _, x := range q {
		maxAbs = math.Max(maxAbs, math.Abs(float64(x)))
	}
	levels := min(1<<15-1, maxWideProducts/max(len(q), 1))
	if maxAbs == 0 || math.IsNaN(maxAbs) || math.IsInf(maxAbs, 0) || levels < 127 {
		return queryCode{}
	}
	qc := queryCode{dims: make([]int32, len(q)), step: maxAbs / float64(levels)}
	// Each coordinate of q is within step/2 of its rounding and each of a
	// code at most 128 in size; dotCode's float32 sums of at most dim/4+3
	// terms each err by at most (dim+4)·2^-24 of Σ|q·d| ≤ 128·Σ|q| (twice
	// that, for margin).
	var sumAbs float64
	for _, x := range q {
		sumAbs += math.Abs(float64(x))
	}
	fp := 2 * float64(len(q)+4) * 0x1p-24 * 128 * sumAbs
	qc.slack = qc.step/2*128*float64(len(q)) + fp
	qc.coarse = makeCoarse(q, maxAbs, fp)
	padded := make([]int32, (len(q)+7)/8*8) // dims, then 0 up to a multiple of 8
	for i, x := range q {
		qc.dims[i] = int32(math.Round(float64(x) / qc.step))
		padded[i] = qc.dims[i]
		qc.bias += 128 * int64(qc.dims[i])
	}
	qc.blocks = make([][4]uint64, len(padded)/8)
	for b := range qc.blocks {
		for k := range 4 {
			lo, hi := padded[8*b+k], padded[8*b+k+4]
			qc.blocks[b][k] = uint64(int64(hi)) + uint64(int64(lo))<<32
		}
	}
	return qc
}

// wide is how many bytes of a code dotWide reads: its dimensions
// rounded up to a multiple of 8.
func (qc *queryCode) wide() int { return 8 * len(qc.blocks) }

// below reports that a code's exact similarity (dotCode) is less than
// worst, so it cannot enter a group whose worst kept is worst: the
// integer dot times step·scale is within slack·scale of what dotCode
// returns, ~1e-4 for the built-in embedder's codes, whatever their
// scale says. code is the code's bytes (int8 as byte) and at least
// wide() of them, what follows the code's dimensions being any bytes.
func (qc *queryCode) below(code []byte, scale, worst float32) bool {
	return qc.step != 0 && (float64(qc.dotWide(code))*qc.step+qc.slack)*float64(scale)+prefilterGuard < float64(worst)
}

// dotWide is qc.dims·code, exactly, two products to a 64-bit multiply:
// eight code bytes are read as one word, offset by 128 to be unsigned
// (u = d+128), and word k of them masked to u[k] + u[k+4]·2^32; times
// blocks' word it is u[k]·q[k+4] + (u[k]·q[k]+u[k+4]·q[k+4])·2^32 mod
// 2^64. The bound relied on: |q| ≤ levels ≤ maxWideProducts/dim and
// u ≤ 255, so the high halves' Σu·q and the low halves' Σu[k]·q[k+4]
// (dim/2 terms) are each less than 2^31 in magnitude; after an offset
// of 2^31 the low halves never carry, whatever the order of the sums,
// and the high half is Σu·q, of which Σd·q is the part beyond bias.
// code holds at least wide() bytes: the bytes past the dimensions meet
// only blocks' zeros (a byte j ≥ dim is multiplied by q[j], or by q[j']
// with j' > j, or lands past bit 63).
//
// Each block is one load (binary.LittleEndian.Uint64 compiles to one on
// amd64 and arm64) and four multiplies. The built-in embedder's 100
// dimensions (13 blocks, dims 97 to 104) take a path written out block
// by block over the code and the words as arrays: one bounds check for
// each, no loop, and nothing spilled: ~24 ns a code where a loop of
// four blocks a turn took ~34 (BenchmarkDotWide). Other dims take the
// loops below, eight blocks a turn as arrays (~15 % faster than four
// at 384 and 768 dims), then four, then the last blocks one at a time.
func (qc *queryCode) dotWide(code []byte) int32 {
	blocks := qc.blocks
	code = code[:8*len(blocks)]
	acc0, acc1 := uint64(1)<<31, uint64(0)
	b := 0
	if len(blocks) == 13 {
		c, p := (*[104]byte)(code), (*[13][4]uint64)(blocks)
		acc0 += wideBlock(binary.LittleEndian.Uint64(c[0:8]), &p[0]) + wideBlock(binary.LittleEndian.Uint64(c[16:24]), &p[2]) +
			wideBlock(binary.LittleEndian.Uint64(c[32:40]), &p[4]) + wideBlock(binary.LittleEndian.Uint64(c[48:56]), &p[6]) +
			wideBlock(binary.LittleEndian.Uint64(c[64:72]), &p[8]) + wideBlock(binary.LittleEndian.Uint64(c[80:88]), &p[10]) +
			wideBlock(binary.LittleEndian.Uint64(c[96:104]), &p[12])
		acc1 += wideBlock(binary.LittleEndian.Uint64(c[8:16]), &p[1]) + wideBlock(binary.LittleEndian.Uint64(c[24:32]), &p[3]) +
			wideBlock(binary.LittleEndian.Uint64(c[40:48]), &p[5]) + wideBlock(binary.LittleEndian.Uint64(c[56:64]), &p[7]) +
			wideBlock(binary.LittleEndian.Uint64(c[72:80]), &p[9]) + wideBlock(binary.LittleEndian.Uint64(c[88:96]), &p[11])
		b = 13
	}
	for ; b+8 <= len(blocks); b += 8 {
		c, p := (*[64]byte)(code[8*b:]), (*[8][4]uint64)(blocks[b:])
		acc0 += wideBlock(binary.LittleEndian.Uint64(c[0:8]), &p[0]) + wideBlock(binary.LittleEndian.Uint64(c[16:24]), &p[2]) +
			wideBlock(binary.LittleEndian.Uint64(c[32:40]), &p[4]) + wideBlock(binary.LittleEndian.Uint64(c[48:56]), &p[6])
		acc1 += wideBlock(binary.LittleEndian.Uint64(c[8:16]), &p[1]) + wideBlock(binary.LittleEndian.Uint64(c[24:32]), &p[3]) +
			wideBlock(binary.LittleEndian.Uint64(c[40:48]), &p[5]) + wideBlock(binary.LittleEndian.Uint64(c[56:64]), &p[7])
	}
	for ; b+4 <= len(blocks); b += 4 {
		c, p := (*[32]byte)(code[8*b:]), (*[4][4]uint64)(blocks[b:])
		acc0 += wideBlock(binary.LittleEndian.Uint64(c[0:8]), &p[0]) + wideBlock(binary.LittleEndian.Uint64(c[16:24]), &p[2])
		acc1 += wideBlock(binary.LittleEndian.Uint64(c[8:16]), &p[1]) + wideBlock(binary.LittleEndian.Uint64(c[24:32]), &p[3])
	}
	for ; b < len(blocks); b++ {
		acc0 += wideBlock(binary.LittleEndian.Uint64(code[8*b:]), &blocks[b])
	}
	return int32(int64(int32((acc0+acc1)>>32)) - qc.bias)
}

// wideBlock is one block of dotWide: w, eight code bytes, times p, the
// block's four words of the query.
func wideBlock(w uint64, p *[4]uint64) uint64 {
	const lanes, offset = 0x000000ff000000ff, 0x8080808080808080
	w ^= offset
	return (w&lanes)*p[0] + (w>>8&lanes)*p[1] + (w>>16&lanes)*p[2] + (w>>24&lanes)*p[3]
}

// codeBytes is the codes' bytes as []byte: the same memory, read by
// dotWide as words. int8 and byte have one size and alignment, so the
// view is exact (unsafe.Slice over the same array, no copy); the one
// place the package uses unsafe.
func codeBytes(dims []int8) []byte {
	if len(dims) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dims))), len(dims))
}
