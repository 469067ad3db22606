package seal

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func ring(t *testing.T, ids ...string) *Keyring {
	t.Helper()
	var lines []string
	for _, id := range ids {
		l, err := Generate(id)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, l)
	}
	k, err := Parse(strings.Join(lines, ","))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

var here = Place{Table: "tx_nrllm_agentrun", Column: "suspended_state", RunUUID: "0b9f6c8e-1111-4c1d-9a55-3c2a9e1f0001"}

func TestRoundTripFreshNonce(t *testing.T) {
	k := ring(t, "k1")
	a, err := k.Seal(`{"messages":[]}`, here)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := k.Seal(`{"messages":[]}`, here)
	if a == b {
		t.Fatal("same plaintext sealed twice gave the same bytes")
	}
	if !strings.HasPrefix(a, Prefix+"k1:") || strings.Contains(a, "messages") {
		t.Fatalf("envelope %q: want the prefix and key id, no plaintext", a)
	}
	for _, s := range []string{a, b} {
		got, err := k.Open(s, here)
		if err != nil || got != `{"messages":[]}` {
			t.Fatalf("Open = %q, %v", got, err)
		}
	}
}

func TestEmptyStaysEmptyAndCleartextVerbatim(t *testing.T) {
	k := ring(t, "k1")
	if s, err := k.Seal("", here); err != nil || s != "" {
		t.Fatalf("Seal(\"\") = %q, %v", s, err)
	}
	for _, ring := range []*Keyring{k, nil} {
		for _, legacy := range []string{"", `{"a":1}`, "not json at all"} {
			if got, err := ring.Open(legacy, here); err != nil || got != legacy {
				t.Fatalf("Open(%q) = %q, %v: want it verbatim", legacy, got, err)
			}
		}
	}
	var none *Keyring
	if s, _ := none.Seal("x", here); s != "x" {
		t.Fatalf("a nil keyring sealed: %q", s)
	}
}

func TestRefusals(t *testing.T) {
	k := ring(t, "k1")
	sealed, _ := k.Seal(`{"s":1}`, here)
	body := strings.TrimPrefix(sealed, Prefix+"k1:")
	flip := []byte(body)
	flip[len(flip)/2] ^= 1
	if flip[len(flip)/2] == body[len(body)/2] {
		t.Fatal("no flip")
	}
	cases := map[string]struct {
		ring   *Keyring
		stored string
		place  Place
	}{
		"column swapped": {k, sealed, Place{Table: here.Table, Column: "queued_request", RunUUID: here.RunUUID}},
		"other run":      {k, sealed, Place{Table: here.Table, Column: here.Column, RunUUID: "0b9f6c8e-1111-4c1d-9a55-3c2a9e1f0002"}},
		"other table":    {k, sealed, Place{Table: "tx_runsdesk_draft", Column: here.Column, RunUUID: here.RunUUID}},
		"other person":   {k, mustSealFor(t, k, Place{Table: here.Table, Column: here.Column, RunUUID: here.RunUUID, Person: 7}), Place{Table: here.Table, Column: here.Column, RunUUID: here.RunUUID, Person: 8}},
		"tampered":       {k, Prefix + "k1:" + string(flip), here},
		"truncated":      {k, sealed[:len(sealed)-4], here},
		"no body":        {k, Prefix + "k1:", here},
		"no key id":      {k, Prefix + body, here},
		"bad base64":     {k, Prefix + "k1:***", here},
		"unknown key":    {ring(t, "k2"), sealed, here},
		"no keys":        {nil, sealed, here},
	}
	for name, c := range cases {
		got, err := c.ring.Open(c.stored, c.place)
		if !errors.Is(err, ErrSealed) || got != "" {
			t.Errorf("%s: Open = %q, %v; want ErrSealed", name, got, err)
		}
		if err != nil && strings.Contains(err.Error(), `"s"`) {
			t.Errorf("%s: error %q shows content", name, err)
		}
	}
}

