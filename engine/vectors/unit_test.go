package vectors

import (
	"math"
	"math/rand/v2"
	"testing"
)

// sameBits says a and b hold the same float32s to the bit.
func sameBits(a, b []float32) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// TestUnitIsNormalize: unit gives Normalize's result to the bit, sharing
// the input only when that result equals it, and never changes its input.
func TestUnitIsNormalize(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	raw := func(dim int, scale float64) []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = float32(r.NormFloat64() * scale)
		}
		return v
	}
	cases := map[string][]float32{
		"zero":         make([]float32, 8),
		"nan":          {1, float32(math.NaN()), 0},
		"inf":          {1, float32(math.Inf(1))},
		"one axis":     {0, 1, 0, 0},
		"minus one":    {0, -1, 0},
		"negative 0":   {float32(math.Copysign(0, -1)), 1},
		"scaled axis":  {0, 3, 0},
		"short":        {3, 4},
		"tiny":         raw(100, 1e-20),
		"huge":         raw(100, 1e18),
		"last differs": append(Normalize(raw(99, 1)), 0.5),
	}
	for i := range 200 {
		v := raw(1+i%300, 1)
		cases["raw "+string(rune('a'+i%26))+string(rune('a'+i/26))] = v
		cases["normalised "+string(rune('a'+i%26))+string(rune('a'+i/26))] = Normalize(v)
	}
	shared := 0
	for name, v := range cases {
		in := append([]float32(nil), v...)
		want, got := Normalize(v), unit(v)
		if !sameBits(got, want) {
			t.Errorf("%s: unit %v, Normalize %v", name, got, want)
		}
		if !sameBits(v, in) {
			t.Errorf("%s: unit changed its input", name)
		}
		if len(got) > 0 && &got[0] == &v[0] {
			shared++
			if !sameBits(v, want) {
				t.Errorf("%s: unit kept a vector Normalize changes", name)
			}
		}
	}
	if shared == 0 {
		t.Error("unit copied every vector, unit-length ones too")
	}
}

// TestEncodeDecode: the state stores' byte form gives the vector back bit
// for bit, the values no arithmetic keeps (NaN, -0) included.
func TestEncodeDecode(t *testing.T) {
	v := []float32{0, float32(math.Copysign(0, -1)), 1.5, -3.25e-7, float32(math.Inf(1)), float32(math.NaN())}
	b := Encode(v)
	if len(b) != 4*len(v) {
		t.Fatalf("%d bytes for %d floats", len(b), len(v))
	}
	got := Decode(b)
	for i := range v {
		if math.Float32bits(got[i]) != math.Float32bits(v[i]) {
			t.Errorf("float %d: %v, want %v", i, got[i], v[i])
		}
	}
	if n := len(Decode(b[:len(b)-1])); n != len(v)-1 {
		t.Errorf("a trailing partial float gave %d floats, want %d", n, len(v)-1)
	}
}
