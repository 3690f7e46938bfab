package vectors

import (
	"encoding/binary"
	"math"
)

// A coarser bound before dotWide's: the query rounded to 32 steps, four
// products to a 64-bit multiply (16-bit lanes), half dotWide's work a
// code. Its rounding error is bounded by Cauchy–Schwarz, not term by
// term: scale·|Σe·d| ≤ |e|·|d|·scale ≤ |e|·(1+normSlack), e the query's
// rounding, exact once a query, and |d|·scale at most 1+normSlack for
// every code a Flat lets it judge (Flat.untrusted: a Quantize code's
// scale is 1/|d| to float32's precision). On the 1M sessions history
// |e| is ~0.03 in similarity and the bound leaves ~3 % of the codes to
// dotWide (docs/benchmarks.md, "The vector scan").

// coarseLevels is the coarse query's largest step count: with |c| ≤ 32
// each product's lanes stay in range (coarseBlock).
const coarseLevels = 32

// normSlack bounds how far above 1 a code's |d|·scale may be for the
// coarse bound to judge it.
const normSlack = 1e-6

// coarseQuery is a query rounded to coarseLevels steps, packed for
// coarseBlock.
type coarseQuery struct {
	// words packs the rounded query c per 8 dimensions from 8b:
	// c[8b+6] + c[8b+4]·2^16 + c[8b+2]·2^32 + c[8b]·2^48, and the same of
	// c[8b+7], [8b+5], [8b+3], [8b+1], in wrapping arithmetic, a
	// dimension past the last one 0.
	words [][2]uint64
	step  float64
	bias  int64   // 128·Σc: what the codes' offset adds
	err   float64 // |q − c·step|·(1+normSlack), plus what float64 may have rounded
	fp    float64 // dotCode's float32 error, before scale (queryCode.slack's share)
}

// makeCoarse rounds q (largest coordinate maxAbs, finite and not 0) to
// coarseLevels steps.
func makeCoarse(q []float32, maxAbs, fp float64) coarseQuery {
	cq := coarseQuery{step: maxAbs / coarseLevels, fp: fp, words: make([][2]uint64, (len(q)+7)/8)}
	c := make([]int64, 8*len(cq.words))
	var sq float64
	for i, x := range q {
		c[i] = int64(math.Round(float64(x) / cq.step))
		e := float64(x) - float64(c[i])*cq.step
		sq += e * e
		cq.bias += 128 * c[i]
	}
	cq.err = math.Sqrt(sq)*(1+normSlack) + 1e-12
	for b := range cq.words {
		c := c[8*b : 8*b+8]
		cq.words[b][0] = uint64(c[6]) + uint64(c[4])<<16 + uint64(c[2])<<32 + uint64(c[0])<<48
		cq.words[b][1] = uint64(c[7]) + uint64(c[5])<<16 + uint64(c[3])<<32 + uint64(c[1])<<48
	}
	return cq
}

// below reports that a code of |d|·scale ≤ 1+normSlack (and scale > 0)
// is less similar than worst: an upper bound of its exact similarity,
// and of dotCode's, is under it.
func (cq *coarseQuery) below(code []byte, scale, worst float32) bool {
	return (float64(cq.dot(code))*cq.step+cq.fp)*float64(scale)+cq.err+prefilterGuard < float64(worst)
}

// dot is at least Σc·d, and at most 2 a block more: code holds at least
// 8·len(words) bytes, those past the dimensions meeting only zeros (as
// dotWide's). The built-in embedder's 13 blocks are written out.
func (cq *coarseQuery) dot(code []byte) int64 {
	words := cq.words
	code = code[:8*len(words)]
	var acc int64
	if len(words) == 13 {
		c, p := (*[104]byte)(code), (*[13][2]uint64)(words)
		acc = coarseBlock(binary.LittleEndian.Uint64(c[0:8]), &p[0]) + coarseBlock(binary.LittleEndian.Uint64(c[8:16]), &p[1]) +
			coarseBlock(binary.LittleEndian.Uint64(c[16:24]), &p[2]) + coarseBlock(binary.LittleEndian.Uint64(c[24:32]), &p[3]) +
			coarseBlock(binary.LittleEndian.Uint64(c[32:40]), &p[4]) + coarseBlock(binary.LittleEndian.Uint64(c[40:48]), &p[5]) +
			coarseBlock(binary.LittleEndian.Uint64(c[48:56]), &p[6]) + coarseBlock(binary.LittleEndian.Uint64(c[56:64]), &p[7]) +
			coarseBlock(binary.LittleEndian.Uint64(c[64:72]), &p[8]) + coarseBlock(binary.LittleEndian.Uint64(c[72:80]), &p[9]) +
			coarseBlock(binary.LittleEndian.Uint64(c[80:88]), &p[10]) + coarseBlock(binary.LittleEndian.Uint64(c[88:96]), &p[11]) +
			coarseBlock(binary.LittleEndian.Uint64(c[96:104]), &p[12])
	} else {
		for b := range words {
			acc += coarseBlock(binary.LittleEndian.Uint64(code[8*b:]), &words[b])
		}
	}
	return acc + 2*int64(len(words)) - cq.bias
}

// coarseBlock is Σu·c over one block of eight code bytes w (u = d+128),
// or 1 or 2 less. The even bytes masked to 16-bit lanes, u0 + u2·2^16 +
// u4·2^32 + u6·2^48, times p[0] hold u0·c0+u2·c2+u4·c4+u6·c6 = T at 2^48
// and below it L, three lanes of cross terms u·c: |T| ≤ 4·255·32 < 2^15
// and |L| < 3·255·32·2^32 + 2^31 < 2^47, so the product read as signed
// and shifted down 48 is T + ⌊L/2^48⌋, T or T−1; the odd bytes alike.
func coarseBlock(w uint64, p *[2]uint64) int64 {
	const lanes, offset = 0x00ff00ff00ff00ff, 0x8080808080808080
	w ^= offset
	return int64((w&lanes)*p[0])>>48 + int64((w>>8&lanes)*p[1])>>48
}

// normed reports that a code's |d|·scale is at most 1+normSlack, scale
// positive: what Quantize makes (its scale is 1/|d| in float32), so
// what the coarse bound may judge.
func normed(dims []int8, scale float32) bool {
	var s0, s1, s2, s3 int64 // four sums: every code of a store passes here as it loads
	i := 0
	for ; i+4 <= len(dims); i += 4 {
		d := dims[i : i+4 : i+4]
		s0 += int64(d[0]) * int64(d[0])
		s1 += int64(d[1]) * int64(d[1])
		s2 += int64(d[2]) * int64(d[2])
		s3 += int64(d[3]) * int64(d[3])
	}
	for ; i < len(dims); i++ {
		s0 += int64(dims[i]) * int64(dims[i])
	}
	return scale > 0 && float64(scale)*math.Sqrt(float64(s0+s1+s2+s3)) <= 1+normSlack
}
