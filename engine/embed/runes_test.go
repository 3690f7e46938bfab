package embed

import (
	"testing"
	"unicode"
	"unicode/utf8"
)

// TestRuneInfo checks the table against unicode for every rune of the
// Basic Multilingual Plane, and the functions built on it beyond.
func TestRuneInfo(t *testing.T) {
	others := []rune{0x10000, 0x1D400, 0x1D7CE, 0x1F600, 0x20000, 0x10400, 0x10428, unicode.MaxRune, -1, unicode.MaxRune + 1}
	for r := rune(0); r < 1<<16+rune(len(others)); r++ {
		if r >= 1<<16 {
			r = others[r-1<<16]
		}
		wantClass := uint8(separator)
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			wantClass = alnum
		case isJoiner(r):
			wantClass = joiner
		}
		if got := classOf(r); got != wantClass {
			t.Errorf("classOf(%U) = %d, want %d", r, got, wantClass)
		}
		p := props(r)
		if p&rDigit != 0 != unicode.IsDigit(r) || p&rUpper != 0 != unicode.IsUpper(r) || p&rLower != 0 != unicode.IsLower(r) {
			t.Errorf("%U: props says digit, upper, lower = %v %v %v; unicode says %v %v %v", r,
				p&rDigit != 0, p&rUpper != 0, p&rLower != 0, unicode.IsDigit(r), unicode.IsUpper(r), unicode.IsLower(r))
		}
		if !utf8.ValidRune(r) {
			continue
		}
		s := string(r)
		if foldKeeps(r, len(s)) {
			if got := string(appendFolded(nil, s)); got != s {
				t.Errorf("foldKeeps(%U) but appendFolded writes %q", r, got)
			}
		}
	}
	if foldKeeps(utf8.RuneError, 1) {
		t.Error("foldKeeps(RuneError, 1): an invalid byte would be copied, not replaced")
	}
	if got := string(appendFolded(nil, "a\xffB\u00c9\u2019Ж日")); got != "a\ufffdbe'ж日" {
		t.Errorf("appendFolded = %q", got)
	}
}

func BenchmarkRuneInfo(b *testing.B) {
	for b.Loop() {
		newRuneInfo()
	}
}
