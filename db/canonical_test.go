package db

import (
	"context"
	"errors"
	"testing"

	"runsdesk/runtime"
)

func TestCanonicalUsername(t *testing.T) {
	for in, want := range map[string]string{
		"throt2":          "throt2",
		" Throt2 ":        "throt2",
		"THROT2":          "throt2",
		"ｔｈｒｏｔ２":          "throt2", // fullwidth
		"\u212Aate":       "kate",   // KELVIN SIGN
		"t\u030Chrot2":    "ťhrot2", // combining caron composes
		"ťhrot2":          "ťhrot2", // an accent is a different name, never folded away
		"Straße":          "strasse",
		"ada@example.com": "ada@example.com",
	} {
		if got := CanonicalUsername(in); got != want {
			t.Errorf("CanonicalUsername(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestUsernamesHaveOneCanonicalForm checks that creation, uniqueness and sign-in all use
// CanonicalUsername and compare it exactly, never through an accent- or case-insensitive
// collation.
func TestUsernamesHaveOneCanonicalForm(t *testing.T) {
	a, _ := newAccounts(t)
	ctx := context.Background()
	uid := mustCreateUser(t, a, "Throt2", runtime.RoleSupport)
	u, err := a.UserByUID(ctx, uid)
	if err != nil || u.Username != "throt2" {
		t.Fatalf("stored username %q (%v), want the canonical throt2", u.Username, err)
	}
	for _, taken := range []string{"throt2", "THROT2", "ｔｈｒｏｔ２", " throt2"} {
		if _, err := a.CreateUser(ctx, taken, strongPassword, runtime.RoleSupport); !errors.Is(err, ErrUsernameTaken) {
			t.Errorf("CreateUser(%q): %v, want ErrUsernameTaken", taken, err)
		}
	}
	for _, unsafe := range []string{"ťhrot2", "thröt2", "тhrot2", "throt2\u200b", "a b", "a/b"} {
		var pe *PolicyError
		if _, err := a.CreateUser(ctx, unsafe, strongPassword, runtime.RoleSupport); !errors.As(err, &pe) {
			t.Errorf("CreateUser(%q): %v, want a *PolicyError (outside the safe set)", unsafe, err)
		}
	}
	for _, same := range []string{"throt2", "THROT2", "ｔｈｒｏｔ２", " Throt2 "} {
		actor, _, err := a.Authenticate(ctx, same, strongPassword)
		if err != nil || actor.UserUID != uid {
			t.Errorf("Authenticate(%q): uid %d, %v; want throt2 (%d)", same, actor.UserUID, err, uid)
		}
	}
	for _, other := range []string{"ťhrot2", "t\u030Chrot2", "thrót2", "throt2\u200b", "тhrot2"} {
		if actor, _, err := a.Authenticate(ctx, other, strongPassword); !errors.Is(err, ErrBadCredentials) {
			t.Errorf("Authenticate(%q) signed in as %q (%v); want ErrBadCredentials", other, actor.Name, err)
		}
	}
}
