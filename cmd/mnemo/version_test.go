package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionOf(t *testing.T) {
	settings := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i+1 < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	tests := []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"go install of a tagged module", debug.BuildInfo{Main: debug.Module{Version: "v0.3.0"}}, "v0.3.0"},
		{"go run or test: no VCS", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel"},
		{"a clean clone", debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: settings("vcs.revision", "0123456789abcdef0123", "vcs.time", "2026-12-01T16:00:00Z", "vcs.modified", "false")},
			"devel-0123456789ab (2026-12-01T16:00:00Z)"},
		{"a work tree with changes", debug.BuildInfo{Settings: settings("vcs.revision", "0123456789abcdef0123", "vcs.modified", "true")},
			"devel-0123456789ab+dirty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := versionOf(&tt.bi); got != tt.want {
				t.Errorf("versionOf = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestVersionFlag: --version prints the build's version and exits 0.
func TestVersionFlag(t *testing.T) {
	code, out, errs := runCLI(t, "--version")
	if code != 0 || out != "mnemo version "+buildVersion()+"\n" {
		t.Errorf("mnemo --version: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if !strings.HasPrefix(buildVersion(), "devel") && version == "" {
		t.Logf("test binary version %q", buildVersion())
	}
}
