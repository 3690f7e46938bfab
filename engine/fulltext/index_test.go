package fulltext

import (
	"slices"
	"testing"
)

// TestSortedSumOrderBlind checks that a document's score does not depend on
// the order its contributions arrive in (the query terms' map order): two
// documents with the same contributions must tie exactly, so that ranking's
// tie-break decides their order and not the map. Each case's contributions
// sum to different floats when added in the orders listed as they come.
func TestSortedSumOrderBlind(t *testing.T) {
	tests := []struct {
		name   string
		orders [][]float64
	}{
		{"three tenths", [][]float64{{0.1, 0.2, 0.3}, {0.3, 0.2, 0.1}, {0.2, 0.3, 0.1}}},
		{"four matches", [][]float64{
			{0.484738, 1.099381, 1.751205, 0.272567},
			{0.272567, 1.751205, 1.099381, 0.484738},
			{1.751205, 0.484738, 0.272567, 1.099381},
		}},
		{"more than fit inline", [][]float64{
			{1e-3, 0.7, 3.1, 0.9, 0.1, 2.2},
			{2.2, 0.1, 0.9, 3.1, 0.7, 1e-3},
			{0.9, 2.2, 1e-3, 0.1, 3.1, 0.7},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			running := map[float64]bool{}
			var want float64
			for i, parts := range tc.orders {
				var r float64
				for _, s := range parts {
					r += s
				}
				running[r] = true
				got := sortedSum(slices.Clone(parts))
				if i == 0 {
					want = got
				} else if got != want {
					t.Errorf("order %v sums to %v, order %v to %v", parts, got, tc.orders[0], want)
				}
			}
			if len(running) < 2 {
				t.Fatalf("the orders sum to the same float as they come (%v): the case tests nothing", running)
			}
		})
	}
}
