package enginetest

import (
	"syscall"
	"time"
)

// ProcessCPU is the CPU time (user and system, all threads) the process
// has used so far; ok is false where the system cannot say.
func ProcessCPU() (d time.Duration, ok bool) {
	h, err := syscall.GetCurrentProcess()
	if err != nil {
		return 0, false
	}
	var created, exited, kernel, user syscall.Filetime
	if err := syscall.GetProcessTimes(h, &created, &exited, &kernel, &user); err != nil {
		return 0, false
	}
	// A Filetime counts 100-nanosecond intervals.
	ticks := func(f syscall.Filetime) int64 { return int64(f.HighDateTime)<<32 | int64(f.LowDateTime) }
	return time.Duration((ticks(kernel) + ticks(user)) * 100), true
}
