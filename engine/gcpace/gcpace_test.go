package gcpace

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestGCPacing: a full sync runs with the collector paced by a memory
// limit (GOGC off), overlapping syncs share it, the last one to end
// restores Go's defaults, and a process with its own settings keeps them.
// Not parallel: GC settings belong to the whole test binary.
func TestGCPacing(t *testing.T) {
	if p, l := Settings(); p != 100 || l != math.MaxInt64 {
		t.Skipf("test binary runs with GOGC=%d, memory limit %d: the pacing leaves those alone", p, l)
	}
	const budget = 64 << 20
	a := Start(budget, 2)
	if p, l := Settings(); p != -1 || l < budget {
		t.Fatalf("while pacing: GOGC %d, limit %d; want off and at least %d", p, l, budget)
	}
	b := Start(budget, 2)
	a.Stop()
	a.Stop() // a second stop is no second release
	if p, _ := Settings(); p != -1 {
		t.Fatalf("one of two syncs ended: GOGC %d, want still off", p)
	}
	b.Stop()
	if p, l := Settings(); p != 100 || l != math.MaxInt64 {
		t.Fatalf("after the last sync: GOGC %d, limit %d; want 100 and none", p, l)
	}

	// A budget below the live heap gives way to the live heap and the
	// growth asked on top: twice it, or one and a half times.
	live := make([]byte, 32<<20) // keep 32 MB live through the checks
	for _, c := range []struct {
		growth   int64
		min, max int64
	}{{2, 64 << 20, 96 << 20}, {1, 48 << 20, 64<<20 + 8<<20}} {
		tiny := Start(1<<10, 2)
		tiny.Tighten(c.growth) // never looser than Start's
		debug.FreeOSMemory()   // a collection, so the live heap counts it
		tiny.KeepUp()
		if _, l := Settings(); l < c.min || l > c.max {
			t.Errorf("growth %d: limit %d MiB with %d MiB live, want %d–%d", c.growth, l>>20, len(live)>>20, c.min>>20, c.max>>20)
		}
		tiny.Stop()
	}
	live[0] = 1

	// A process that chose its own collector settings keeps them.
	debug.SetGCPercent(50)
	own := Start(budget, 2)
	if p, l := Settings(); p != 50 || l != math.MaxInt64 {
		t.Errorf("with GOGC 50 set by the process: pacing made it %d, limit %d", p, l)
	}
	own.Stop()
	if p, _ := Settings(); p != 50 {
		t.Errorf("after pacing a tuned process: GOGC %d, want its 50", p)
	}
	debug.SetGCPercent(100)
}
