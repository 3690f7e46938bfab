//go:build !unix && !windows

package enginetest

import "time"

// ProcessCPU cannot measure CPU time on this system: ok is false.
func ProcessCPU() (d time.Duration, ok bool) { return 0, false }
