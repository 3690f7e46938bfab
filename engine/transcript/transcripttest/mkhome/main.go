// Command mkhome lays every transcript fixture out under a folder as a
// home folder, for trying mnemo sessions by hand and for the no-op sync
// comparison in docs/benchmarks.md:
//
//	go run ./engine/transcript/transcripttest/mkhome [-today-only] DIR
//
// run from the repository's root.
package main

import (
	"flag"
	"fmt"
	"os"

	"mnemo/engine/transcript/transcripttest"
)

func main() {
	todayOnly := flag.Bool("today-only", false, "lay out only the first six formats' fixtures")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: mkhome [-today-only] DIR")
		os.Exit(2)
	}
	home := flag.Arg(0)
	if err := transcripttest.Today(home, "engine/transcript/testdata"); err != nil {
		fmt.Fprintln(os.Stderr, "mkhome:", err)
		os.Exit(1)
	}
	if *todayOnly {
		return
	}
	agents, err := transcripttest.List("testdata/transcripts")
	if err == nil {
		err = transcripttest.Agents(home, "testdata/transcripts", agents...)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkhome:", err)
		os.Exit(1)
	}
}
