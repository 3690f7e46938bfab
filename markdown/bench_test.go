package markdown

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// benchDoc builds a memory of about words words in the shape agents and
// people write: frontmatter, sections, lists, links, a code block, a table.
func benchDoc(words int) []byte {
	var b strings.Builder
	b.WriteString("---\ntitle: Quarterly planning notes\ntags: [planning, team/alpha, q3]\n")
	b.WriteString("created: 2024-03-01T09:30:00Z\nmodified: 2024-03-04\nauthor: sam\nstatus: draft\n---\n\n")
	b.WriteString("# Quarterly planning\n\n")
	prose := strings.Fields(`We agreed to move the **ingestion service** to the new queue before the
		end of the quarter, see [[Ingestion Pipeline]] and the [design doc](https://example.com/doc#q3).
		The main risk is the _migration window_: the old consumers must drain first. #risk
		Alice owns the rollout and Bob the [[Runbooks/Queue Migration|runbook]]; both report weekly.
		Latency budgets stay at 200 ms p99, measured by the existing dashboards and alerts.`)
	n, section := 0, 0
	for n < words {
		section++
		fmt.Fprintf(&b, "## Topic %d\n\n", section)
		for p := 0; p < 3 && n < words; p++ {
			for i := 0; i < 60 && n < words; i++ {
				b.WriteString(prose[(n+section)%len(prose)])
				b.WriteByte(' ')
				n++
			}
			b.WriteString("\n\n")
		}
		b.WriteString("- first item with `inline code` and #followup\n- second item [[Team Alpha]]\n  - nested detail\n\n")
		n += 14
		if section%3 == 0 {
			b.WriteString("```go\nfunc drain(q *Queue) error {\n\treturn q.Close() // [[not a link]]\n}\n```\n\n")
			b.WriteString("| owner | task |\n|---|---|\n| alice | rollout |\n| bob | runbook |\n\n")
			n += 16
		}
	}
	return []byte(b.String())
}

// BenchmarkParse parses generated memories of two sizes and, with
// MNEMO_BENCH_DIR set to a folder of .md files (e.g.
// /tmp/mnemo-bench/corpora/tldr, which the shared benchmark data's build.sh
// makes; that data is not part of this repository), every
// file of that corpus: one op of "corpus" is one pass over all of them.
// cpu-ms/op is the process's CPU time (the collector's included) per op,
// the figure to compare on a shared machine.
func BenchmarkParse(b *testing.B) {
	for _, words := range []int{2000, 300} {
		data := benchDoc(words)
		b.Run(fmt.Sprintf("words=%d", words), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse("notes/planning.md", data, Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "files/s")
		})
	}
	b.Run("corpus", benchmarkParseCorpus)
}

func benchmarkParseCorpus(b *testing.B) {
	dir := os.Getenv("MNEMO_BENCH_DIR")
	if dir == "" {
		b.Skip("MNEMO_BENCH_DIR not set: set it to a folder of .md files (e.g. /tmp/mnemo-bench/corpora/tldr) to parse a corpus")
	}
	files := readMarkdownFiles(b, dir)
	var size int64
	for _, f := range files {
		size += int64(len(f.data))
	}
	if len(files) == 0 {
		b.Fatalf("no .md files under %s", dir)
	}
	b.SetBytes(size)
	b.ReportAllocs()
	cpu0, _ := processCPU()
	for b.Loop() {
		for _, f := range files {
			if _, err := Parse(f.name, f.data, Options{}); err != nil {
				b.Fatal(err)
			}
		}
	}
	if cpu1, ok := processCPU(); ok {
		b.ReportMetric(float64(cpu1-cpu0)/1e6/float64(b.N), "cpu-ms/op")
	}
	b.ReportMetric(float64(b.N*len(files))/b.Elapsed().Seconds(), "files/s")
}
