package redact_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"runsdesk/runtime/redact"
)

var shapes = []struct {
	name, in, secret, want string
}{
	{"openai project key", "key sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXyZ0aB here", "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXyZ0aB", "key [redacted] here"},
	{"openai key", "OPENAI_API_KEY sk-0123456789abcdefghijKLMNOP", "sk-0123456789abcdefghijKLMNOP", "OPENAI_API_KEY [redacted]"},
	{"anthropic key", "use sk-ant-api03-Zx9_Yw8-Vu7Ts6Rq5Po4Nm3Lk2Ji1HgFe0Dc now", "sk-ant-api03-Zx9_Yw8-Vu7Ts6Rq5Po4Nm3Lk2Ji1HgFe0Dc", "use [redacted] now"},
	{"github token", "ghp_1234567890abcdefghijklmnopqrstuvwxYZ was leaked", "ghp_1234567890abcdefghijklmnopqrstuvwxYZ", "[redacted] was leaked"},
	{"github fine-grained", "token github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "token [redacted]"},
	{"aws key id", "AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE", "[redacted]"},
	{"slack token", "xoxb-123456789012-abcdefABCDEF", "xoxb-123456789012-abcdefABCDEF", "[redacted]"},
	{"jwt", "id eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk end",
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk", "id [redacted] end"},
	{"bearer header", "Authorization: Bearer abc123.def456-ghi", "abc123.def456-ghi", "Authorization: Bearer [redacted]"},
	{"basic header", "Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l", "YWxhZGRpbjpvcGVuc2VzYW1l", "Authorization: Basic [redacted]"},
	{"password in url", "connect postgres://admin:s3cret@db.example.com/x", "s3cret", "connect postgres://[redacted]@db.example.com/x"},
	{"json password", `{"user":"bob","password":"hunter2"}`, "hunter2", `{"user":"bob","password":"[redacted]"}`},
	{"assignment", "api_key=abcdef123456; next", "abcdef123456", "api_key=[redacted]; next"},
	{"email", "write to ada.lovelace+desk@example.co.uk today", "ada.lovelace+desk@example.co.uk", "write to [email] today"},
}

var plain = []string{
	"Refund order A-1 for 42.50 EUR.",
	"See https://example.com/orders/7?page=2 for details.",
	"The token is valid until tomorrow.",
	"sk-ip the intro",
	"ghp_short",
	"",
}

func TestKnownSecretShapesAreMasked(t *testing.T) {
	for _, s := range shapes {
		got := redact.Text(s.in)
		if strings.Contains(got, s.secret) {
			t.Errorf("%s: %q still holds the secret", s.name, got)
		}
		if got != s.want {
			t.Errorf("%s: Text(%q) = %q, want %q", s.name, s.in, got, s.want)
		}
	}
	for _, in := range plain {
		if got := redact.Text(in); got != in {
			t.Errorf("plain text changed: Text(%q) = %q", in, got)
		}
	}
}

func TestTextIsCapped(t *testing.T) {
	got := redact.Text(strings.Repeat("a", 5000))
	if n := utf8.RuneCountInString(got); n != redact.MaxChars || !strings.HasSuffix(got, "…") {
		t.Errorf("5,000 characters: %d characters ending %q, want %d ending …", n, got[len(got)-5:], redact.MaxChars)
	}
	exact := strings.Repeat("é", redact.MaxChars)
	if got := redact.Text(exact); got != exact {
		t.Errorf("a text of exactly %d multi-byte characters was changed", redact.MaxChars)
	}
	if got := redact.Text(exact + "é"); utf8.RuneCountInString(got) != redact.MaxChars {
		t.Errorf("one character over: %d characters, want %d", utf8.RuneCountInString(got), redact.MaxChars)
	}
}

func TestSecretAtTheCutIsNotPartlyKept(t *testing.T) {
	key := "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXyZ0aB"
	got := redact.Text(strings.Repeat("x", redact.MaxChars-10) + " " + key)
	if strings.Contains(got, "sk-proj") {
		t.Errorf("the start of a key at the cut was kept: %q", got[len(got)-20:])
	}
}

func TestRedactedJSONStaysJSON(t *testing.T) {
	in := `{"password":"hunter2","to":"bob@example.com","headers":{"Authorization":"Bearer abcdef.123"},"url":"https://u:p@h.example/x"}`
	got := redact.Text(in)
	if !json.Valid([]byte(got)) {
		t.Fatalf("redacted JSON is not JSON: %s", got)
	}
	for _, secret := range []string{"hunter2", "bob@example.com", "abcdef.123", "u:p@"} {
		if strings.Contains(got, secret) {
			t.Errorf("%q kept in %s", secret, got)
		}
	}
}

var leaks = []*regexp.Regexp{
	regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{20,}`),
	regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{36,}`),
	regexp.MustCompile(`\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+`),
	regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`),
}

func FuzzText(f *testing.F) {
	for _, s := range shapes {
		f.Add(s.in)
	}
	for _, s := range plain {
		f.Add(s)
	}
	f.Add("mailto:a@b.cc sk-" + strings.Repeat("A", 30) + "@x.io")
	f.Fuzz(func(t *testing.T, in string) {
		got := redact.Text(in)
		if !utf8.ValidString(got) {
			t.Fatalf("Text(%q) is not UTF-8", in)
		}
		n := utf8.RuneCountInString(got)
		if n > redact.MaxChars {
			t.Fatalf("Text(%q) has %d characters", in, n)
		}
		for _, re := range leaks {
			if m := re.FindString(got); m != "" {
				t.Fatalf("Text(%q) = %q still holds %q", in, got, m)
			}
		}
		if n < redact.MaxChars {
			if again := redact.Text(got); again != got {
				t.Fatalf("not idempotent: Text(%q) = %q, again %q", in, got, again)
			}
		}
	})
}

func BenchmarkText(b *testing.B) {
	text := strings.Repeat("Customer ada@example.com asked to refund order A-17 (42.50 EUR); header Bearer abc.def; ", 22)
	b.ReportAllocs()
	for b.Loop() {
		redact.Text(text)
	}
}
