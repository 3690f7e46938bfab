package table

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func sample() *Table {
	return &Table{
		Dim:    3,
		A:      1e-3,
		Common: []float32{0.6, 0, 0.8},
		Words:  []string{"the", "well-known", "kitten"},
		Scales: []float32{0.01, 0.02, 0.5},
		Quant:  []byte{1, 2, 3, 0x81, 0, 127, 255, 254, 253},
	}
}

func encode(t *testing.T, tb *Table) []byte {
	t.Helper()
	b, err := Encode(tb)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	return b
}

// reseal recomputes the checksum, so a test can reach the checks behind it.
func reseal(b []byte) []byte {
	binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], castagnoli))
	return b
}

func TestRoundTrip(t *testing.T) {
	in := sample()
	got, err := Decode(encode(t, in))
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if got.Dim != in.Dim || got.A != in.A || !slices.Equal(got.Common, in.Common) ||
		!slices.Equal(got.Words, in.Words) || !slices.Equal(got.Scales, in.Scales) || !slices.Equal(got.Quant, in.Quant) {
		t.Errorf("round trip changed the table:\n got %+v\nwant %+v", got, in)
	}
	for i, w := range in.Words {
		if r, ok := got.Index.Row([]byte(w)); !ok || int(r) != i {
			t.Errorf("Index.Row(%q) = %d, %v; want %d", w, r, ok, i)
		}
	}
	if row := got.Row(1); !slices.Equal(row, []float32{0.02 * -127, 0, 0.02 * 127}) {
		t.Errorf("Row(1) = %v", row)
	}
}

func TestDecodeCorrupt(t *testing.T) {
	good := encode(t, sample())
	mut := func(f func(b []byte) []byte) []byte { return f(slices.Clone(good)) }
	withTable := func(f func(*Table)) []byte {
		tb := sample()
		f(tb)
		b, err := Encode(tb)
		if err != nil {
			t.Fatalf("Encode: %v", err)
		}
		return b
	}
	put32 := func(off int, v uint32) func([]byte) []byte {
		return func(b []byte) []byte { binary.LittleEndian.PutUint32(b[off:], v); return reseal(b) }
	}
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "shorter than"},
		{"header only", good[:headerLen], "shorter than"},
		{"bad magic", mut(func(b []byte) []byte { b[1] = 'x'; return b }), "bad magic"},
		{"unknown version", mut(put32(8, 2)), "version 2"},
		{"flipped bit", mut(func(b []byte) []byte { b[len(b)-6] ^= 8; return b }), "checksum mismatch"},
		{"truncated", good[:len(good)-1], "checksum mismatch"},
		{"extra byte", reseal(append(slices.Clone(good), 0, 0, 0, 0, 0)), "length"},
		{"zero dim", mut(put32(12, 0)), "dim 0"},
		{"huge dim", mut(put32(12, 1<<31)), "dim"},
		{"huge word count", mut(put32(16, math.MaxUint32)), "length"},
		{"NaN a", mut(put32(20, math.Float32bits(float32(math.NaN())))), "SIF parameter"},
		{"word block too long", mut(put32(24, 100)), "length"},
		{"word overruns block", mut(func(b []byte) []byte { b[headerLen+12] = 200; return reseal(b) }), "overruns"},
		{"zero-length word", mut(func(b []byte) []byte { b[headerLen+12] = 0; return reseal(b) }), "overruns"},
		{"duplicate word", withTable(func(tb *Table) { tb.Words[2] = "the" }), "appears twice"},
		{"common not unit", withTable(func(tb *Table) { tb.Common[0] = 1 }), "norm"},
		{"NaN common", withTable(func(tb *Table) { tb.Common[1] = float32(math.NaN()) }), "common component 1"},
		{"negative scale", withTable(func(tb *Table) { tb.Scales[1] = -1 }), "scale"},
		{"infinite scale", withTable(func(tb *Table) { tb.Scales[0] = float32(math.Inf(1)) }), "scale"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb, err := Decode(tt.data)
			if err == nil {
				t.Fatalf("Decode accepted corrupt data: %+v", tb)
			}
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want ErrCorrupt mentioning %q", err, tt.want)
			}
		})
	}
}

// TestDecodeNeverPanics feeds every truncation and many random mutations,
// with the checksum recomputed so that the structural checks are reached.
func TestDecodeNeverPanics(t *testing.T) {
	good := encode(t, sample())
	for n := range len(good) {
		if _, err := Decode(good[:n]); err == nil {
			t.Errorf("accepted a %d-byte prefix", n)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b := slices.Clone(good)
		for range 1 + rng.IntN(3) {
			b[rng.IntN(len(b)-4)] = byte(rng.Uint32())
		}
		Decode(reseal(b)) // must return, valid or not
	}
}

func TestEncodeRejects(t *testing.T) {
	tests := []struct {
		name string
		f    func(*Table)
	}{
		{"no dim", func(tb *Table) { tb.Dim = 0 }},
		{"short common", func(tb *Table) { tb.Common = tb.Common[:2] }},
		{"missing scale", func(tb *Table) { tb.Scales = tb.Scales[:2] }},
		{"short quant", func(tb *Table) { tb.Quant = tb.Quant[:8] }},
		{"empty word", func(tb *Table) { tb.Words[0] = "" }},
		{"long word", func(tb *Table) { tb.Words[0] = strings.Repeat("a", 256) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := sample()
			tt.f(tb)
			if _, err := Encode(tb); err == nil {
				t.Error("Encode accepted an inconsistent table")
			}
		})
	}
}

func TestWeights(t *testing.T) {
	const n = 140000
	w := Weights(n, 3e-4)
	for r := 1; r < n; r++ {
		if !(w[r] > w[r-1]) || !(w[r] < 1) {
			t.Fatalf("weights not increasing in (0,1) at rank %d: %v, %v", r, w[r-1], w[r])
		}
	}
	// Spot values quoted in the Weights doc comment.
	for _, c := range []struct {
		rank     int
		min, max float64
	}{{0, 0.003, 0.005}, {100, 0.26, 0.29}, {1000, 0.77, 0.80}} {
		if got := w[c.rank]; got < c.min || got > c.max {
			t.Errorf("weight of rank %d = %.4f, want in [%v, %v]", c.rank, got, c.min, c.max)
		}
	}
}

func TestIsWord(t *testing.T) {
	tests := []struct {
		w    string
		want bool
	}{
		{"the", true},
		{"well-known", true},
		{"mid-1990s", true},
		{"o'brien", true},
		{"2014", true},
		{"café", true},
		{"", false},
		{",", false},
		{"-", false},
		{"'", false},
		{"anti-", false},
		{"-lrb-", false},
		{"'s", false},
		{"The", false},
		{"e.g.", false},
		{"a_b", false},
		{strings.Repeat("a", 256), false},
	}
	for _, tt := range tests {
		if got := IsWord(tt.w); got != tt.want {
			t.Errorf("IsWord(%q) = %v, want %v", tt.w, got, tt.want)
		}
	}
}
