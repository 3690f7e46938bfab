package transcript

import (
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/zricethezav/gitleaks/v8/detect"
)

// Secrets never enter the index: Read redacts every message and summary
// before the caller sees it. What counts as a secret is data, not code of
// ours: gitleaks' maintained default rule set (222 rules: GitHub, AWS, Slack,
// Stripe, Google, … tokens), loaded once, on first use, so a process that
// never reads a transcript never pays for it. On top of it, extraRules catch
// what users paste into agent sessions and the defaults let through: a
// password inside a URL or assigned (password=…), OpenAI/Anthropic-style keys without a vendor word
// nearby, AWS keys ending in EXAMPLE (allowlisted upstream: documentation
// keys, but users paste real ones that happen to look alike), Authorization
// headers, private-key blocks and JWTs.
//
// A secret is replaced by a marker naming the rule, "[REDACTED:<rule>]"; the
// rest of the text stays as it was, so it stays searchable.

type extraRule struct {
	id string
	re *regexp.Regexp
	// group is the submatch to replace (0: the whole match).
	group int
	// keywords: the rule runs only on text holding one of them (a lower-case
	// keyword matches in any case; others as they are). Regular
	// expressions are the cost; this keeps prose without secrets cheap.
	keywords []string
	// after: the expression is tried only just after each occurrence of this
	// string (anchored there), not over the whole text.
	after string
	// valid, if set, must accept the matched secret (cuts false positives).
	valid func(string) bool
}

var extraRules = []extraRule{
	// Private-key blocks, whole (also a block cut off before its END line).
	{id: "private-key", keywords: []string{"private key"},
		re: regexp.MustCompile(`-----BEGIN[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----(?:[\s\S]*?-----END[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|[A-Za-z0-9+/=\s:\-,]*)`)},
	// scheme://user:password@host — the password only.
	{id: "url-password", after: "://", group: 1,
		re: regexp.MustCompile(`\A[^\s:/@"'<>]{1,128}:([^\s@/"'<>]{1,256})@`)},
	// password=… / password: … (also DB_PASSWORD=, query strings): the value,
	// when it looks like a secret (a digit or a symbol in it), not a word.
	{id: "password", keywords: []string{"passw"}, group: 1, valid: secretLike,
		re: regexp.MustCompile(`(?i)(?:password|passwd)["']?\s*[=:]\s*["']?([^\s"'&;,<>]{6,})`)},
	// Authorization / Proxy-Authorization headers: the credential, scheme kept.
	{id: "authorization-header", keywords: []string{"authorization"}, group: 1,
		re: regexp.MustCompile(`(?i)\b(?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:(?:bearer|basic|token|bot|digest|negotiate|apikey)\s+)?([^\s"',;]{8,})`)},
	{id: "bearer-token", keywords: []string{"bearer"}, group: 1,
		re: regexp.MustCompile(`(?i)\bbearer\s+([A-Za-z0-9._~+/\-]{20,}=*)`)},
	// JSON Web Tokens: header.payload.signature, base64url.
	{id: "jwt", keywords: []string{"eyJ"},
		re: regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}`)},
	// OpenAI / Anthropic style keys, vendor word or not.
	{id: "api-key", keywords: []string{"sk-"},
		re: regexp.MustCompile(`\bsk-(?:ant-(?:api|admin)\d{2}-|proj-|svcacct-|admin-|or-v1-)?[A-Za-z0-9_\-]{20,}`)},
	// AWS access key ids, EXAMPLE-suffixed ones included.
	{id: "aws-access-key", keywords: []string{"AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA"},
		re: regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[A-Z0-9]{16}\b`)},
	// AWS secret keys next to their name.
	{id: "aws-secret-key", keywords: []string{"secret"}, group: 1,
		re: regexp.MustCompile(`(?i)aws_?secret_?access_?key["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})`)},
}

// redactor is gitleaks' default detector, built on first use.
var redactor struct {
	once sync.Once
	det  *detect.Detector
	err  error
}

func detector() (*detect.Detector, error) {
	redactor.once.Do(func() {
		redactor.det, redactor.err = detect.NewDetectorDefaultConfig()
	})
	return redactor.det, redactor.err
}

