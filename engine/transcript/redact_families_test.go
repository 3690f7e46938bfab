package transcript

import (
	"strings"
	"testing"
)

// secretFamilies are the families of secrets users paste into agent
// sessions that gitleaks' defaults let through, each with realistic samples
// (fake values, in the real shape) and the secret each must lose.
var secretFamilies = []struct {
	family string
	text   string
	secret string
}{
	{"aws secret key in prose", "my aws secret key is wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY, rotate it", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
	{"aws secret key, secret access key:", "Secret access key: 9drTJvcXLB89EXAMPLEKEYmj6kFz2Yqh0Wc8vT1x", "9drTJvcXLB89EXAMPLEKEYmj6kFz2Yqh0Wc8vT1x"},
	{"aws credentials csv", "User name,Password,Access key ID,Secret access key,Console login link\ndeploy,,AKIAZ3MEXAMPLEQ4RT7Y,Jf8kP2vLq9XrT4wN7bZc1MhG5sD3aE6yU0iO8pKl,https://123456789012.signin.aws.amazon.com/console", "Jf8kP2vLq9XrT4wN7bZc1MhG5sD3aE6yU0iO8pKl"},
	{"redis url, empty user", "REDIS_URL=redis://:Rd5PassW0rdFake@cache.internal:6379/0", "Rd5PassW0rdFake"},
	{"url password with @", "postgres://app:p@ssw0rd@db.internal:5432/app", "p@ssw0rd"},
	{"url password with ; and &", "mongodb://admin:sEcr3t;x&y@mongo.internal:27017/admin", "sEcr3t;x&y"},
	{"letter-only env password", "DB_PASSWORD=correcthorsebatterystaple", "correcthorsebatterystaple"},
	{"quoted passphrase", `password = "Blue Horse 42"`, "Blue Horse 42"},
	{"quoted passphrase inside a tool call's JSON", `{"command":"echo 'password = \"Blue Horse 42\"' >> app.ini"}`, "Blue Horse 42"},
	{"json password", `{"user": "svc", "password": "tulip garden"}`, "tulip garden"},
	{"yaml password", "database:\n  user: app\n  password: marigoldsunset\n  host: db", "marigoldsunset"},
	{"django secret key", "SECRET_KEY = 'django-insecure-7m#k2$vq9x!fake+key(zq3)w8e'", "django-insecure-7m#k2$vq9x!fake+key(zq3)w8e"},
	{"twilio auth token in prose", "Twilio auth token: 8f3a1c9e7b2d4f6a0e5c3b1d9f7a2e4c for the SMS sender", "8f3a1c9e7b2d4f6a0e5c3b1d9f7a2e4c"},
	{"mysql -p", "mysql -u root -pHunter2fake -h db.internal app", "Hunter2fake"},
	{"--password X", "pg_restore --password Tr0ub4dorFake dump.sql", "Tr0ub4dorFake"},
	{"--db-pass=X", "./migrate --db-user=app --db-pass=sunflowerfield up", "sunflowerfield"},
	{"redis-cli -a", "redis-cli -h cache -a R3disAuthFake ping", "R3disAuthFake"},
	{".netrc line", "machine api.example.com login deploy password n3tRcFakePass", "n3tRcFakePass"},
	{"discord bot token", "bot token MTE0NTY3ODkwMTIzNDU2Nzg5MA.GaBcDe.x1Y2z3A4b5C6d7E8f9G0h1I2j3K4l5M6n7O8 in the config", "MTE0NTY3ODkwMTIzNDU2Nzg5MA.GaBcDe.x1Y2z3A4b5C6d7E8f9G0h1I2j3K4l5M6n7O8"},
	{"password said in prose", "ok, the admin password is lavenderfield7 for now", "lavenderfield7"},
	{"password said, letters only", "The root password was bluebellmeadow.", "bluebellmeadow"},
}

// lookAlikes look like secrets and are not: they must survive redaction.
var lookAlikes = []string{
	"merged as 3f786850e387550fdab836ed7e6dc881de23001b (short 3f78685)",
	"request 5d1c7a0e-3b52-4c1e-9a77-0f3e2b6d8c41 failed",
	"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
	"md5 d41d8cd98f00b204e9800998ecf8427e, sha1 da39a3ee5e6b4b0d3255bfef95601890afd80709",
	"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	"we still need the password reset flow and a password strength meter",
	"api_key=YOUR_API_KEY",
	"set DB_PASSWORD=<your password> in .env, or DB_PASSWORD=${DB_PASSWORD}",
	"the password is required; the password is too short",
	"password: required",
	"pass the --password-file flag, not --no-password",
	"mysql -u root -p app (it prompts for the password)",
	"the secret key rotation runs monthly",
	"use auth token rotation; the checksum is 0123456789abcdef0123456789abcdef",
	"version 1.2.3.4 and module.exports.default.handler",
	"SECRET_KEY = os.environ['DJANGO_SECRET_KEY']",
	"machine learning login flow password screen",
}

// TestRedactFamilies: every family of item 10 is redacted, its context
// kept; every look-alike survives untouched.
func TestRedactFamilies(t *testing.T) {
	for _, f := range secretFamilies {
		t.Run(f.family, func(t *testing.T) {
			if !strings.Contains(f.text, f.secret) {
				t.Fatalf("sample %q lacks its secret", f.text)
			}
			got := Redact(f.text)
			if strings.Contains(got, f.secret) || !strings.Contains(got, "[REDACTED:") {
				t.Errorf("not redacted: %q", got)
			}
			if before := f.text[:strings.Index(f.text, f.secret)]; len(before) > 3 && !strings.Contains(got, strings.TrimSpace(before[:len(before)/2])) {
				t.Errorf("context lost: %q", got)
			}
		})
	}
	for _, s := range lookAlikes {
		if got := Redact(s); got != s {
			t.Errorf("look-alike changed:\n in %q\nout %q", s, got)
		}
	}
}
