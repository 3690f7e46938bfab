package embed

import (
	"math"
	"unicode/utf8"
)

// A word the table lacks stands for itself: its stand-in is the sum of
// pseudo-random ±1 vectors, one per character trigram of "<word>"
// (fastText's subword idea, without trained subword vectors), scaled to
// oovNorm. Random directions in 100 dimensions are nearly orthogonal to
// every real word, so the stand-in adds evidence only where the same or a
// similarly spelled unknown word occurs on both sides. Tokens under three
// bytes or without a letter get none: numbers and initials, which the
// table lacks too, would only add noise.
//
// A stand-in is f·v, v holding per component the sum of that component's
// ±1s: whole numbers no larger than the word's length. A word short
// enough to be cached (maxCachedWord bytes) keeps them as int8, so that a
// cached stand-in is 100 bytes that axpy adds exactly as it adds a row of
// the table; float32 holds every such sum exactly, so this is the float
// sum the ±1s would give one by one, bit for bit.

// standsIn reports whether tok gets a stand-in.
func (s *Static) standsIn(tok []byte) bool {
	if len(tok) < 3 || s.oovNorm == 0 {
		return false
	}
	for _, c := range tok {
		if 'a' <= c && c <= 'z' || c >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

// addStandIn adds the stand-in of tok, a token the table lacks, to acc,
// and reports whether there was one. The chunks of one memory repeat its
// unknown words (a command's name in every example), and so do the
// memories of one folder: stand-ins of short words are cached.
func (s *Static) addStandIn(a *adder, tok []byte) bool {
	if !s.standsIn(tok) { // most are numbers: spare them the cache
		return false
	}
	if len(tok) > maxCachedWord {
		var v [builtinDim]float32
		standInSums(tok, &v)
		f, ok := s.standInScale(&v)
		if ok {
			a.flush()
			for k, x := range v {
				a.acc[k] += f * x
			}
		}
		return ok
	}
	e := s.unknowns.get(tok)
	if e == nil {
		e = s.newStandIn(tok)
		s.unknowns.put(e)
	}
	if e.ok {
		a.add(e.q[:], e.f)
	}
	return e.ok
}

// newStandIn builds the cache entry of tok, at most maxCachedWord bytes.
func (s *Static) newStandIn(tok []byte) *standIn {
	e := &standIn{n: uint8(len(tok))}
	copy(e.word[:], tok)
	var v [builtinDim]float32
	standInSums(tok, &v)
	for k, x := range v {
		e.q[k] = byte(int8(x)) // |x| <= len(tok) <= maxCachedWord < 128
	}
	e.f, e.ok = s.standInScale(&v)
	return e
}

// standInScale returns the factor that brings v to length oovNorm, or
// false if v is zero (the ±1s cancelled in every component: possible,
// not likely).
func (s *Static) standInScale(v *[builtinDim]float32) (float32, bool) {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return 0, false
	}
	return s.oovNorm / float32(math.Sqrt(n)), true
}

// maxExactTrigrams is the number of trigrams up to which float32 sums of
// ±1s are exact integers (2^24), so that counting the +1s gives the very
// sums that adding them one by one gives.
const maxExactTrigrams = 1 << 24

// standInSums sets v, which must be zero, to the sum over the trigrams of
// "<tok>" of their ±1 vectors: component k gets +1 where bit k of the
// trigram's sign bits is set, -1 where it is not. The bits are FNV-1a of
// the trigram fed to splitmix64, one output per 64 components.
func standInSums(tok []byte, v *[builtinDim]float32) {
	if len(tok) > maxExactTrigrams {
		standInSumsFloat(tok, v)
		return
	}
	// Rather than adding 100 floats per trigram, count the set bits of
	// each component, eight components to a uint64, a byte each: adding
	// spreadBits of a byte of sign bits counts eight components at once.
	// A byte holds 255 trigrams; longer words flush their counts into
	// ones every 255. Each count c then becomes 2c − trigrams.
	const groups = (builtinDim + 7) / 8
	var ones [groups * 8]int
	trigrams := len(tok)
	for from := 0; from < trigrams; from += 255 {
		var counts [groups]uint64
		for i := from; i < min(trigrams, from+255); i++ {
			h := trigramSeed(tok, i)
			for w := 0; w < groups; w += 8 {
				bits := splitmix64(&h)
				for g := w; g < min(groups, w+8); g++ {
					counts[g] += spreadBits[byte(bits)]
					bits >>= 8
				}
			}
		}
		for k := range ones {
			ones[k] += int(byte(counts[k/8] >> (8 * (k % 8))))
		}
	}
	for k := range v {
		v[k] = float32(2*ones[k] - trigrams)
	}
}

// spreadBits[b] has byte j set to bit j of b.
var spreadBits = func() (t [256]uint64) {
	for b := range t {
		for j := range 8 {
			t[b] |= uint64(b>>j&1) << (8 * j)
		}
	}
	return t
}()

// standInSumsFloat is what standInSums computes, one float addition at a
// time: it serves the tokens too long for the counting to be exact.
func standInSumsFloat(tok []byte, v *[builtinDim]float32) {
	for i := range len(tok) {
		h := trigramSeed(tok, i)
		var bits uint64
		for k := range v {
			if k%64 == 0 {
				bits = splitmix64(&h)
			}
			v[k] += float32(int(bits&1)*2 - 1)
			bits >>= 1
		}
	}
}

// trigramSeed is FNV-1a of the i-th trigram of "<" + tok + ">".
func trigramSeed(tok []byte, i int) uint64 {
	padded := func(i int) byte {
		switch i {
		case 0:
			return '<'
		case len(tok) + 1:
			return '>'
		}
		return tok[i-1]
	}
	h := uint64(14695981039346656037)
	for j := i; j < i+3; j++ {
		h ^= uint64(padded(j))
		h *= 1099511628211
	}
	return h
}

// splitmix64 advances the state and returns the next output (Steele, Lea
// and Flood's SplitMix64, as in java.util.SplittableRandom).
func splitmix64(state *uint64) uint64 {
	*state += 0x9e3779b97f4a7c15
	z := *state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