func mustSealFor(t *testing.T, k *Keyring, p Place) string {
	t.Helper()
	v, err := k.Seal(`{"s":1}`, p)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestFirstKeySealsAllOpen(t *testing.T) {
	oldLine, _ := Generate("old")
	newLine, _ := Generate("new")
	old, err := Parse(oldLine)
	if err != nil {
		t.Fatal(err)
	}
	sealedOld, _ := old.Seal("v", here)
	both, err := Parse(newLine + "\n# comment\n\n" + oldLine)
	if err != nil {
		t.Fatal(err)
	}
	if both.Active() != "new" {
		t.Fatalf("active %q, want the first key", both.Active())
	}
	if got, err := both.Open(sealedOld, here); err != nil || got != "v" {
		t.Fatalf("old value under the rotated ring: %q, %v", got, err)
	}
	if both.Current(sealedOld) || !old.Current(sealedOld) {
		t.Fatal("Current: a value sealed with a non-active key must need re-sealing")
	}
	sealedNew, _ := both.Seal("v", here)
	if KeyID(sealedNew) != "new" || !both.Current(sealedNew) || both.Current("legacy") {
		t.Fatalf("KeyID/Current wrong for %q", sealedNew)
	}
}

func TestParseRefusalsNameTheEntryNotTheKey(t *testing.T) {
	good, _ := Generate("a")
	secret := strings.TrimPrefix(good, "a:")
	for spec, want := range map[string]string{
		"":                             "no key",
		"nocolon":                      "key 1",
		"bad id!:" + secret:            "key 1",
		"a:" + secret + ",a:" + secret: `"a" is listed twice`,
		"b:" + secret[:20]:             `key "b"`,
		"c:not-base64!!":               `key "c"`,
	} {
		_, err := Parse(spec)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want %q", spec, err, want)
		}
		if err != nil && len(secret) > 0 && strings.Contains(err.Error(), secret[:20]) {
			t.Errorf("error shows key material: %v", err)
		}
	}
}

func TestFromEnv(t *testing.T) {
	line, _ := Generate("f1")
	path := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(path, []byte("# runsdesk keys\n"+line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"RUNSDESK_KEYS_FILE": path}
	k, err := FromEnv(func(s string) string { return env[s] })
	if err != nil || k.Active() != "f1" {
		t.Fatalf("from file: %v, %v", k, err)
	}
	env["RUNSDESK_KEYS"] = strings.Replace(line, "f1", "e1", 1)
	if k, err = FromEnv(func(s string) string { return env[s] }); err != nil || k.Active() != "e1" {
		t.Fatalf("RUNSDESK_KEYS wins: %v, %v", k, err)
	}
	if k, err = FromEnv(func(string) string { return "" }); err != nil || k != nil {
		t.Fatalf("nothing configured: %v, %v; want a nil ring", k, err)
	}
	env = map[string]string{"RUNSDESK_KEYS_FILE": filepath.Join(t.TempDir(), "missing")}
	if _, err = FromEnv(func(s string) string { return env[s] }); err == nil {
		t.Fatal("a missing key file must be an error")
	}
}

func FuzzOpen(f *testing.F) {
	k, _ := Parse(mustLine(f, "z"))
	sealed, _ := k.Seal("seed", here)
	for _, s := range []string{"", "{}", sealed, Prefix, Prefix + "z:", Prefix + "z:AAAA"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := k.Open(s, here)
		if !strings.HasPrefix(s, Prefix) && (err != nil || got != s) {
			t.Fatalf("cleartext %q not verbatim", s)
		}
		if err != nil && !errors.Is(err, ErrSealed) {
			t.Fatalf("error %v is not ErrSealed", err)
		}
		if err == nil && strings.HasPrefix(s, Prefix) {
			again, err := k.Seal(got, here)
			if err != nil {
				t.Fatal(err)
			}
			if back, err := k.Open(again, here); err != nil || back != got {
				t.Fatalf("re-seal round trip: %q, %v", back, err)
			}
		}
	})
}

func mustLine(f *testing.F, id string) string {
	l, err := Generate(id)
	if err != nil {
		f.Fatal(err)
	}
	return l
}
