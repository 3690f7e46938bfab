package transcript

import (
	"encoding/base64"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/report"
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
//
// gitleaks' rules are gitleaks', and so is what they find; how they are run
// is ours (keywords.go, redact_prefilter.go): one keyword automaton for
// every rule, each gitleaks rule in a detector of its own that runs only
// when its keywords are in the text and its prefilter does not rule a
// match out. The redacted text is byte for byte what gitleaks' full
// detector gives; one redactor per process, about 5 MB of heap, shared by every
// caller.

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
	// scheme://user:password@host — the password only. The user may be
	// empty (redis://:pw@host); the password may hold @ ; & (it runs to the
	// last @ before the host).
	{id: "url-password", after: "://", group: 1,
		re: regexp.MustCompile(`\A[^\s:/@"'<>]{0,128}:([^\s/"'<>]{1,256})@[^\s@/"'<>]+(?:[/?#\s"'<>]|\z)`)},
	// .netrc: machine HOST login USER password SECRET.
	{id: "netrc-password", keywords: []string{"machine"}, group: 1,
		re: regexp.MustCompile(`\bmachine\s+(?:[\w-]+\.[\w.-]+|localhost)\s+(?:login\s+\S+\s+)?password\s+(\S+)`)},
	// Passwords on a command line: --password X, --password=X, --db-pass=X,
	// mysql -pX, redis-cli -a X, sshpass -p X.
	{id: "cli-password", keywords: []string{"pass"}, group: 2,
		re: regexp.MustCompile(`(?i)(?:^|\s)--[a-z0-9-]*pass(?:word|wd)?(?:=|\s+)(["']?)([^\s"'-][^\s"']*)`)},
	{id: "cli-password", keywords: []string{"mysql", "mariadb"}, group: 1,
		re: regexp.MustCompile(`\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n|;&]*?\s-p([^\s"'-][^\s"']*)`)},
	{id: "cli-password", keywords: []string{"redis-cli", "sshpass"}, group: 1,
		re: regexp.MustCompile(`\b(?:redis-cli\b[^\n|;&]*?\s-a|sshpass\s+-p)\s*([^\s"'-][^\s"']*)`)},
	// password=… / password: … (also DB_PASSWORD=, query strings): the value,
	// when it looks like a secret (a digit or a symbol in it), not a word.
	{id: "password", keywords: []string{"passw"}, group: 1, valid: secretLike,
		re: regexp.MustCompile(`(?i)(?:password|passwd)["']?\s*[=:]\s*["']?([^\s"'&;,<>]{6,})`)},
	// An assignment with no spaces (NAME_PASSWORD=value, as in .env files
	// and shells) holds a password even when it is letters only.
	{id: "password", keywords: []string{"pass", "pwd"}, group: 1, valid: notPlaceholder,
		re: regexp.MustCompile(`(?i)\b[a-z0-9_.]*(?:password|passwd|passphrase|_pass|_pwd)=([^\s"'&;,<>]{4,})`)},
	// A quoted value: password = "Blue Horse 42", "password": "…" (its
	// quotes escaped too, as inside a tool call's JSON).
	{id: "password", keywords: []string{"pass"}, group: 2, valid: notPlaceholder,
		re: regexp.MustCompile(`(?i)(?:password|passwd|passphrase)\\?["']?\s*[=:]\s*\\?(["'])([^"'\n\\]{4,128})\\?["']`)},
	// A YAML or INI line that is only a password key and its value.
	{id: "password", keywords: []string{"pass"}, group: 1, valid: notPlaceholder,
		re: regexp.MustCompile(`(?im)^[ \t-]*[a-z0-9_.]*(?:password|passwd|passphrase)[ \t]*[:=][ \t]*([^\s"'#]{4,})[ \t]*$`)},
	// Said in prose: "the admin password is X", "password was X".
	{id: "password", keywords: []string{"pass"}, group: 1, valid: proseSecret,
		re: regexp.MustCompile(`(?i)\bpass(?:word|phrase)\s+(?:is|was|will be|should be|=)\s*[:"'“]?\s*([^\s"'”,;]{4,})`)},
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
	// Django's SECRET_KEY setting, whatever it holds.
	{id: "django-secret-key", keywords: []string{"SECRET_KEY"}, group: 2,
		re: regexp.MustCompile(`\bSECRET_KEY["']?\s*[=:]\s*[a-z]?(["'])([^"'\n]{8,})["']`)},
	// Twilio auth tokens: 32 hex digits after the word.
	{id: "twilio-auth-token", keywords: []string{"twilio", "auth token", "auth_token", "authtoken"}, group: 1,
		re: regexp.MustCompile(`(?i)(?:twilio(?:[ _-]?auth)?(?:[ _-]?token)?|auth[ _-]?token)["']?\s*(?:is\s+|[=:]\s*)?["']?\b([0-9a-f]{32})\b`)},
	// Discord bot tokens: base64 user id, timestamp, HMAC.
	{id: "discord-bot-token", keywords: []string{"discord", "token", "login", "bot"}, valid: discordLike,
		re: regexp.MustCompile(`\b[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}\b`)},
	// AWS access key ids, EXAMPLE-suffixed ones included.
	{id: "aws-access-key", keywords: []string{"AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA"},
		re: regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[A-Z0-9]{16}\b`)},
	// AWS secret keys next to their name, in prose ("secret key: …") or as
	// the column after the key id in the console's credentials CSV.
	{id: "aws-secret-key", keywords: []string{"secret"}, group: 1, valid: mixedBase64,
		re: regexp.MustCompile(`(?i)secret[ _-]?(?:access[ _-]?)?key(?:[ _-]?id)?["']?[^A-Za-z0-9/+\n]{1,20}(?:is\s+)?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|\z)`)},
	{id: "aws-secret-key", keywords: []string{"[REDACTED:aws-access-key]"}, group: 1, valid: mixedBase64,
		re: regexp.MustCompile(`\[REDACTED:aws-access-key\][\s,;:|"']{1,6}([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|\z)`)},
}

// redactor is the keyword pass over our rules and gitleaks', and gitleaks'
// rules ready to run one by one, built on first use: one per process,
// never changed after, shared by every Redact.
var redactor struct {
	once sync.Once
	scan *scanner
	err  error
}

func loadRedactor() *scanner {
	redactor.once.Do(func() {
		var det *detect.Detector
		det, redactor.err = detect.NewDetectorDefaultConfig()
		if redactor.err != nil {
			det = nil
		}
		// det itself is not kept: its keyword automaton and its allowlists'
		// stop-word automata are most of its memory, and newScanner takes
		// what it needs without them.
		redactor.scan = newScanner(det)
	})
	return redactor.scan
}

// RedactorError reports whether gitleaks' rule set failed to load (then
// Redact applies only its own extra rules). Callers show it in their status.
func RedactorError() error {
	loadRedactor()
	return redactor.err
}

// Redact returns text with every secret it recognises replaced by a
// "[REDACTED:<rule>]" marker. It is safe for concurrent use: the rule set
// is loaded once per process and only read after, so messages may be
// redacted in parallel.
func Redact(text string) string {
	if text == "" {
		return text
	}
	s := loadRedactor()
	// The keywords are looked for in one lower-cased copy, all in one pass.
	h := s.kw.find(text)
	pre := newPrefiltered(text)
	for i, r := range extraRules {
		if s.applies(i, text, h) && pre.mayMatch(s.extraPre[i]) {
			if out := r.replace(text); out != text {
				text, h, pre = out, s.kw.find(out), newPrefiltered(out)
			}
		}
	}
	return replaceFindings(text, s.detect(text, h, pre))
}

// replaceFindings puts each finding's marker in place of its secret.
func replaceFindings(text string, findings []report.Finding) string {
	// Longest secrets first, so a secret that contains another is replaced
	// whole; between rules that find the same secret, the first by name,
	// whatever order gitleaks found them in.
	sort.SliceStable(findings, func(i, j int) bool {
		if a, b := len(findings[i].Secret), len(findings[j].Secret); a != b {
			return a > b
		}
		return findings[i].RuleID < findings[j].RuleID
	})
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
	return notPlaceholder(v) && strings.IndexFunc(v, func(c rune) bool {
		return !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z')
	}) >= 0
}

// placeholder matches the values documentation puts where a secret goes.
var placeholder = regexp.MustCompile(`(?i)^(?:<[^>]*>?|\$\{?[a-z_][a-z0-9_]*\}?|%[a-z_]+%|\{\{.*|x{3,}|\*{3,}|\.{3,}|your[_-].*|my[_-].*|.*[_-]here|changeme|placeholder|example|redacted|\[redacted.*|null|none|nil|true|false|required|optional|string|secret|password)$`)

// notPlaceholder reports whether a value is not a documentation stand-in.
func notPlaceholder(v string) bool { return !placeholder.MatchString(v) }

// proseWords are what follows "the password is" when no password does.
var proseWords = map[string]bool{
	"required": true, "missing": true, "wrong": true, "incorrect": true, "invalid": true, "correct": true,
	"empty": true, "stored": true, "hashed": true, "encrypted": true, "optional": true, "needed": true,
	"expired": true, "changed": true, "reset": true, "saved": true, "sent": true, "shown": true, "hidden": true,
	"too": true, "not": true, "never": true, "still": true, "also": true, "only": true, "then": true, "now": true,
	"set": true, "the": true, "your": true, "their": true, "that": true, "this": true, "same": true, "weak": true,
	"strong": true, "long": true, "short": true, "case-sensitive": true, "valid": true, "accepted": true,
	"rejected": true, "checked": true, "generated": true, "random": true, "unique": true, "used": true,
	"updated": true, "unknown": true, "available": true, "different": true, "being": true, "in": true, "on": true,
}

// proseSecret accepts what follows "password is" unless it is a word of
// prose or a placeholder.
func proseSecret(v string) bool {
	w := strings.ToLower(strings.TrimRight(v, ".!?)"))
	return !proseWords[w] && notPlaceholder(w)
}

// mixedBase64 accepts a 40-character AWS secret key: upper and lower case
// letters and a digit, as the keys are (a git SHA is hex, a word is not).
func mixedBase64(v string) bool {
	var up, lo, dig bool
	for _, c := range v {
		switch {
		case 'A' <= c && c <= 'Z':
			up = true
		case 'a' <= c && c <= 'z':
			lo = true
		case '0' <= c && c <= '9':
			dig = true
		}
	}
	return up && lo && dig
}

// discordLike accepts a Discord bot token: its first part is a user id in
// base64 (digits only once decoded), which a random dotted string is not.
func discordLike(v string) bool {
	first, _, _ := strings.Cut(v, ".")
	b, err := base64.RawStdEncoding.DecodeString(strings.NewReplacer("-", "+", "_", "/").Replace(first))
	if err != nil || len(b) < 17 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
