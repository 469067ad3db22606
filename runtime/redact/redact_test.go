package redact_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"runsdesk/runtime/redact"
)

// Fake secrets are split so that secret scanners do not flag this file.
var (
	openAIKey    = "sk-" + "proj-Xq3vT9mLw8Rz1VbN6cKj3HsYd0PeGa7UuIiOo5TtBn2Fe4Ws"
	anthropicKey = "sk-" + "ant-api03-Jm4nB7vC2xZ9lK0pQ8wE3rT6yU1iO5aS_dF-gH4jK7lZ2xC9vB0nM3qW6eR8tY1uI5oP7aS9dF2gAA"
	githubToken  = "ghp_" + "9fK2mQ7xL4pZ8wR1tY6uI3oA5sD0gH7jB2nV"
	githubPAT    = "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV"
	awsKeyID     = "AKIA" + "IOSFODNN7EXAMPLE"
	slackToken   = "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
	jwt          = "eyJ" + "hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)

var shapes = []struct {
	name, in, secret, want string
}{
	{"openai project key", "OPENAI_KEY is " + openAIKey + " for now", openAIKey, "OPENAI_KEY is [redacted] for now"},
	{"anthropic key", "x-api-key " + anthropicKey, anthropicKey, "x-api-key [redacted]"},
	{"github token", "git push https://" + githubToken + "@github.com/o/r", githubToken, "https://[redacted]@github.com/o/r"},
	{"github fine-grained token", "GH=" + githubPAT, githubPAT, "GH=[redacted]"},
	{"aws access key id", "aws_access_key_id = " + awsKeyID, awsKeyID, "aws_access_key_id = [redacted]"},
	{"slack token", "slack: " + slackToken + ".", slackToken, "slack: [redacted]."},
	{"jwt", "cookie session=" + jwt + "; Path=/", jwt, "session=[redacted]; Path=/"},
	{"bearer header", "Authorization: Bearer abc.def", "abc.def", "Authorization: Bearer [redacted]"},
	{"bearer in prose", "curl -H 'bearer 7f3a9c2e'", "7f3a9c2e", "bearer [redacted]'"},
	{"basic header", "Authorization: Basic dXNlcjpodW50ZXIy", "dXNlcjpodW50ZXIy", "Authorization: Basic [redacted]"},
	{"password in url", "DSN postgres://admin:s3cret@db.example.com/x", "s3cret", "postgres://[redacted]@db.example.com/x"},
	{"password in json", `{"user":"bob","password":"hunter2"}`, "hunter2", `{"user":"bob","password":"[redacted]"}`},
	{"password in escaped json", `{"args":"{\"db_password\": \"hunter2\"}"}`, "hunter2", `{\"db_password\": \"[redacted]\"}`},
	{"env assignment", "export CLIENT_SECRET=Zm9vYmFy42\n", "Zm9vYmFy42", "export CLIENT_SECRET=[redacted]\n"},
	{"aws secret key", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI", "AWS_SECRET_ACCESS_KEY=[redacted]"},
	{"query token", "GET /cb?code=1&access_token=tok123&state=x", "tok123", "access_token=[redacted]&state=x"},
	{"yaml api key", "apiKey: 'k-123'", "k-123", "apiKey: '[redacted]'"},
	{"email", "mail ada.lovelace+runs@example.co.uk today", "ada.lovelace", "mail [email] today"},

	{"prose", "The agent finished the task in 3 steps and 1.5 seconds.", "", ""},
	{"numbers", "total 12,345.67 over 2024-05-01..2024-06-01", "", ""},
	{"url without credentials", "see https://docs.example.com/a/b?x=1#frag and http://localhost:8080", "", ""},
	{"token in a sentence", "Each token costs money; max_tokens: 4096 and the bearer token is rotated.", "", ""},
	{"short sk- word", "sk-ip the next step; ask-questions-before-you-start-anything", "", ""},
	{"kebab words", "disk-usage-monitoring-service-v2 and runsdesk-worker-production-1", "", ""},
	{"package versions", "react@18.2.0 and @scope/pkg", "", ""},
}

func TestKnownSecretShapesAreMasked(t *testing.T) {
	for _, c := range shapes {
		t.Run(c.name, func(t *testing.T) {
			got := redact.Text(c.in)
			if c.secret == "" {
				if got != c.in {
					t.Fatalf("Text(%q) = %q, want it unchanged", c.in, got)
				}
				return
			}
			if strings.Contains(got, c.secret) {
				t.Errorf("Text(%q) = %q, still holds %q", c.in, got, c.secret)
			}
			if !strings.Contains(got, c.want) {
				t.Errorf("Text(%q) = %q, want it to hold %q", c.in, got, c.want)
			}
		})
	}
}

func TestTextIsCapped(t *testing.T) {
	got := redact.Text(strings.Repeat("a", 5000))
	if n := utf8.RuneCountInString(got); n != redact.MaxChars {
		t.Errorf("5000 a's: %d runes, want %d", n, redact.MaxChars)
	}
	if want := strings.Repeat("a", redact.MaxChars-1) + "…"; got != want {
		t.Errorf("5000 a's: not MaxChars-1 a's and …")
	}

	exact := strings.Repeat("é", redact.MaxChars)
	if got := redact.Text(exact); got != exact {
		t.Errorf("a %d-rune text was changed", redact.MaxChars)
	}

	got = redact.Text(strings.Repeat("日本", redact.MaxChars))
	if n := utf8.RuneCountInString(got); n != redact.MaxChars || got != strings.Repeat("日本", redact.MaxChars/2-1)+"日…" {
		t.Errorf("multi-byte text: %d runes, want %d: MaxChars-1 of them and …", n, redact.MaxChars)
	}

	if got := redact.Text("ok \xff\xfe end"); got != "ok \uFFFD end" {
		t.Errorf("invalid UTF-8: got %q", got)
	}
}

func TestSecretAcrossTheCutIsMasked(t *testing.T) {
	kept := strings.Repeat("x", redact.MaxChars-20) + " "
	if got := redact.Text(kept + openAIKey); got != kept+"[redacted]" {
		t.Errorf("a key across the cut: got …%q, want …%q", got[len(got)-30:], " [redacted]")
	}
}

func TestRedactedJSONStaysJSON(t *testing.T) {
	in := `{"headers":{"Authorization":"Bearer ` + jwt + `","X-Api-Key":"` + openAIKey + `"},` +
		`"body":{"email":"ada@example.com","password":"hun\"ter2","note":"line\nbob@example.org","token":null,"n":1},` +
		`"args":"{\"secret\":\"a\\\\b\",\"cmd\":\"PASSWORD=x\\ny\"}"}`
	if !json.Valid([]byte(in)) {
		t.Fatal("test input is not JSON")
	}
	got := redact.Text(in)
	if !json.Valid([]byte(got)) {
		t.Fatalf("Text made invalid JSON: %s", got)
	}
	for _, s := range []string{jwt, openAIKey, "ada@", "hun", "bob@", `a\\\\b`, "PASSWORD=x"} {
		if strings.Contains(got, s) {
			t.Errorf("%q survived: %s", s, got)
		}
	}
}

var leaks = map[string]*regexp.Regexp{
	"openai key":   regexp.MustCompile(`(?:^|[^A-Za-z0-9]|\\[A-Za-z])sk-[A-Za-z0-9_-]{20,}`),
	"github token": regexp.MustCompile(`gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}`),
	"jwt":          regexp.MustCompile(`(?:^|[^A-Za-z0-9]|\\[A-Za-z])eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*`),
	"email":        regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`),
}

func FuzzText(f *testing.F) {
	for _, c := range shapes {
		f.Add(c.in)
	}
	for _, s := range []string{
		`{"a":"token=", "b":"x"}`,
		`{"note":"\nada@example.com \u0041bob@example.org \\\"password\\\":\\\"x\\\""}`,
		`{"k":"\n` + openAIKey + `","Authorization":"Basic YTpi"}`,
		awsKeyID + openAIKey + "@example.com",
		"map[Authorization:[Bearer abc123]] https://u:p@h?token=t&pwd=" + jwt,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got := redact.Text(in)
		if !utf8.ValidString(got) {
			t.Fatalf("Text(%q) = %q, not valid UTF-8", in, got)
		}
		n := utf8.RuneCountInString(got)
		if n > redact.MaxChars {
			t.Fatalf("Text(%q) has %d runes", in, n)
		}
		for name, re := range leaks {
			if m := re.FindString(got); m != "" {
				t.Fatalf("Text(%q) = %q, holds %s %q", in, got, name, m)
			}
		}
		if n == redact.MaxChars && strings.HasSuffix(got, "…") {
			return
		}
		if again := redact.Text(got); again != got {
			t.Fatalf("not idempotent:\n in    %q\n once  %q\n twice %q", in, got, again)
		}
		if json.Valid([]byte(in)) && !json.Valid([]byte(got)) {
			t.Fatalf("Text(%q) = %q, no longer JSON", in, got)
		}
	})
}

func BenchmarkText(b *testing.B) {
	chunk := "The agent called fetch_page with {\"url\":\"https://docs.example.com/guide?page=2\",\"headers\":" +
		"{\"Authorization\":\"Bearer " + jwt + "\"}} and got 200 OK. Contact ada@example.com for access; " +
		"the config has password: hunter2 and DSN postgres://admin:s3cret@db.example.com/app. " +
		"Next it summarised 12 paragraphs about retention policies, cost budgets and review steps. "
	text := strings.Repeat(chunk, 2048/len(chunk)+1)[:2048]
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		redact.Text(text)
	}
}
