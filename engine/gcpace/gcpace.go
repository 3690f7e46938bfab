// Package gcpace paces the garbage collector through a sync that indexes
// everything: the memory corpus's full or first sync and the sessions
// corpus's.
package gcpace

import (
	"math"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Pacing the garbage collector through a full sync.
//
// A from-scratch sync of tldr (38,430 files) allocates about 2.3 GB while
// its live heap stays between 40 and 125 MB: with Go's default pacing
// (GOGC 100, a collection whenever the heap doubles) that is 35–50
// collections and most of a second of the sync's 8–9 s of CPU. For the
// length of a full sync the collector instead runs when the process holds
// a budget (GOGC off under a memory limit; MemoryBudget for the memory
// corpus, the sessions corpus its own): 13–14 collections
// (BenchmarkSyncCorpus), and on tldr, mnemo sync, 6 pairs alternating on a
// loaded machine, CPU 8.97–11.93 → 8.20–10.93 s (mean 9.94 → 9.31, lower
// in every pair) at a peak RSS of 294–322 MB instead of 273–298. 224 MiB
// saved about half as much; 256 keeps the peak under 350 MB. To keep a
// large live heap (a big vault's first sync) from making the collector
// run back to back under the limit, the limit is raised after every batch
// to at least twice the live heap, which is never tighter than the
// default pacing.
//
// GC settings belong to the process, so this is the one piece of
// process-wide state in the engine: syncs that overlap (two engines in one
// process, a memory and a sessions sync under serve) share one pacing, set by the first and undone by the last. A
// process that has tuned its own collector (GOGC other than 100, or a
// memory limit) keeps its settings.

// MemoryBudget is the memory the Go runtime may hold during a memory
// corpus's full sync before it collects. tldr's peak RSS stays under
// ~325 MB with it (mapped index segments and bbolt's pages come on top of
// the runtime's memory).
const MemoryBudget = 256 << 20

var gcPace struct {
	mu     sync.Mutex
	users  int   // syncs pacing now
	active bool  // the settings below are in force: restore them at the end
	budget int64 // the least memory limit while pacing
	growth int64 // the limit's headroom over the live heap, in halves of it (Start)
	limit  int64 // the memory limit set now
}

// Pacer is one sync's share of the pacing; the zero value (nil) paces
// nothing.
type Pacer struct{ done bool }

// Start starts pacing the collector for a full sync with budget bytes,
// the limit following a larger live heap at growth halves of it on top
// (2: twice the live heap, as Go's default pacing; 1: one and a half
// times); call KeepUp after every batch and Stop at the end. Syncs that
// overlap keep the first one's budget and the least growth asked.
func Start(budget int64, growth int64) *Pacer {
	gcPace.mu.Lock()
	defer gcPace.mu.Unlock()
	gcPace.users++
	if gcPace.users == 1 {
		gcPace.active = false
		percent := debug.SetGCPercent(-1)
		if percent != 100 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
			debug.SetGCPercent(percent) // the process chose its own: leave it
			return &Pacer{}
		}
		gcPace.active, gcPace.budget, gcPace.growth, gcPace.limit = true, budget, growth, 0
		keepUpLocked()
	} else if growth < gcPace.growth {
		gcPace.growth = growth
	}
	return &Pacer{}
}

// KeepUp raises the memory limit to at least twice the live heap (plus a
// little for what is not heap: stacks, the runtime's own), so that a live
// heap near the budget is collected no more often than by default. No more
// than that: tldr's live heap peaks near 125 MB, and the quarter of the
// budget first allowed on top lifted the limit at such peaks and peak RSS
// with it.
func (p *Pacer) KeepUp() {
	if p == nil || p.done {
		return
	}
	gcPace.mu.Lock()
	defer gcPace.mu.Unlock()
	keepUpLocked()
}

func keepUpLocked() {
	if !gcPace.active {
		return
	}
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	var live int64
	if s[0].Value.Kind() == metrics.KindUint64 {
		live = int64(min(s[0].Value.Uint64(), math.MaxInt64/4))
	}
	want := max(gcPace.budget, live+gcPace.growth*live/2+16<<20)
	if want != gcPace.limit {
		debug.SetMemoryLimit(want)
		gcPace.limit = want
	}
}

// Tighten lowers the growth the limit allows over a live heap above the
// budget (Start) to growth, if that is less, for as long as the pacing
// lasts: for a sync that holds more than its batches (a sessions sync
// reading one long transcript holds the reader's pass over all of it).
func (p *Pacer) Tighten(growth int64) {
	if p == nil || p.done {
		return
	}
	gcPace.mu.Lock()
	defer gcPace.mu.Unlock()
	if gcPace.active && growth < gcPace.growth {
		gcPace.growth = growth
		keepUpLocked()
	}
}

// Settings reads the collector's percent and memory limit without
// changing them (what tests of a paced sync look at).
func Settings() (percent int, limit int64) {
	percent = debug.SetGCPercent(-1)
	debug.SetGCPercent(percent)
	return percent, debug.SetMemoryLimit(-1)
}

// Stop ends this sync's share; the last one restores Go's default pacing.
func (p *Pacer) Stop() {
	if p == nil || p.done {
		return
	}
	p.done = true
	gcPace.mu.Lock()
	defer gcPace.mu.Unlock()
	gcPace.users--
	if gcPace.users == 0 && gcPace.active {
		debug.SetMemoryLimit(math.MaxInt64)
		debug.SetGCPercent(100)
		gcPace.active = false
	}
}
