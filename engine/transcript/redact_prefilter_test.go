package transcript

import (
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/zricethezav/gitleaks/v8/detect"
)

// genMatch writes a random string that the expression node describes (or
// nearly: assertions are ignored, so the caller checks the result with the
// expression itself). Literals under (?i) come in random case.
func genMatch(r *rand.Rand, b *strings.Builder, re *syntax.Regexp) {
	switch re.Op {
	case syntax.OpLiteral:
		for _, c := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 && r.IntN(2) == 0 {
				c = unicode.SimpleFold(c)
				for c >= 0x80 && r.IntN(4) != 0 { // now and then K or ſ
					c = unicode.SimpleFold(c)
				}
			}
			b.WriteRune(c)
		}
	case syntax.OpCharClass:
		if len(re.Rune) == 0 {
			return
		}
		i := 2 * r.IntN(len(re.Rune)/2)
		lo, hi := re.Rune[i], re.Rune[i+1]
		if hi > 0x7e && lo < 0x7e && r.IntN(8) != 0 {
			hi = 0x7e // mostly ASCII from wide ranges
		}
		if hi-lo > 0x1000 {
			hi = lo + 0x1000
		}
		b.WriteRune(lo + r.Int32N(hi-lo+1))
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteByte(byte(' ' + r.IntN(95)))
	case syntax.OpCapture:
		genMatch(r, b, re.Sub[0])
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			genMatch(r, b, sub)
		}
	case syntax.OpAlternate:
		genMatch(r, b, re.Sub[r.IntN(len(re.Sub))])
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := 0, 5
		switch re.Op {
		case syntax.OpPlus:
			lo = 1
		case syntax.OpQuest:
			hi = 1
		case syntax.OpRepeat:
			lo, hi = re.Min, re.Max
			if hi < 0 || hi > lo+5 && r.IntN(3) != 0 {
				hi = lo + 5
			}
		}
		for n := lo + r.IntN(hi-lo+1); n > 0; n-- {
			genMatch(r, b, re.Sub[0])
		}
	}
}

// contexts are what generated secrets are put between.
var contexts = []string{"", " ", "\n", "x", "_", "=", "\"", "'", "token: ", "the key is ", "İ ", "TOKEN=", "a.b ", "--", "\t", "é"}

// ruleSamples are texts, built around random matches of expr, that expr
// matches.
func ruleSamples(t *testing.T, r *rand.Rand, expr string, n int) []string {
	t.Helper()
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		t.Fatal(err)
	}
	compiled := regexp.MustCompile(expr)
	var out []string
	for tries := 0; len(out) < n && tries < 20*n; tries++ {
		var b strings.Builder
		b.WriteString(contexts[r.IntN(len(contexts))])
		genMatch(r, &b, re)
		b.WriteString(contexts[r.IntN(len(contexts))])
		if s := b.String(); compiled.MatchString(s) {
			out = append(out, s)
		}
	}
	return out
}

// allExpressions are the expressions of every rule, gitleaks' and ours.
func allExpressions(t *testing.T) (ids, exprs []string) {
	full := fullDetector(t)
	for _, id := range slices.Sorted(func(yield func(string) bool) {
		for id := range full.Config.Rules {
			if !yield(id) {
				return
			}
		}
	}) {
		if re := full.Config.Rules[id].Regex; re != nil {
			ids, exprs = append(ids, id), append(exprs, re.String())
		}
	}
	for _, r := range extraRules {
		ids, exprs = append(ids, "extra:"+r.id), append(exprs, r.re.String())
	}
	return ids, exprs
}

