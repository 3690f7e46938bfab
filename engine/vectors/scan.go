package vectors

import "math"

// A Flat query reads every code in scope, 1M of them for a large
// sessions history, and keeps each group's n nearest. Most codes cannot
// enter: once a group's n are found, only a code more similar than the
// worst of them can. scan.go tells those apart in integers first: the
// query rounded to 16-bit steps, dotted with the code two products to a
// 64-bit multiply (dotWide), bounds the code's similarity within a known
// error, and only a code whose bound reaches the group's worst
// kept is scored exactly (dotCode), as every code was before. The
// answer is the same to the bit: a code skipped could not have entered.

// queryCode is a query vector rounded to integer steps, for the
// prefilter, with what dotWide needs of it.
type queryCode struct {
	dims []int32 // q[i] ≈ dims[i]·step
	step float64 // 0: no prefilter (a query with no finite direction)
	// pairs packs dims for dotWide: per 8 dimensions from i, four words
	// dims[i+k+4] + dims[i+k]·2^32 (k = 0..3), in wrapping arithmetic.
	pairs []uint64
	bias  int64   // 128·Σdims over the pairs: what the codes' offset adds
	slack float64 // what the rounding and dotCode's float32 sums may move, before scale
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
	qc.slack = qc.step/2*128*float64(len(q)) + 2*float64(len(q)+4)*0x1p-24*128*sumAbs
	for i, x := range q {
		qc.dims[i] = int32(math.Round(float64(x) / qc.step))
	}
	for i := 0; i+8 <= len(q); i += 8 {
		for k := range 4 {
			qc.pairs = append(qc.pairs, uint64(int64(qc.dims[i+k+4]))+uint64(int64(qc.dims[i+k]))<<32)
			qc.bias += 128 * (int64(qc.dims[i+k]) + int64(qc.dims[i+k+4]))
		}
	}
	return qc
}

// below reports that a code's exact similarity (dotCode) is less than
// worst, so it cannot enter a group whose worst kept is worst: the
// integer dot times step·scale is within slack·scale of what dotCode
// returns, ~1e-4 for the built-in embedder's codes, whatever their
// scale says.
func (qc *queryCode) below(dims []int8, scale, worst float32) bool {
	if qc.step == 0 {
		return false
	}
	s := float64(scale)
	return (float64(qc.dotWide(dims))*qc.step+qc.slack)*s+prefilterGuard < float64(worst)
}

// dotWide is qc.dims·dims, exactly, two products to a 64-bit multiply:
// eight code bytes are read as one word, offset by 128 to be unsigned
// (u = d+128), and word k of them masked to u[k] + u[k+4]·2^32; times
// pairs' word it is u[k]·q[k+4] + (u[k]·q[k]+u[k+4]·q[k+4])·2^32 mod
// 2^64. The low halves sum to less than 2^31 in magnitude, so after an
// offset of 2^31 they never carry, and the high half is Σu·q, of which
// Σd·q is the part beyond bias. About half the work of dotCode's
// conversion and product a dimension.
func (qc *queryCode) dotWide(dims []int8) int32 {
	q := qc.dims
	dims = dims[:len(q)]
	blocks := len(qc.pairs) / 4 // len(q)/8
	p := qc.pairs[:4*blocks]
	acc0, acc1 := uint64(1)<<31, uint64(0)
	const lanes = 0x000000ff000000ff
	b := 0
	for ; b+2 <= blocks; b += 2 {
		w, v := word(dims[8*b:]), word(dims[8*b+8:])
		pw, pv := p[4*b:4*b+4:4*b+4], p[4*b+4:4*b+8:4*b+8]
		acc0 += (w&lanes)*pw[0] + (w>>8&lanes)*pw[1] + (w>>16&lanes)*pw[2] + (w>>24&lanes)*pw[3]
		acc1 += (v&lanes)*pv[0] + (v>>8&lanes)*pv[1] + (v>>16&lanes)*pv[2] + (v>>24&lanes)*pv[3]
	}
	if b < blocks {
		w, pw := word(dims[8*b:]), p[4*b:4*b+4:4*b+4]
		acc0 += (w&lanes)*pw[0] + (w>>8&lanes)*pw[1] + (w>>16&lanes)*pw[2] + (w>>24&lanes)*pw[3]
	}
	s := int64(int32((acc0+acc1)>>32)) - qc.bias
	for i := 8 * blocks; i < len(q); i++ {
		s += int64(q[i]) * int64(dims[i])
	}
	return int32(s)
}

// word is the first eight bytes of d as one little-endian word, each
// offset by 128 (d+128, unsigned): one load.
func word(d []int8) uint64 {
	d = d[:8:8]
	return (uint64(uint8(d[0])) | uint64(uint8(d[1]))<<8 | uint64(uint8(d[2]))<<16 | uint64(uint8(d[3]))<<24 |
		uint64(uint8(d[4]))<<32 | uint64(uint8(d[5]))<<40 | uint64(uint8(d[6]))<<48 | uint64(uint8(d[7]))<<56) ^ 0x8080808080808080
}
