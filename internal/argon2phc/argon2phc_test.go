package argon2phc

import (
	"bytes"
	"testing"
)

var testLimits = Limits{MaxMemoryKiB: 1024, MaxTime: 2, MaxThreads: 2}

func TestNewStringParseRoundTrip(t *testing.T) {
	salt := []byte("sixteen byte slt")
	for _, variant := range []string{ID, I} {
		h := New(variant, "the password", salt, 64, 2, 1, 32)
		got, err := Parse(h.String(), testLimits)
		if err != nil {
			t.Fatalf("%s: Parse(String()) = %v", variant, err)
		}
		if got.Variant != variant || got.Memory != 64 || got.Time != 2 || got.Threads != 1 ||
			!bytes.Equal(got.Salt, salt) || !bytes.Equal(got.Key, h.Key) {
			t.Errorf("%s: round trip gave %+v, want %+v", variant, got, h)
		}
		if !got.Matches("the password") || got.Matches("the password!") {
			t.Errorf("%s: Matches does not tell the right password from a wrong one", variant)
		}
	}
	if bytes.Equal(New(ID, "p", salt, 64, 1, 1, 32).Key, New(I, "p", salt, 64, 1, 1, 32).Key) {
		t.Error("argon2i and argon2id derived the same key")
	}
}

func TestParseRefusesWhatIsOutsideTheLimits(t *testing.T) {
	for _, phc := range []string{
		"$argon2id$v=19$m=2048,t=1,p=1$c2FsdHNhbHRzYWx0$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5",
		"$argon2id$v=19$m=64,t=3,p=1$c2FsdHNhbHRzYWx0$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5",
		"$argon2i$v=19$m=64,t=1,p=3$c2FsdHNhbHRzYWx0$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5",
		"$argon2d$v=19$m=64,t=1,p=1$c2FsdHNhbHRzYWx0$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5",
		"$argon2id$v=19$m=64,t=1,p=1$c2FsdHNhbHRzYWx0$a2V5",
	} {
		if _, err := Parse(phc, testLimits); err == nil {
			t.Errorf("Parse(%q) accepted", phc)
		}
	}
}
