package eval

import (
	"errors"
	"math"
	"math/rand/v2"
)

// Draws and Seed fix the randomisation test, as score.py fixes them
// (10,000 draws, seed 13), so that a p-value is reproducible.
const (
	Draws = 10000
	Seed  = 13
)

// PairedTest is the paired two-sided sign-flip randomisation test on the
// mean difference of a and b, two systems' per-query values of one metric
// over the same queries in the same order. It returns mean(a−b) and the
// p-value (hits+1)/(Draws+1), where hits counts the draws in which flipping
// the sign of each difference at random gives a mean at least as far from
// zero as the observed one.
//
// The draws come from Go's PCG generator seeded with Seed, not numpy's, so
// p agrees with score.py's only to within the test's own sampling error
// (about ±0.005 near p = 0.05); the mean difference agrees exactly.
func PairedTest(a, b []float64) (diff, p float64, err error) {
	if len(a) != len(b) {
		return 0, 0, errors.New("paired test needs the same queries in both runs")
	}
	n := len(a)
	if n == 0 {
		return 0, 1, nil
	}
	d := make([]float64, n)
	var sum float64
	for i := range a {
		d[i] = a[i] - b[i]
		sum += d[i]
	}
	obs := math.Abs(sum) / float64(n)
	rng := rand.New(rand.NewPCG(Seed, Seed))
	hits := 0
	for range Draws {
		var s float64
		var signs uint64
		for i, x := range d {
			if i%64 == 0 {
				signs = rng.Uint64()
			}
			if signs&1 == 1 {
				x = -x
			}
			signs >>= 1
			s += x
		}
		if math.Abs(s)/float64(n) >= obs-1e-12 {
			hits++
		}
	}
	return sum / float64(n), float64(hits+1) / float64(Draws+1), nil
}
