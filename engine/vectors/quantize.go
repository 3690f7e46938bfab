package vectors

import (
	"encoding/binary"
	"math"
)

// Code is a unit vector held in 8 bits a dimension: the direction
// rounded to 127 steps of its largest coordinate, and the factor that
// makes the rounded vector unit length again. The sessions corpus keeps
// its vectors so, on disk and in memory, a quarter of the float32 bytes:
// a message's similarity to a query moves by about 1e-3 (engine/vectors
// tests bound it), which reorders only near-ties (docs/design.md).
type Code struct {
	Scale float32 // 1/|Dims|: Dims·Scale is unit length
	Dims  []int8
}

// Quantize returns v's unit direction in 8 bits; ok is false for a
// vector that has no direction (all zero, or not finite).
func Quantize(v []float32) (c Code, ok bool) {
	var maxAbs float64
	for _, x := range v {
		if a := math.Abs(float64(x)); a > maxAbs {
			maxAbs = a
		}
	}
	if _, ok := inverseLength(v); !ok || maxAbs == 0 {
		return Code{}, false
	}
	c.Dims = make([]int8, len(v))
	var sum float64
	for i, x := range v {
		q := math.Round(float64(x) * 127 / maxAbs)
		c.Dims[i] = int8(q)
		sum += q * q
	}
	c.Scale = float32(1 / math.Sqrt(sum))
	return c, true
}

// Float returns the unit vector c stands for.
func (c Code) Float() []float32 {
	out := make([]float32, len(c.Dims))
	for i, d := range c.Dims {
		out[i] = float32(d) * c.Scale
	}
	return out
}

// EncodeCode is the byte form in which the sessions state store keeps a
// vector: the scale as a little-endian float32, then one byte a dimension
// (104 bytes for the built-in embedder's 100 dimensions, where Encode
// writes 400).
func EncodeCode(c Code) []byte {
	b := make([]byte, 4+len(c.Dims))
	binary.LittleEndian.PutUint32(b, math.Float32bits(c.Scale))
	for i, d := range c.Dims {
		b[4+i] = byte(d)
	}
	return b
}

// DecodeCode reads a stored vector of dim dimensions, in either form:
// EncodeCode's (4+dim bytes), or Encode's float32s (4·dim bytes, what
// stores written before the 8-bit form hold), quantised here. ok is false
// for any other length, or a vector with no direction.
func DecodeCode(b []byte, dim int) (Code, bool) {
	return DecodeCodeInto(nil, b, dim)
}

// DecodeCodeInto is DecodeCode with the code's dimensions in buf's array
// when it has room (a loader that hands each code on to a store that
// copies it reuses one buffer instead of allocating per vector).
func DecodeCodeInto(buf []int8, b []byte, dim int) (Code, bool) {
	switch {
	case len(b) == 4+dim: // never 4·dim: that would need dim = 4/3
		if cap(buf) < dim {
			buf = make([]int8, dim)
		}
		c := Code{Scale: math.Float32frombits(binary.LittleEndian.Uint32(b)), Dims: buf[:dim]}
		for i := range c.Dims {
			c.Dims[i] = int8(b[4+i])
		}
		return c, c.Scale > 0 && !math.IsInf(float64(c.Scale), 0)
	case len(b) == 4*dim:
		return Quantize(Decode(b))
	}
	return Code{}, false
}

// Similarity is q·(the unit vector c stands for), as a Flat store holding
// c computes it (Flat.Nearest); ok is false when q is not of c's length.
func (c Code) Similarity(q []float32) (float32, bool) {
	if len(q) != len(c.Dims) || len(q) == 0 {
		return -2, false
	}
	return dotCode(q, c.Dims, c.Scale), true
}

// dotCode is q·(the vector c stands for), q of c's length.
func dotCode(q []float32, dims []int8, scale float32) float32 {
	dims = dims[:len(q)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(q); i += 4 {
		s0 += q[i] * float32(dims[i])
		s1 += q[i+1] * float32(dims[i+1])
		s2 += q[i+2] * float32(dims[i+2])
		s3 += q[i+3] * float32(dims[i+3])
	}
	for ; i < len(q); i++ {
		s0 += q[i] * float32(dims[i])
	}
	return (s0 + s1 + s2 + s3) * scale
}
