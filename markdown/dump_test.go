package markdown

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestParseDump guards changes to Parse that must not change its output
// (speed work, mostly). It is off unless MNEMO_PARSE_DUMP names a file:
//
//	MNEMO_PARSE_DUMP=/tmp/parse.dump \
//	MNEMO_PARSE_DUMP_DIRS=/tmp/mnemo-bench/corpora/tldr:/tmp/mnemo-bench/corpora/rust-rfcs \
//	go test ./markdown -run TestParseDump
//
// It parses every .md file under the repository's testdata and under each
// folder of MNEMO_PARSE_DUMP_DIRS, and the FuzzParse seeds, each with the
// default Options and with small chunks, and prints every field of each
// Doc (or the error) with %#v. When the file does not exist it is written
// (run that on the old code); when it exists, the new dump must equal it
// byte for byte, and the test names the first files that differ.
func TestParseDump(t *testing.T) {
	path := os.Getenv("MNEMO_PARSE_DUMP")
	if path == "" {
		t.Skip("MNEMO_PARSE_DUMP not set: no dump to write or compare")
	}
	dirs := []string{filepath.Join("..", "testdata"), filepath.Join("..", "engine")}
	for d := range strings.SplitSeq(os.Getenv("MNEMO_PARSE_DUMP_DIRS"), string(os.PathListSeparator)) {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	inputs := dumpInputs(t, dirs)
	got := make([]string, 0, 2*len(inputs))
	for _, in := range inputs {
		for _, opt := range []Options{{}, {ChunkWords: 7, OverlapWords: 3}} {
			d, err := Parse(in.name, in.data, opt)
			rec := fmt.Sprintf("=== %s %+v\n", in.name, opt)
			if err != nil {
				rec += "error: " + err.Error() + "\n"
			} else {
				rec += fmt.Sprintf("%#v\n", *d)
			}
			got = append(got, rec)
		}
	}
	t.Logf("%d inputs from %q", len(inputs), dirs)

	want, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		if err := os.WriteFile(path, []byte(strings.Join(got, "")), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Skipf("wrote %s (%d records); run again to compare", path, len(got))
	}
	if err != nil {
		t.Fatal(err)
	}
	old := splitRecords(string(want))
	if len(old) != len(got) {
		t.Errorf("dump has %d records, want %d", len(got), len(old))
	}
	bad := 0
	for i := range min(len(old), len(got)) {
		if old[i] != got[i] {
			if bad++; bad <= 5 {
				t.Errorf("record %d differs:\nwant %.2000s\ngot  %.2000s", i, old[i], got[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d records differ", bad, len(got))
	}
}

type dumpInput struct {
	name string
	data []byte
}

// dumpInputs reads the .md files under dirs, in a fixed order, and the
// FuzzParse seed corpus.
func dumpInputs(t *testing.T, dirs []string) []dumpInput {
	var inputs []dumpInput
	for _, dir := range dirs {
		inputs = append(inputs, readMarkdownFiles(t, dir)...)
	}
	seeds, err := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzParse", "*"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(seeds)
	for _, p := range seeds {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		// "go test fuzz v1\n[]byte(\"...\")\n"
		_, lit, _ := strings.Cut(string(raw), "\n")
		lit = strings.TrimSpace(lit)
		lit = strings.TrimSuffix(strings.TrimPrefix(lit, "[]byte("), ")")
		s, err := strconv.Unquote(lit)
		if err != nil {
			t.Fatalf("fuzz seed %s: %v", p, err)
		}
		inputs = append(inputs, dumpInput{filepath.ToSlash(p), []byte(s)})
	}
	return inputs
}

// splitRecords cuts a dump into its "=== " records.
func splitRecords(s string) []string {
	var recs []string
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, 1<<30)
	for sc.Scan() {
		line := sc.Text() + "\n"
		if strings.HasPrefix(line, "=== ") || len(recs) == 0 {
			recs = append(recs, line)
			continue
		}
		recs[len(recs)-1] += line
	}
	return recs
}

// readMarkdownFiles reads the .md files under dir, in walk order (sorted),
// named by their slash-separated paths.
func readMarkdownFiles(tb testing.TB, dir string) []dumpInput {
	tb.Helper()
	var files []dumpInput
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files = append(files, dumpInput{filepath.ToSlash(p), data})
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return files
}
