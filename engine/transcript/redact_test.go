package transcript

import (
	"strings"
	"testing"
	"time"

	"github.com/zricethezav/gitleaks/v8/detect"

	"mnemo/engine/enginetest"
)

// Every sample below is fake: made-up values in the shape of the real thing.
func TestRedactSecrets(t *testing.T) {
	tests := []struct {
		name, text, secret, marker string
	}{
		{"github pat", "push with ghp_R4nd0mFakeT0kenV4lue9876543210abcdXY please", "ghp_R4nd0mFakeT0kenV4lue9876543210abcdXY", "[REDACTED:"},
		{"github fine-grained", "token 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 ok", "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", "[REDACTED:"},
		{"aws key id", "export AWS_ACCESS_KEY_ID=AKIA4HK7QWERTY2ZXCVB", "AKIA4HK7QWERTY2ZXCVB", "[REDACTED:"},
		{"aws key ending in EXAMPLE", "the key AKIAIOSFODNN7EXAMPLE still leaked", "AKIAIOSFODNN7EXAMPLE", "[REDACTED:aws-access-key]"},
		{"aws secret", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "[REDACTED:"},
		{"openai project key", "OPENAI_API_KEY=sk-proj-Zx9fake1Ke2yVa3lue4Abc5Def6Ghi7Jkl8Mno9Pqr0Stu", "sk-proj-Zx9fake1Ke2yVa3lue4Abc5Def6Ghi7Jkl8Mno9Pqr0Stu", "[REDACTED:"},
		{"openai key without vendor word", "use sk-Fa4keKeyF0rTest1ngOnlyAbCdEfGhIjKlMnOpQrStUv here", "sk-Fa4keKeyF0rTest1ngOnlyAbCdEfGhIjKlMnOpQrStUv", "[REDACTED:"},
		{"anthropic key", "key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcdEFGH works", "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcdEFGH", "[REDACTED:"},
		{"slack bot token", "SLACK_TOKEN=xoxb-1234567890123-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "xoxb-1234567890123-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "[REDACTED:"},
		{"stripe secret", "stripe key sk_live_4eC39HqLyjWDarjtT1zdp7dcFAKE0 in prod", "sk_live_4eC39HqLyjWDarjtT1zdp7dcFAKE0", "[REDACTED:"},
		{"google api key", "maps key AIzaSyDfAkEkEyF0rTeStInG0nLy12345678901 set", "AIzaSyDfAkEkEyF0rTeStInG0nLy12345678901", "[REDACTED:"},
		{"jwt", "cookie eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkZha2UifQ.c2lnbmF0dXJlLWZha2UtdmFsdWUtMTIz end", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkZha2UifQ.c2lnbmF0dXJlLWZha2UtdmFsdWUtMTIz", "[REDACTED:"},
		{"postgres url password", "DATABASE_URL=postgres://app:Tr0ub4dor-fake@db.internal:5432/app", "Tr0ub4dor-fake", "[REDACTED:url-password]"},
		{"https url password", "clone https://deploy:s3cr3t-FAKE-pw@git.example.com/repo.git", "s3cr3t-FAKE-pw", "[REDACTED:url-password]"},
		{"password assignment", "connect with DB_PASSWORD=hunter2-Fake and retry", "hunter2-Fake", "[REDACTED:password]"},
		{"password in a query string", "jdbc:mysql://db:3306/app?user=app&password=S3cr3tFake99", "S3cr3tFake99", "[REDACTED:password]"},
		{"password said aloud", "my password: Tr0ub4dor&3 (fake)", "Tr0ub4dor&3", "[REDACTED:password]"},
		{"authorization bearer", "curl -H 'Authorization: Bearer abc123FAKEtoken456def789ghi' https://api.example.com", "abc123FAKEtoken456def789ghi", "[REDACTED:"},
		{"authorization basic", "Authorization: Basic ZGVwbG95OmZha2UtcGFzc3dvcmQ=", "ZGVwbG95OmZha2UtcGFzc3dvcmQ=", "[REDACTED:"},
		{"private key block", "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACBmYWtlLWtleS1mb3ItdGVzdHMtb25seS0xMjM0NTY3ODkwAAAA\n-----END OPENSSH PRIVATE KEY-----\nthanks", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW", "[REDACTED:private-key]"},
		{"private key block cut short", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAfakefakefakefakefakefakefakefakefakefake", "MIIEowIBAAKCAQEAfakefakefakefakefakefakefakefakefakefake", "[REDACTED:private-key]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Redact(tt.text)
			if strings.Contains(got, tt.secret) {
				t.Errorf("secret survived: %q", got)
			}
			if !strings.Contains(got, tt.marker) {
				t.Errorf("no %s marker: %q", tt.marker, got)
			}
			// The text before the secret stays as it was, searchable.
			before := tt.text[:strings.Index(tt.text, tt.secret)]
			if i := strings.Index(before, "-----BEGIN"); i >= 0 {
				before = before[:i]
			}
			if !strings.HasPrefix(got, before) {
				t.Errorf("context %q lost: %q", before, got)
			}
		})
	}
}

func TestRedactLeavesOrdinaryText(t *testing.T) {
	for _, text := range []string{
		"We decided the retry budget is three attempts with a 20 s cap.",
		"merged in commit 3f786850e387550fdab836ed7e6dc881de23001b yesterday",
		"short sha a1b2c3d and tag v1.4.2",
		"session 5d1c7a0e-3b52-4c1e-9a77-0f3e2b6d8c41 and request req_0a1b2c3d4e5f",
		"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
		"the password policy requires twelve characters; rotate the token monthly",
		"mail dev@example.com or see https://example.com/docs/auth#bearer",
		"install scikit-learn (import sklearn) and use sk-means later",
		"Authorization: see the wiki",
		"Password: required; the password policy says twelve characters",
		"set password_policy: strict and pwd: /home/dev",
		"ssh-keygen -t ed25519 writes -----BEGIN OPENSSH PUBLIC KEY----- style files",
		"sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 of the empty file",
	} {
		if got := Redact(text); got != text {
			t.Errorf("changed ordinary text:\n in %q\nout %q", text, got)
		}
	}
}

// BenchmarkRedact measures redaction cost per MB of transcript-like prose,
// split into messages as Read redacts them (one call per message).
func BenchmarkRedact(b *testing.B) {
	Redact("warm up") // the rule set loads once, outside the timing
	msgs, size := benchProse()
	b.SetBytes(int64(size))
	cpu0 := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		for _, m := range msgs {
			Redact(m)
		}
	}
	mbs := float64(b.N) * float64(size) / (1 << 20)
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/mbs, "ms/MB")
	// CPU time is the figure to trust on a shared machine (wall time counts waiting).
	b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/mbs, "cpu-ms/MB")
}

