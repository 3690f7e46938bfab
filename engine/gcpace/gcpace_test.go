package gcpace

import (
	"math"
	"runtime/debug"
	"testing"
)

// gcSettings reads the collector's percent and memory limit without
// changing them.
func gcSettings() (percent int, limit int64) {
	percent = debug.SetGCPercent(-1)
	debug.SetGCPercent(percent)
	return percent, debug.SetMemoryLimit(-1)
}

// TestGCPacing: a full sync runs with the collector paced by a memory
// limit (GOGC off), overlapping syncs share it, the last one to end
// restores Go's defaults, and a process with its own settings keeps them.
// Not parallel: GC settings belong to the whole test binary.
func TestGCPacing(t *testing.T) {
	if p, l := gcSettings(); p != 100 || l != math.MaxInt64 {
		t.Skipf("test binary runs with GOGC=%d, memory limit %d: the pacing leaves those alone", p, l)
	}
	const budget = 64 << 20
	a := Start(budget)
	if p, l := gcSettings(); p != -1 || l < budget {
		t.Fatalf("while pacing: GOGC %d, limit %d; want off and at least %d", p, l, budget)
	}
	b := Start(budget)
	a.Stop()
	a.Stop() // a second stop is no second release
	if p, _ := gcSettings(); p != -1 {
		t.Fatalf("one of two syncs ended: GOGC %d, want still off", p)
	}
	b.Stop()
	if p, l := gcSettings(); p != 100 || l != math.MaxInt64 {
		t.Fatalf("after the last sync: GOGC %d, limit %d; want 100 and none", p, l)
	}

	// A budget below the live heap gives way to twice the live heap.
	tiny := Start(1 << 10)
	live := make([]byte, 32<<20) // keep 32 MB live through the check
	debug.FreeOSMemory()         // a collection, so the live heap counts it
	tiny.KeepUp()
	if _, l := gcSettings(); l < 2*int64(len(live)) {
		t.Errorf("limit %d with %d bytes live: the collector would run back to back", l, len(live))
	}
	tiny.Stop()
	live[0] = 1

	// A process that chose its own collector settings keeps them.
	debug.SetGCPercent(50)
	own := Start(budget)
	if p, l := gcSettings(); p != 50 || l != math.MaxInt64 {
		t.Errorf("with GOGC 50 set by the process: pacing made it %d, limit %d", p, l)
	}
	own.Stop()
	if p, _ := gcSettings(); p != 50 {
		t.Errorf("after pacing a tuned process: GOGC %d, want its 50", p)
	}
	debug.SetGCPercent(100)
}
