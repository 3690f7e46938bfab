package watch

import (
	"strings"
	"testing"
)

// TestFDLimitHint: the open-file hint names the command that raises the
// limit on each system: launchctl's as well on macOS, where ulimit -n alone
// cannot go past launchd's limit.
func TestFDLimitHint(t *testing.T) {
	for goos, want := range map[string][]string{
		"darwin":  {"ulimit -n", "launchctl limit maxfiles"},
		"linux":   {"ulimit -n"},
		"freebsd": {"ulimit -n"},
	} {
		hint := fdLimitHint(goos)
		for _, w := range want {
			if !strings.Contains(hint, w) {
				t.Errorf("%s: %q lacks %q", goos, hint, w)
			}
		}
		if goos != "darwin" && strings.Contains(hint, "launchctl") {
			t.Errorf("%s: %q names launchctl", goos, hint)
		}
	}
}
