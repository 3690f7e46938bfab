package markdown

import "testing"

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
