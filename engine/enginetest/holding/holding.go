// Package holding finds which files under an index folder still hold a
// word: the check behind every "no trace remains" test. It is apart from
// enginetest because it reads full-text segments, and the full-text
// package's own tests use enginetest.
package holding

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blevesearch/vellum"
	zapv17 "github.com/blevesearch/zapx/v17"

	"mnemo/engine/fulltext"
)

// Files lists the files under dir that hold any of words: in their
// raw bytes, or — for full-text segments, whose term dictionaries are
// finite-state transducers that do not spell a term out byte after byte —
// among the terms of any field of the segment, decoded, as the word or as
// the analyser's form of it (its stem).
func Files(t testing.TB, dir string, words ...string) []string {
	t.Helper()
	forms := map[string]string{}
	for _, w := range words {
		forms[strings.ToLower(w)] = w
		terms, err := fulltext.EnglishTerms(w)
		if err != nil {
			t.Fatal(err)
		}
		for _, term := range terms {
			forms[term] = w
		}
	}
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		low := bytes.ToLower(b)
		for f, w := range forms {
			if bytes.Contains(low, []byte(f)) {
				out = append(out, strings.TrimPrefix(p, dir)+" ("+w+")")
			}
		}
		if strings.HasSuffix(p, ".zap") {
			for _, term := range segmentTerms(t, p) {
				if w, ok := forms[term]; ok {
					out = append(out, strings.TrimPrefix(p, dir)+" term "+term+" ("+w+")")
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// segmentTerms decodes every term of every field of one scorch segment.
func segmentTerms(t testing.TB, path string) []string {
	t.Helper()
	seg, err := (&zapv17.ZapPlugin{}).Open(path)
	if err != nil {
		t.Fatalf("open segment %s: %v", path, err)
	}
	defer seg.Close()
	var out []string
	for _, f := range seg.Fields() {
		d, err := seg.Dictionary(f)
		if err != nil {
			t.Fatalf("segment %s field %s: %v", path, f, err)
		}
		it := d.AutomatonIterator(&vellum.AlwaysMatch{}, nil, nil)
		for {
			e, err := it.Next()
			if err != nil {
				t.Fatalf("segment %s field %s: %v", path, f, err)
			}
			if e == nil {
				break
			}
			out = append(out, e.Term)
		}
	}
	return out
}
