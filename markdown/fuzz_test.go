package markdown

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary bytes to Parse. Seeds live in
// testdata/fuzz/FuzzParse. Parse must not fail except for the two refusals,
// must not panic (its last-resort recover reports an internal error, which
// fails here), and must return valid UTF-8 everywhere and a title.
func FuzzParse(f *testing.F) {
	f.Add([]byte("---\ntitle: T\ntags: [a]\n---\n# H\n\ntext [[Link|alias]] #tag `code`\n"))
	f.Add([]byte("---\naliases: [x, \"[[y]]\"]\ncat: \"[[P]]\"\n---\n![[a.png|30]] [[b#^c]] [[1]](u) [x]([[z]])\n\n[b]: b.md\n"))
	f.Add([]byte("alias:: A, B\ntags:: t, [[u]], #v\n\n- ## H\n\t- #[[m w]] [[n/s]]\n\t\t- ```\n\t\t  [[code]]\n\t\t  ```\n"))
	f.Add([]byte("[[l|a.b.c]] [[dendron://v/x.y#h]] ![[p.q#h1:#*]] #tag [[src/x.js]]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		// Small chunks exercise windowing and overlap on short inputs.
		for _, opt := range []Options{{}, {ChunkWords: 7, OverlapWords: 3}, {Flavor: FlavorLogseq}, {Flavor: FlavorDendron}} {
			d, err := Parse("fuzz/note.md", data, opt)
			if err != nil {
				if errors.Is(err, ErrBinary) || errors.Is(err, ErrTooLarge) {
					return
				}
				t.Fatalf("Parse: %v", err)
			}
			checkValidUTF8(t, d)
			if d.Title == "" {
				t.Fatal("empty Title")
			}
			if strings.TrimSpace(d.Text) != "" && len(d.Chunks) == 0 {
				t.Fatalf("no chunks for text %q", d.Text)
			}
			words := 0
			for i, c := range d.Chunks {
				if c.Index != i || !strings.Contains(d.Text, c.Text) || c.Text == "" {
					t.Fatalf("bad chunk %d: %+v", i, c)
				}
				words += len(toWords(c.Text))
			}
			if words < len(toWords(d.Text)) {
				t.Fatalf("chunks hold %d words, text has %d", words, len(toWords(d.Text)))
			}
			for _, l := range append(append(slices.Clone(d.Links), d.Aliases...), d.Concept) {
				if l != NormalizeConcept(l) || l == "" && d.Concept != "" {
					t.Fatalf("link or name %q is not normalised", l)
				}
			}
			if len(d.Mentions) != len(d.Links) {
				t.Fatalf("%d mentions for %d links", len(d.Mentions), len(d.Links))
			}
			for _, tag := range d.Tags {
				if tag == "" || tag != strings.ToLower(tag) || strings.HasPrefix(tag, "#") {
					t.Fatalf("bad tag %q", tag)
				}
			}
		}
	})
}
