package eval

import (
	"slices"
	"time"
)

// Latency summarises per-query search times in milliseconds.
type Latency struct {
	N    int     `json:"n"`
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	Mean float64 `json:"mean"`
	Max  float64 `json:"max"`
}

// Summarise computes the latency percentiles of ds. Percentiles interpolate
// linearly between the two nearest ranks (numpy's default), so p99 of 50
// queries lies between the two slowest rather than being the slowest.
func Summarise(ds []time.Duration) Latency {
	if len(ds) == 0 {
		return Latency{}
	}
	ms := make([]float64, len(ds))
	var sum float64
	for i, d := range ds {
		ms[i] = float64(d) / float64(time.Millisecond)
		sum += ms[i]
	}
	slices.Sort(ms)
	return Latency{
		N:    len(ms),
		P50:  Percentile(ms, 50),
		P95:  Percentile(ms, 95),
		P99:  Percentile(ms, 99),
		Mean: sum / float64(len(ms)),
		Max:  ms[len(ms)-1],
	}
}

// Percentile returns the p-th percentile (0–100) of sorted, an ascending
// slice, interpolating linearly between closest ranks; 0 for an empty slice.
func Percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	pos := p / 100 * float64(len(sorted)-1)
	lo := int(pos)
	if lo >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	frac := pos - float64(lo)
	return sorted[lo] + frac*(sorted[lo+1]-sorted[lo])
}
