package db

import (
	"context"
	"reflect"
	"testing"

	"errors"

	"runsdesk/runtime"
)

func TestUsernames(t *testing.T) {
	a, pool := newAccounts(t)
	ctx := context.Background()
	ada := mustCreateUser(t, a, "ada", runtime.RoleAdmin)
	rita := mustCreateUser(t, a, "rita", runtime.RoleReviewer)
	gone := mustCreateUser(t, a, "gone", runtime.RoleSupport)
	if _, err := pool.ExecContext(ctx, `UPDATE be_users SET deleted = 1 WHERE uid = ?`, gone); err != nil {
		t.Fatal(err)
	}
	got, err := a.Usernames(ctx, []int64{rita, 0, -1, ada, rita, gone, 987654})
	if err != nil {
		t.Fatalf("Usernames: %v", err)
	}
	want := map[int64]string{ada: "ada", rita: "rita", gone: "gone"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Usernames = %v, want %v", got, want)
	}
	if got, err := a.Usernames(ctx, nil); err != nil || len(got) != 0 {
		t.Errorf("Usernames(nil) = %v, %v; want empty, nil", got, err)
	}
	many := make([]int64, 450)
	for i := range many {
		many[i] = int64(i + 1)
	}
	if got, err := a.Usernames(ctx, many); err != nil || len(got) != 3 {
		t.Errorf("Usernames(450 uids) = %d names, %v; want 3, nil", len(got), err)
	}
	pool.Close()
	if _, err := a.Usernames(ctx, []int64{ada}); err == nil {
		t.Error("Usernames on a closed pool: nil error, want the store failure")
	}
}

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
