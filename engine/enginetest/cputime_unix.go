//go:build unix

package enginetest

import (
	"syscall"
	"time"
)

// ProcessCPU is the CPU time (user and system, all threads, the garbage
// collector's included) the process has used so far; ok is false where the
// system cannot say. Benchmarks report it because wall time on a shared
// machine says little.
func ProcessCPU() (d time.Duration, ok bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
