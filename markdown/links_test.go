package markdown

import (
	"reflect"
	"testing"
)

func TestNormalizeConcept(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Project Alpha", "project-alpha"},
		{"  padded  ", "padded"},
		{"snake_case_name", "snake-case-name"},
		{"folder/sub/Note", "folder-sub-note"},
		{`win\path`, "win-path"},
		{"many   spaces\tand\nlines", "many-spaces-and-lines"},
		{"--dashes -- everywhere--", "dashes-everywhere"},
		{"_/ mixed _/ separators /_", "mixed-separators"},
		{"Keep.Dots, commas & (parens)!", "keep.dots,-commas-&-(parens)!"},
		{"Café Décisions", "café-décisions"},
		{"東京 タワー", "東京-タワー"},
		{"ÄÖÜ Straße", "äöü-straße"},
		{"ΑΘΗΝΑ", "αθηνα"},
		{"already-normal", "already-normal"},
		{"", ""},
		{" - _ / ", ""},
		{"bad\xffbyte", "bad\uFFFDbyte"},
		{"Machine Learning", "machine-learning"},
		{"machine_learning", "machine-learning"},
		{"cafe\u0301 (decomposed)", "café-(decomposed)"}, // NFC: e + U+0301 becomes é
		{"CAFE\u0301", "café"},
		{"東京タワー", "東京タワー"},
		{"한국어 메모", "한국어-메모"},
		{`Say "Hi" [x] | <b>`, `say-"hi"-[x]-|-<b>`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := NormalizeConcept(tt.in); got != tt.want {
				t.Errorf("NormalizeConcept(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if again := NormalizeConcept(tt.want); again != tt.want {
				t.Errorf("not idempotent: NormalizeConcept(%q) = %q", tt.want, again)
			}
		})
	}
}

func TestMentions(t *testing.T) {
	tests := []struct {
		name, in string
		want     []Mention
	}{
		{"counted once per link", "[[A]] and [[a]] and [[A|alias]]", []Mention{{Concept: "a", Count: 3}}},
		{"section of each link", "intro [[A]]\n\n# One\n\n[[A]] [[B]]\n\n## Two\n\n[[A#x]]\n\n# One\n\n[[A]]",
			[]Mention{{Concept: "a", Count: 4, Sections: []string{"One", "Two"}}, {Concept: "b", Count: 1, Sections: []string{"One"}}}},
		{"link in a heading is under it", "# About [[Topic]]", []Mention{{Concept: "topic", Count: 1, Sections: []string{"About Topic"}}}},
		{"table cells", "| [[X]] | [[Y]] |\n|---|---|\n| [[X]] | z |", []Mention{{Concept: "x", Count: 2}, {Concept: "y", Count: 1}}},
		{"code is not counted", "[[A]] `[[A]]`\n\n```\n[[A]]\n```", []Mention{{Concept: "a", Count: 1}}},
		{"spellings are one concept", "[[Machine Learning]] [[machine_learning]] [[machine-learning]]", []Mention{{Concept: "machine-learning", Count: 3}}},
		{"none", "no links here", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Parse("n.md", []byte(tt.in), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(d.Mentions, tt.want) {
				t.Errorf("Mentions = %+v, want %+v", d.Mentions, tt.want)
			}
			if len(d.Mentions) != len(d.Links) {
				t.Fatalf("%d mentions for %d links", len(d.Mentions), len(d.Links))
			}
			for i, m := range d.Mentions {
				if m.Concept != d.Links[i] {
					t.Errorf("Mentions[%d] = %q, Links[%d] = %q", i, m.Concept, i, d.Links[i])
				}
			}
		})
	}
}