// TestPrefilterNeverMissesAMatch: for every rule, random texts its
// expression matches (random matches in random context, letters in random
// case, now and then a K or ſ), and the same texts cut or grown by a byte:
// whenever the expression matches, the prefilter lets it through.
func TestPrefilterNeverMissesAMatch(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 1))
	ids, exprs := allExpressions(t)
	derived, checked := 0, 0
	for i, expr := range exprs {
		p := newPrefilter(expr)
		if p == nil {
			t.Logf("%s: no prefilter", ids[i])
			continue
		}
		derived++
		compiled := regexp.MustCompile(expr)
		samples := ruleSamples(t, r, expr, 60)
		if len(samples) == 0 {
			t.Logf("%s: no sample generated", ids[i])
		}
		for _, s := range samples {
			for _, text := range []string{s, s[1:], s[:len(s)-1], "x" + s, s + "x", strings.ToUpper(s), strings.ToLower(s)} {
				if !compiled.MatchString(text) {
					continue
				}
				checked++
				if !newPrefiltered(text).mayMatch(p) {
					t.Errorf("%s: the prefilter rules out %q, which %s matches", ids[i], text, expr)
				}
			}
		}
	}
	t.Logf("%d of %d expressions have a prefilter; %d matching texts checked", derived, len(exprs), checked)
	if derived < len(exprs)*9/10 {
		t.Errorf("only %d of %d expressions have a prefilter", derived, len(exprs))
	}
}

// TestPrefilterRulesOut: the prefilters do rule out the prose they exist
// for.
func TestPrefilterRulesOut(t *testing.T) {
	for _, tt := range []struct{ expr, text string }{
		{`\b((?:hvs\.[\w-]{90,120}|s\.(?i:[a-z0-9]{24})))(?:[\x60'"\s;]|\\[nr]|$)`, "it works. tests. the thing's end."},
		{`(?i)[\w.-]{0,50}?(?:access|auth|(?-i:[Aa]pi|API)|credential|creds|key|passw(?:or)?d|secret|token)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([\w.=-]{10,150}|[a-z0-9][a-z0-9+/]{11,}={0,3})(?:[\x60'"\s;]|\\[nr]|$)`,
			"the key, as the API says: a token, rotate the secret monthly"},
		{`\b(ey[a-zA-Z0-9]{17,}\.ey[a-zA-Z0-9\/\\_-]{17,}\.(?:[a-zA-Z0-9\/\\_-]{10,}={0,2})?)(?:[\x60'"\s;]|\\[nr]|$)`, "they say the key. eyes only"},
	} {
		p := newPrefilter(tt.expr)
		if p == nil {
			t.Fatalf("no prefilter for %s", tt.expr)
		}
		if newPrefiltered(tt.text).mayMatch(p) {
			t.Errorf("%q let through for %s", tt.text, tt.expr)
		}
	}
	// A rune that folds to an ASCII letter turns the prefilters off.
	p := newPrefilter(`(?i)token=[0-9]{8}`)
	for _, text := range []string{"to\u212aen=12345678", "\u017ftoken=12345678"} {
		if !newPrefiltered(text).mayMatch(p) {
			t.Errorf("%q ruled out", text)
		}
	}
}

// TestKeywordSetAgrees: the keyword automaton finds exactly the keywords
// strings.Contains finds in strings.ToLower(text), over the testdata
// prose, the families' samples and texts around every keyword in several
// cases and scripts.
func TestKeywordSetAgrees(t *testing.T) {
	ks := loadRedactor().kw
	texts := append(slices.Clone(lookAlikes), testdataProse(t)...)
	for _, f := range secretFamilies {
		texts = append(texts, f.text)
	}
	for i, w := range ks.words {
		for _, k := range []string{w, strings.ToUpper(w), strings.ToUpper(w[:1]) + w[1:]} {
			texts = append(texts, k, "İ"+k, k[:len(k)-1], "x"+k+"y", strings.Repeat(k, 2)+ks.words[(i+1)%len(ks.words)])
		}
	}
	texts = append(texts, "\u212aey", "SECRET\u212aEY", "İİİ toKen", "ǅ DŽ ǲ pass")
	for _, text := range texts {
		h := ks.find(text)
		lower := strings.ToLower(text)
		for i, w := range ks.words {
			if want := strings.Contains(lower, w); h.has(i) != want {
				t.Errorf("find(%.80q): keyword %q found %v, want %v", text, w, h.has(i), want)
			}
		}
	}
}

