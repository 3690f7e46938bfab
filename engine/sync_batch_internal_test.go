package engine

import "testing"

// TestNextBatch: a batch ends at the file count or at the byte bound,
// whichever comes first, and always takes at least one file.
func TestNextBatch(t *testing.T) {
	sizes := func(s ...int64) []syncJob {
		jobs := make([]syncJob, len(s))
		for i, n := range s {
			jobs[i].size = n
		}
		return jobs
	}
	cases := []struct {
		name     string
		jobs     []syncJob
		maxFiles int
		maxBytes int64
		want     int
	}{
		{"empty", nil, 4, 100, 0},
		{"file count binds", sizes(1, 1, 1, 1, 1, 1), 4, 100, 4},
		{"bytes bind", sizes(40, 40, 40, 40), 10, 100, 2},
		{"exactly the bound", sizes(50, 50, 1), 10, 100, 2},
		{"first file alone is larger", sizes(500, 1, 1), 10, 100, 1},
		{"everything fits", sizes(10, 20, 30), 10, 100, 3},
		{"skipped entries count nothing", sizes(0, 0, 0, 90, 20), 10, 100, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := nextBatch(c.jobs, c.maxFiles, c.maxBytes); got != c.want {
				t.Errorf("nextBatch = %d, want %d", got, c.want)
			}
		})
	}
}