// benchProse is 1 MiB of transcript-like prose in messages of one to four
// paragraphs, one in 50 with an API key.
func benchProse() (msgs []string, size int) {
	para := "We looked at the billing client again: the retry budget is three attempts with exponential backoff, " +
		"capped at 20 seconds, and the dashboard at https://grafana.example.com/d/billing shows the error rate " +
		"dropping after the change in commit 3f786850e387550fdab836ed7e6dc881de23001b. "
	for i := 0; size < 1<<20; i++ {
		m := strings.Repeat(para, 1+i%4)
		if i%50 == 0 {
			m += " export OPENAI_API_KEY=sk-proj-Zx9fake1Ke2yVa3lue4Abc5Def6Ghi7Jkl8Mno9Pqr0Stu"
		}
		msgs = append(msgs, m)
		size += len(m)
	}
	return msgs, size
}

// BenchmarkRedactParallel is BenchmarkRedact from GOMAXPROCS goroutines at
// once, each message a unit of work: how redaction scales across cores when
// a sync hands messages to several workers (Redact shares one redactor and
// takes no lock on its path).
func BenchmarkRedactParallel(b *testing.B) {
	Redact("warm up")
	msgs, size := benchProse()
	b.SetBytes(int64(size) / int64(len(msgs)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for i := 0; pb.Next(); i++ {
			Redact(msgs[i%len(msgs)])
		}
	})
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	d, _ := enginetest.ProcessCPU()
	return d
}

// BenchmarkRedactorLoad measures what the first Redact of a process pays:
// parsing and compiling gitleaks' default rule set, then the redactor over
// it (a detector per rule, the keyword automaton, the prefilters).
func BenchmarkRedactorLoad(b *testing.B) {
	cpu0 := cpuTime()
	for b.Loop() {
		det, err := detect.NewDetectorDefaultConfig()
		if err != nil {
			b.Fatal(err)
		}
		newScanner(det)
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}
