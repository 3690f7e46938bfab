//go:build unix

package markdown

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system, all threads, the garbage
// collector's included) the process has used so far. Benchmarks report it
// because wall time on a shared machine says little, and a benchmark's
// wall time leaves out the collector's work on other cores.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
