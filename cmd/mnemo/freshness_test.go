package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkStartupAfterChanges measures the start-up figure with the
// real binary: the corpus in MNEMO_BENCH_DIR (e.g.
// /tmp/mnemo-bench/corpora/tldr, 38,430 files) is copied and indexed, then,
// three times, 100 files change while nothing runs (50 edited, 25 added, 25
// deleted) and `mnemo search --json` — which syncs first — is timed from
// process start to its exit with the right answer: the token of a file just
// added finds that file and only it. Each trial is then checked in full:
// status counts every file, each edit and addition is found by its token
// and each deletion's token finds nothing. Reports the median and the
// slowest of the three in ms; the target is under 3 s.
// Run with -run '^$' -bench StartupAfterChanges -benchtime 1x.
func BenchmarkStartupAfterChanges(b *testing.B) {
	src := os.Getenv("MNEMO_BENCH_DIR")
	if src == "" {
		b.Skip("set MNEMO_BENCH_DIR to a folder of markdown (e.g. /tmp/mnemo-bench/corpora/tldr) to run this benchmark")
	}
	const trials = 3
	dir := b.TempDir()
	bin := mnemoBinary(b)
	mem, index := filepath.Join(dir, "memory"), filepath.Join(dir, "index")
	copyCorpusTree(b, src, mem)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MAENIFOLD_") {
			env = append(env, kv)
		}
	}
	mnemo := func(stdin string, args ...string) string {
		b.Helper()
		cmd := exec.Command(bin, append([]string{"--memory", mem, "--index", index}, args...)...)
		cmd.Env, cmd.Stdin = env, strings.NewReader(stdin)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			b.Fatalf("mnemo %s: %v\n%s", strings.Join(args, " "), err, errb.String())
		}
		return out.String()
	}

	var all []string
	filepath.WalkDir(mem, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && p != mem && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if err == nil && !d.IsDir() && strings.HasSuffix(d.Name(), ".md") {
			rel, _ := filepath.Rel(mem, p)
			all = append(all, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(all)
	token := func(i int) string { // letters only, no vowels, no s or y: no analyzer changes it
		const cons = "bcdfghjklmnpqrtvwxz"
		t := []byte("qvz")
		for range 4 {
			t = append(t, cons[i%len(cons)])
			i /= len(cons)
		}
		return string(t)
	}
	appendTo := func(rel, tok string) {
		f, err := os.OpenFile(filepath.Join(mem, filepath.FromSlash(rel)), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(f, "\n\nstartup %s\n", tok)
		f.Close()
	}
	// Files to delete later carry a token from the start, so that their
	// deletion can be checked: the token must then find nothing.
	next := 0
	pick := func() string { // a file not yet picked, spread over the corpus
		p := all[(next*7919)%len(all)]
		next++
		return p
	}
	doomed := map[string]string{} // path → token
	var doomedOrder []string
	for range 25 * trials {
		p := pick()
		tok := token(next + 100000)
		appendTo(p, tok)
		doomed[p] = tok
		doomedOrder = append(doomedOrder, p)
	}
	var st struct {
		Files int `json:"files"`
	}
	status := func() int {
		b.Helper()
		if err := json.Unmarshal([]byte(mnemo("", "status", "--json")), &st); err != nil {
			b.Fatal(err)
		}
		return st.Files
	}
	t0 := time.Now()
	mnemo("", "sync")
	base := status()
	b.Logf("indexed %d files in %s", base, time.Since(t0).Round(time.Millisecond))

	var times []time.Duration
	trial := 0
	for b.Loop() {
		for range trials {
			live := map[string]string{} // path → token that must find it
			var gone []string
			for range 50 {
				p := pick()
				live[p] = token(next)
				appendTo(p, live[p])
			}
			var last string
			for i := range 25 {
				last = fmt.Sprintf("startup-bench/t%d/new%02d.md", trial, i)
				live[last] = token(next + 200000)
				next++
				full := filepath.Join(mem, filepath.FromSlash(last))
				os.MkdirAll(filepath.Dir(full), 0o755)
				if err := os.WriteFile(full, []byte(fmt.Sprintf("# New %d\n\nstartup %s\n", i, live[last])), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			for _, p := range doomedOrder[25*trial : 25*(trial+1)] {
				if err := os.Remove(filepath.Join(mem, filepath.FromSlash(p))); err != nil {
					b.Fatal(err)
				}
				gone = append(gone, p)
			}

			start := time.Now()
			out := mnemo("", "search", "--json", "--mode", "fulltext", live[last])
			took := time.Since(start)
			var page struct {
				Results []struct {
					Path string `json:"path"`
				} `json:"results"`
			}
			if err := json.Unmarshal([]byte(out), &page); err != nil {
				b.Fatalf("search --json: %v\n%s", err, out)
			}
			if len(page.Results) != 1 || page.Results[0].Path != last {
				b.Fatalf("trial %d: %s → %+v, want only %s", trial, live[last], page.Results, last)
			}
			times = append(times, took)

			// The whole trial, checked outside the timing.
			var in bytes.Buffer
			for p, tok := range live {
				fmt.Fprintf(&in, `{"id":%q,"query":%q,"mode":"fulltext"}`+"\n", p, tok)
			}
			for _, p := range gone {
				fmt.Fprintf(&in, `{"id":%q,"query":%q,"mode":"fulltext"}`+"\n", "gone:"+p, doomed[p])
			}
			for _, line := range strings.Split(strings.TrimSpace(mnemo(in.String(), "search", "--no-sync", "--batch", "-")), "\n") {
				var a struct {
					ID      string `json:"id"`
					Results []struct {
						Path string `json:"path"`
					} `json:"results"`
				}
				if err := json.Unmarshal([]byte(line), &a); err != nil {
					b.Fatal(err)
				}
				var got []string
				for _, r := range a.Results {
					got = append(got, r.Path)
				}
				if p, ok := strings.CutPrefix(a.ID, "gone:"); ok {
					if len(got) > 0 {
						b.Errorf("trial %d: deleted %s still found: %v", trial, p, got)
					}
				} else if !slices.Equal(got, []string{a.ID}) {
					b.Errorf("trial %d: %s → %v, want only %s", trial, live[a.ID], got, a.ID)
				}
			}
			if n := status(); n != base { // as many added as deleted
				b.Errorf("trial %d: status counts %d files, want %d", trial, n, base)
			}
			b.Logf("trial %d: 50 edited, 25 added, 25 deleted while down; search with its sync answered correctly in %s",
				trial, took.Round(time.Millisecond))
			trial++
		}
	}
	sorted := slices.Clone(times)
	slices.Sort(sorted)
	med := sorted[len(sorted)/2]
	b.ReportMetric(float64(med)/float64(time.Millisecond), "median-ms")
	b.ReportMetric(float64(sorted[len(sorted)-1])/float64(time.Millisecond), "max-ms")
	if med > 3*time.Second {
		b.Errorf("start-up after 100 changes: median %s, the issue asks for under 3 s", med)
	}
}

// copyCorpusTree copies the regular files under src to dst.
func copyCorpusTree(tb testing.TB, src, dst string) {
	tb.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		tb.Fatalf("copy %s: %v", src, err)
	}
}