// TestRedactGeneratedSecrets compares Redact with the full gitleaks
// detector (redactReference) over random matches of every rule's
// expression, alone and inside prose: what a prefilter or the rule-by-rule
// detectors could get wrong shows here.
func TestRedactGeneratedSecrets(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 2))
	ids, exprs := allExpressions(t)
	prose := "We looked at the billing client again; the retry budget is three attempts.\n"
	differ, compared, redacted := 0, 0, 0
	for i, expr := range exprs {
		for _, s := range ruleSamples(t, r, expr, 12) {
			for _, text := range []string{s, prose + s + "\n" + prose, "export X=" + s} {
				got, want := Redact(text), redactReference(t, text)
				compared++
				if want != text {
					redacted++
				}
				if got != want {
					if differ++; differ <= 10 {
						t.Errorf("%s: Redact(%q)\n = %q\nthe full detector: %q", ids[i], text, got, want)
					}
				}
			}
		}
	}
	t.Logf("%d texts compared (%d with a secret), %d differ", compared, redacted, differ)
}

// FuzzRedact: Redact agrees with the full gitleaks detector on any text.
func FuzzRedact(f *testing.F) {
	for _, s := range lookAlikes {
		f.Add(s)
	}
	for _, fam := range secretFamilies {
		f.Add(fam.text)
	}
	f.Add("export GITHUB_TOKEN=ghp_R4nd0mFakeT0kenV4lue9876543210abcdXY\nvault s.AbCdEfGhIjKlMnOpQrStUvWx done")
	f.Add("kind: Secret\ndata:\n  password: c2VjcmV0cGFzc3dvcmQxMjM=\n")
	f.Add("curl -u admin:Sup3rS3cretPw https://x.example.com ; to\u212aen = 'abcdef0123456789abcdef'")
	f.Fuzz(func(t *testing.T, text string) {
		if got, want := Redact(text), redactReference(t, text); got != want {
			t.Errorf("Redact(%q)\n = %q\nthe full detector: %q", text, got, want)
		}
	})
}

// TestRedactConcurrent: Redact from several goroutines at once gives what
// it gives alone (run under -race to check the sharing too).
func TestRedactConcurrent(t *testing.T) {
	var texts []string
	for _, f := range secretFamilies {
		texts = append(texts, f.text)
	}
	texts = append(texts, lookAlikes...)
	want := make([]string, len(texts))
	for i, s := range texts {
		want[i] = Redact(s)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range texts {
				j := (i + g) % len(texts)
				if got := Redact(texts[j]); got != want[j] {
					t.Errorf("concurrent Redact(%q) = %q, alone %q", texts[j], got, want[j])
				}
			}
		}()
	}
	wg.Wait()
}

// TestRedactorMemory: the redactor a process keeps — gitleaks' rules,
// one detector per rule, the keyword automaton, the prefilters — stays
// under 10 MB of heap.
func TestRedactorMemory(t *testing.T) {
	h0 := heapAlloc()
	det, err := detect.NewDetectorDefaultConfig()
	if err != nil {
		t.Fatal(err)
	}
	s := newScanner(det)
	held := heapAlloc() - h0
	if len(s.rules) == 0 {
		t.Fatal("no rule loaded")
	}
	t.Logf("redactor: %d gitleaks rules that can find something in a text, %d keywords, %d automaton states; %.1f MiB of heap",
		len(s.rules), len(s.kw.words), len(s.kw.out)-1, float64(held)/(1<<20))
	if held > 10<<20 {
		t.Errorf("the redactor holds %.1f MiB", float64(held)/(1<<20))
	}
	runtime.KeepAlive(s)
}
