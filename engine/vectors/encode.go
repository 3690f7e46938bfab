package vectors

import (
	"encoding/binary"
	"math"
)

// Encode is the byte form in which both corpora's state stores keep a
// vector: little-endian float32s, 4 bytes each, nothing else.
func Encode(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// Decode reads a vector Encode wrote; a trailing partial float is ignored.
func Decode(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}
