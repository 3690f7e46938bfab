package transcript

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/zricethezav/gitleaks/v8/detect"
)

// redactReference is Redact without the keyword pass: every extra rule
// tested keyword by keyword, every text given to gitleaks' full detector.
// The keyword pass must change no answer of it.
func redactReference(t *testing.T, text string) string {
	t.Helper()
	if text == "" {
		return text
	}
	applies := func(r extraRule, text, lower string) bool {
		if r.after != "" {
			return strings.Contains(text, r.after)
		}
		for _, k := range r.keywords {
			if k == strings.ToLower(k) && strings.Contains(lower, k) || strings.Contains(text, k) {
				return true
			}
		}
		return false
	}
	lower := strings.ToLower(text)
	for _, r := range extraRules {
		if applies(r, text, lower) {
			if out := r.replace(text); out != text {
				text, lower = out, strings.ToLower(out)
			}
		}
	}
	return replaceFindings(text, fullDetector(t).DetectString(text))
}

// fullDetector is gitleaks' default detector, whole: every rule, its
// keyword automaton, its allowlists as gitleaks builds them.
func fullDetector(tb testing.TB) *detect.Detector {
	tb.Helper()
	d, err := loadFullDetector()
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

var loadFullDetector = sync.OnceValues(detect.NewDetectorDefaultConfig)

func TestKeywordSetFind(t *testing.T) {
	ks := newKeywordSet([]string{"key", "ke", "sk-", "s.", "x", "ghp_"})
	tests := []struct {
		name, lower string
		want        []string
	}{
		{"none", "plain prose without any of them", nil},
		{"at the start", "ghp_abc", []string{"ghp_"}},
		{"at the end", "ends with s.", []string{"s."}},
		{"two bytes, the whole text", "ke", []string{"ke"}},
		{"one sharing another's start", "a key", []string{"key", "ke"}},
		{"one byte", "box", []string{"x"}},
		{"beside multibyte text", "i̇sk-ü", []string{"sk-"}},
		{"overlapping", "ss.sk-", []string{"s.", "sk-"}},
		{"one byte short", "gh", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := ks.find(tt.lower)
			var got []string
			for i, w := range ks.words {
				if h.has(i) {
					got = append(got, w)
				}
			}
			slices.Sort(got)
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("find(%q) = %q, want %q", tt.lower, got, want)
			}
			if h.empty() != (len(want) == 0) {
				t.Errorf("empty() = %v with %q found", h.empty(), got)
			}
		})
	}
}

// TestRedactPrefilterKinds: the secrets a keyword pass could pass over
// wrongly — a keyword in capitals, at either end of the text, after text
// whose lower case is longer, appearing only once an earlier rule has
// replaced something, found by two rules at once, spread over lines — are
// still redacted, and exactly as the full detector redacts them.
func TestRedactPrefilterKinds(t *testing.T) {
	tests := []struct{ name, text, secret string }{
		{"keyword in capitals", "export API_TOKEN=Zq8vN3kR7tY2wX5mB9cL4hJ6dF1gS0pA", "Zq8vN3kR7tY2wX5mB9cL4hJ6dF1gS0pA"},
		{"secret at the start", "ghp_R4nd0mFakeT0kenV4lue9876543210abcdXY is the token", "ghp_R4nd0mFakeT0kenV4lue9876543210abcdXY"},
		{"secret at the end", "the key is sk-Fa4keKeyF0rTest1ngOnlyAbCdEfGhIjKlMnOpQrStUv", "sk-Fa4keKeyF0rTest1ngOnlyAbCdEfGhIjKlMnOpQrStUv"},
		{"after text longer in lower case", "İİİ Ⱥ token xoxb-1234567890123-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "xoxb-1234567890123-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"},
		{"keyword from an earlier replacement", "AKIAZ3MEXAMPLEQ4RT7Y,Jf8kP2vLq9XrT4wN7bZc1MhG5sD3aE6yU0iO8pKl", "Jf8kP2vLq9XrT4wN7bZc1MhG5sD3aE6yU0iO8pKl"},
		{"two rules, one secret", "github_token = ghp_R4nd0mFakeT0kenV4lue9876543210abcdXY", "ghp_R4nd0mFakeT0kenV4lue9876543210abcdXY"},
		{"over lines", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAfakefakefakefakefakefakefakefake\n-----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEAfakefakefakefakefakefakefakefake"},
		{"mixed-case vendor word", "Stripe: SK_LIVE is sk_live_4eC39HqLyjWDarjtT1zdp7dcFAKE0", "sk_live_4eC39HqLyjWDarjtT1zdp7dcFAKE0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Redact(tt.text)
			if strings.Contains(got, tt.secret) {
				t.Errorf("secret survived: %q", got)
			}
			if want := redactReference(t, tt.text); got != want {
				t.Errorf("Redact = %q, the full detector %q", got, want)
			}
		})
	}
}

// TestRedactPrefilterAgrees compares Redact with redactReference over
// every sample the redaction tests hold, the prose of the real transcripts
// in testdata, and texts built around each keyword of every rule, in
// several cases and places.
func TestRedactPrefilterAgrees(t *testing.T) {
	texts := slices.Clone(lookAlikes)
	for _, f := range secretFamilies {
		texts = append(texts, f.text)
	}
	texts = append(texts, testdataProse(t)...)
	s := loadRedactor()
	values := []string{"Zq8vN3kR7tY2wX5mB9cL4hJ6dF1gS0pA", "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6", "hunter2-Fake", "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-abcdEFGH"}
	for i, w := range s.kw.words {
		v := values[i%len(values)]
		for _, k := range []string{w, strings.ToUpper(w), strings.ToUpper(w[:1]) + w[1:]} {
			texts = append(texts, k+v, "my "+k+" is "+v+".", "İ "+k+`: "`+v+`"`, "x\n"+k+"_key = "+v+"\n")
		}
	}
	differ, redacted := 0, 0
	for _, text := range texts {
		got, want := Redact(text), redactReference(t, text)
		if got != want {
			if differ++; differ <= 10 {
				t.Errorf("Redact(%q)\n = %q\nthe full detector: %q", text, got, want)
			}
		}
		if want != text {
			redacted++
		}
	}
	t.Logf("%d texts compared (%d with a secret), %d differ", len(texts), redacted, differ)
}

// testdataProse is the text of every message the real transcripts in
// testdata deliver, unredacted, whatever their format.
func testdataProse(t *testing.T) []string {
	t.Helper()
	var out []string
	root := filepath.Join("..", "..", "testdata", "transcripts")
	ctx := context.Background()
	for _, k := range Kinds {
		dir := filepath.Join(root, string(k))
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		src := Source{Kind: k, Root: dir}
		paths, _, err := src.Discover(ctx, Options{Scratch: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			h := Handler{Message: func(m Message) error { out = append(out, m.Text); return nil }}
			readWith(ctx, src, p, Cursor{}, Options{Scratch: t.TempDir()}, h, noRedact)
		}
	}
	if len(out) == 0 {
		t.Fatal("no prose in testdata/transcripts")
	}
	return out
}
