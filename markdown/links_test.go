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

// TestLinkRules is what each tool makes of the links its users write
// (docs/design.md, "What counts as a link").
func TestLinkRules(t *testing.T) {
	foamRefs := "\n\n[installation]: getting-started/installation.md 'Installation'\n[f<x>]: f.md\n"
	tests := []struct {
		name   string
		flavor Flavor
		in     string
		text   string
		links  []string
		tags   []string
	}{
		{"Foam reference definitions do not hide links", FlavorObsidian, "See [[installation]] and [[f<x>]]." + foamRefs,
			"See installation and f<x>.", []string{"installation", "f<x>"}, nil},
		{"inline HTML inside a name", FlavorObsidian, "[[a <i> name]] <span>[[in html]]</span>",
			"a <i> name in html", []string{"a-<i>-name", "in-html"}, nil},
		{"heading, block and label", FlavorObsidian, "[[Note#Heading]] [[Note#^block-1]] [[Note#^id|see]]",
			"Note Note see", []string{"note"}, nil},
		{"same-note block is not a link", FlavorObsidian, "[[#^abc]]", "abc", nil, nil},
		{"folder paths name the note", FlavorObsidian, "[[folder/Note]] [[/root/Note]] [[./Note.md]] [[../up/note]]",
			"folder/Note /root/Note ./Note.md ../up/note", []string{"note"}, nil},
		{"embeds", FlavorObsidian, "![[Note]] ![[Note#Part]] ![[Other|label]]", "Note Note label", []string{"note", "other"}, nil},
		{"attachments are not concepts", FlavorObsidian, "![[shot.png|600]] ![[doc.pdf]] [[clip.mp4|a clip]]",
			"shot.png doc.pdf a clip", nil, nil},
		{"a bracketed link text is CommonMark's", FlavorObsidian, "bugs ([[1]](https://x.io/1), [[2]](https://x.io/2))", "bugs ([1], [2])", nil, nil},
		{"escaped brackets are text", FlavorObsidian, `\[\[not a link\]\]`, "[[not a link]]", nil, nil},
		{"link destination that is a link", FlavorObsidian, "[I worked on projects]([[Projects]])",
			"I worked on projects", []string{"projects"}, nil},
		{"unescaped pipe in a table splits the cell", FlavorObsidian, "| h | i |\n|---|---|\n| [[a|b]] |", "h\ti\n[[a\tb]]", nil, nil},
		{"Obsidian frontmatter properties link", FlavorObsidian, "---\ncategories:\n  - \"[[People]]\"\norg: \"[[Obsidian]]\"\nurl: https://x.io\n---\n![[Meetings.base#Person]] [[People]]",
			"Meetings.base People", []string{"people", "obsidian"}, nil},
		{"Obsidian #tag is a tag only", FlavorObsidian, "#topic and #[[x y]]", "#topic and #x y", []string{"x-y"}, []string{"topic"}},
		{"Logseq tags are pages", FlavorLogseq, "- note #topic\n- and #[[multi word]] [[a/b]]",
			"note #topic\nand multi word a/b", []string{"topic", "multi-word", "a-b"}, []string{"topic", "multi word"}},
		{"Logseq page properties", FlavorLogseq, "type:: [[Feature]]\ntags:: plain, [[Bracketed]], #hashed\nalias:: Other Name\n\n- body [[Feature]]",
			"type:: Feature tags:: plain, Bracketed, #hashed alias:: Other Name\nbody Feature",
			[]string{"plain", "feature", "bracketed", "hashed"}, []string{"plain", "bracketed", "hashed"}},
		{"Dendron hierarchy, reversed label, tags", FlavorDendron, "[[a.b.c]] [[the label|a.b.d]] [[dendron://other/x.y]] #idea",
			"a.b.c the label dendron://other/x.y #idea", []string{"a.b.c", "a.b.d", "x.y", "tags.idea"}, []string{"idea"}},
		{"Logseq nesting is not code", FlavorLogseq, "## Usage\n\t- Create [[A]]\n\t  collapsed:: true\n\t\t- ```clj\n\t\t  (def x [[1]])\n\t\t    (y)\n\t\t  ```\n\t- [[B]]",
			"Usage\nCreate A collapsed:: true\n(def x [[1]])\n  (y)\nB", []string{"a", "b"}, nil},
		{"Dendron file links are not notes", FlavorDendron, "[[src/index.js]] [[assets/example.py]]", "src/index.js assets/example.py", nil, nil},
		{"Dendron frontmatter tags", FlavorDendron, "---\ntags: [one, two]\n---\nbody", "body", []string{"tags.one", "tags.two"}, []string{"one", "two"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustParse(t, "n.md", tt.in, Options{Flavor: tt.flavor})
			if d.Text != tt.text {
				t.Errorf("Text = %q, want %q", d.Text, tt.text)
			}
			if !reflect.DeepEqual(d.Links, tt.links) {
				t.Errorf("Links = %q, want %q", d.Links, tt.links)
			}
			if !reflect.DeepEqual(d.Tags, tt.tags) {
				t.Errorf("Tags = %q, want %q", d.Tags, tt.tags)
			}
		})
	}
}

func TestNoteConceptAndAliases(t *testing.T) {
	tests := []struct {
		name, path, in string
		flavor         Flavor
		concept        string
		aliases        []string
	}{
		{"file name", "notes/Machine Learning.md", "", FlavorObsidian, "machine-learning", nil},
		{"aliases list", "AI.md", "---\naliases: [Artificial Intelligence, ai, Machine Minds]\n---\n", FlavorObsidian, "ai", []string{"artificial-intelligence", "machine-minds"}},
		{"alias string", "a.md", "---\nalias: one, Two\n---\n", FlavorObsidian, "a", []string{"one", "two"}},
		{"Logseq namespace file", "pages/Whiteboard___Action Bar.md", "alias:: Bar, [[Other]]\n\n- x", FlavorLogseq, "whiteboard-action-bar", []string{"bar", "other"}},
		{"Logseq percent file name", "pages/New to Logseq%3F.md", "", FlavorLogseq, "new-to-logseq?", nil},
		{"Logseq title property", "pages/x.md", "title:: The Real Name\n\n- x", FlavorLogseq, "the-real-name", nil},
		{"Dendron hierarchy", "vault/dendron.topic.links.md", "", FlavorDendron, "dendron.topic.links", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustParse(t, tt.path, tt.in, Options{Flavor: tt.flavor})
			if d.Concept != tt.concept || !reflect.DeepEqual(d.Aliases, tt.aliases) {
				t.Errorf("Concept %q Aliases %q, want %q %q", d.Concept, d.Aliases, tt.concept, tt.aliases)
			}
		})
	}
}