// RedactorError reports whether gitleaks' rule set failed to load (then
// Redact applies only its own extra rules). Callers show it in their status.
func RedactorError() error {
	_, err := detector()
	return err
}

// Redact returns text with every secret it recognises replaced by a
// "[REDACTED:<rule>]" marker.
func Redact(text string) string {
	if text == "" {
		return text
	}
	for _, r := range extraRules {
		if r.applies(text) {
			text = r.replace(text)
		}
	}
	det, err := detector()
	if err != nil {
		return text
	}
	findings := det.DetectString(text)
	if len(findings) == 0 {
		return text
	}
	// Longest secrets first, so a secret that contains another is replaced whole.
	sort.SliceStable(findings, func(i, j int) bool { return len(findings[i].Secret) > len(findings[j].Secret) })
	for _, f := range findings {
		secret := f.Secret
		if secret == "" || !strings.Contains(text, secret) {
			secret = f.Match
		}
		if len(secret) < 4 || !strings.Contains(text, secret) {
			continue
		}
		text = strings.ReplaceAll(text, secret, "[REDACTED:"+f.RuleID+"]")
	}
	return text
}

// applies is the cheap test before the expression runs.
func (r extraRule) applies(text string) bool {
	if r.after != "" {
		return strings.Contains(text, r.after)
	}
	for _, k := range r.keywords {
		if k == strings.ToLower(k) && containsFold(text, k) || strings.Contains(text, k) {
			return true
		}
	}
	return false
}

// containsFold reports whether s holds the lower-case ASCII keyword k in any
// case, without lower-casing (copying) s.
func containsFold(s, k string) bool {
	lo, up := k[0], k[0]
	if 'a' <= lo && lo <= 'z' {
		up = lo - 'a' + 'A'
	}
	next := func(c byte, from int) int {
		if j := strings.IndexByte(s[from:], c); j >= 0 {
			return from + j
		}
		return len(s)
	}
	nl, nu := next(lo, 0), next(up, 0)
	for {
		i := min(nl, nu)
		if i+len(k) > len(s) {
			return false
		}
		if strings.EqualFold(s[i:i+len(k)], k) {
			return true
		}
		if i == nl {
			nl = next(lo, i+1)
		}
		if i == nu {
			nu = next(up, i+1)
		}
	}
}

// spans lists the [start, end) of every part of text the rule replaces.
func (r extraRule) spans(text string) [][2]int {
	var out [][2]int
	if r.after != "" {
		for i := 0; ; {
			j := strings.Index(text[i:], r.after)
			if j < 0 {
				return out
			}
			at := i + j + len(r.after)
			if m := r.re.FindStringSubmatchIndex(text[at:]); m != nil && m[2*r.group] >= 0 &&
				(r.valid == nil || r.valid(text[at+m[2*r.group]:at+m[2*r.group+1]])) {
				out = append(out, [2]int{at + m[2*r.group], at + m[2*r.group+1]})
			}
			i = at
		}
	}
	for _, m := range r.re.FindAllStringSubmatchIndex(text, -1) {
		if m[2*r.group] >= 0 && (r.valid == nil || r.valid(text[m[2*r.group]:m[2*r.group+1]])) {
			out = append(out, [2]int{m[2*r.group], m[2*r.group+1]})
		}
	}
	return out
}

// replace puts the rule's marker in place of each span.
func (r extraRule) replace(text string) string {
	spans := r.spans(text)
	if len(spans) == 0 {
		return text
	}
	var b strings.Builder
	last := 0
	for _, s := range spans {
		if s[0] < last {
			continue
		}
		b.WriteString(text[last:s[0]])
		b.WriteString("[REDACTED:" + r.id + "]")
		last = s[1]
	}
	b.WriteString(text[last:])
	return b.String()
}

// secretLike reports whether a value looks like a password rather than a
// word: it holds a digit or a symbol.
func secretLike(v string) bool {
	return strings.IndexFunc(v, func(c rune) bool {
		return !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z')
	}) >= 0
}
