package main

import (
	"runtime/debug"
	"strings"
)

// version is the release's name, set when it is built:
// go build -ldflags "-X main.version=v0.3.0" (scripts/release does).
// Empty, the build's own record names it (buildVersion).
var version string

// buildVersion names this binary for --version and the MCP server's
// implementation version: the -X version if set, else the module version
// go install recorded, else the commit it was built from (with "+dirty" if
// the work tree had changes, and the commit's time), else "devel" (go run,
// tests).
func buildVersion() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return versionOf(bi)
}

// versionOf is buildVersion's reading of one build record.
func versionOf(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	set := map[string]string{}
	for _, s := range bi.Settings {
		set[s.Key] = s.Value
	}
	rev := set["vcs.revision"]
	if rev == "" {
		return "devel"
	}
	v := "devel-" + rev[:min(len(rev), 12)]
	if set["vcs.modified"] == "true" {
		v += "+dirty"
	}
	if t := set["vcs.time"]; t != "" {
		v += " (" + strings.TrimSpace(t) + ")"
	}
	return v
}
