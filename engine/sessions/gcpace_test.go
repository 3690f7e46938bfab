package sessions

import (
	"context"
	"math"
	"testing"

	"mnemo/engine/gcpace"
)

// TestSessionsSyncPacesGC: a first sync runs its batches with the
// collector paced by a memory limit (GOGC off), restores Go's defaults
// after, and a sync with nothing new to read leaves them alone. Not
// parallel: GC settings belong to the whole test binary.
func TestSessionsSyncPacesGC(t *testing.T) {
	if p, l := gcpace.Settings(); p != 100 || l != math.MaxInt64 {
		t.Skipf("test binary runs with GOGC=%d, memory limit %d: the pacing leaves those alone", p, l)
	}
	c := newMixedCorpus(t, 7, 7)
	mixedSteps(t, c)[0].write()
	dir := t.TempDir()
	var during [][2]int64
	progress := func(done, total int) {
		if done > 0 {
			p, l := gcpace.Settings()
			during = append(during, [2]int64{int64(p), l})
		}
	}
	for _, tt := range []struct {
		name  string
		paced bool
	}{{"first", true}, {"nothing new", false}} {
		t.Run(tt.name, func(t *testing.T) {
			during = nil
			s, err := Open(context.Background(), Config{IndexDir: dir, Sources: c.sources(dir), Progress: progress})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			s.batchMsgs = 5
			mustSync(t, s)
			for i, d := range during {
				if paced := d[0] == -1 && d[1] >= syncMemoryBudget; paced != tt.paced {
					t.Errorf("after batch %d: GOGC %d, limit %d; paced %v, want %v", i+1, d[0], d[1], paced, tt.paced)
				}
			}
			if tt.paced && len(during) < 2 {
				t.Fatalf("progress after %d batches, want several", len(during))
			}
			if p, l := gcpace.Settings(); p != 100 || l != math.MaxInt64 {
				t.Errorf("after the sync: GOGC %d, limit %d; want 100 and none", p, l)
			}
		})
	}
}
