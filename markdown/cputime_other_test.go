//go:build !unix

package markdown

import "time"

func processCPU() (time.Duration, bool) { return 0, false }
