package mfa

import (
	"bytes"
	"image/png"
	"strings"
	"testing"
	"time"
)

// TestMatchSkewAndReplay: a code is accepted for its own step and one step either side of now,
// never two steps away, and never for a step at or before the last one used.
func TestMatchSkewAndReplay(t *testing.T) {
	s, err := NewSecret("runsdesk", "ann")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	for _, c := range []struct {
		name   string
		at     time.Time
		after  int64
		wantOK bool
	}{
		{"now", now, 0, true},
		{"one step ago", now.Add(-Period), 0, true},
		{"one step ahead", now.Add(Period), 0, true},
		{"two steps ago", now.Add(-2 * Period), 0, false},
		{"two steps ahead", now.Add(2 * Period), 0, false},
		{"step already used", now, Step(now), false},
		{"earlier step used", now, Step(now) - 1, true},
	} {
		code, err := Code(s.Base32, c.at)
		if err != nil {
			t.Fatal(err)
		}
		step, ok := Match(s.Base32, code, now, c.after)
		if ok != c.wantOK || (ok && step != Step(c.at)) {
			t.Errorf("%s: Match = %d, %v; want step %d, %v", c.name, step, ok, Step(c.at), c.wantOK)
		}
	}
	code, _ := Code(s.Base32, now)
	if _, ok := Match(s.Base32, code[:3]+" "+code[3:], now, 0); !ok {
		t.Error("a code typed with a space in the middle is refused")
	}
	for _, typed := range []string{"", "12345", "1234567", "abcdef", code + "x"} {
		if _, ok := Match(s.Base32, typed, now, 0); ok {
			t.Errorf("Match(%q) accepted", typed)
		}
	}
}

// TestSecretURLAndQRCode: the URL rebuilt from the stored secret is the one enrolment made,
// and its QR code is a PNG of QRSize pixels.
func TestSecretURLAndQRCode(t *testing.T) {
	s, err := NewSecret("runsdesk", "ann")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Base32) != 32 || !strings.HasPrefix(s.URL, "otpauth://totp/runsdesk:ann?") {
		t.Fatalf("secret %q, URL %q", s.Base32, s.URL)
	}
	u, err := URL("runsdesk", "ann", s.Base32)
	if err != nil || u != s.URL {
		t.Fatalf("URL = %q, %v; want %q", u, err, s.URL)
	}
	b, err := QRCode(u)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil || img.Bounds().Dx() != QRSize {
		t.Fatalf("QR code: %v, %v", img, err)
	}
}

// TestRecoveryCodes: codes are distinct, 80 bits in four groups, and their hash ignores case,
// dashes and spaces.
func TestRecoveryCodes(t *testing.T) {
	codes, err := NewRecoveryCodes(RecoveryCodeCount)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range codes {
		if len(c) != 19 || strings.Count(c, "-") != 3 || seen[c] {
			t.Fatalf("code %q (of %v)", c, codes)
		}
		seen[c] = true
	}
	c := codes[0]
	if h := HashRecoveryCode(c); h != HashRecoveryCode(" "+strings.ToUpper(strings.ReplaceAll(c, "-", " "))+" ") || len(h) != 64 {
		t.Fatalf("hash of %q depends on its spelling", c)
	}
	if HashRecoveryCode(codes[0]) == HashRecoveryCode(codes[1]) {
		t.Fatal("two codes hash alike")
	}
	if IsCode(c) {
		t.Fatalf("recovery code %q looks like a TOTP code", c)
	}
}
