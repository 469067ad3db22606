package db

import (
	"context"
	"errors"
	"testing"
	"time"

	"runsdesk/runtime"
)

// TestSessionReadCarriesItsUser: under WithSessionAccount a token's second request reads its
// user with the session (the row as it was then, used by the re-check without another read),
// a user disabled before a request is refused by it, a re-check of another uid reads that
// user, and without WithSessionAccount both are read on their own.
func TestSessionReadCarriesItsUser(t *testing.T) {
	a, pool := newAccounts(t)
	s := NewSessionStore(pool, DefaultSessionExpirySlack)
	uid := mustCreateUser(t, a, "ada", runtime.RoleReviewer)
	other := mustCreateUser(t, a, "bob", runtime.RoleSupport)
	if err := s.CommitCtx(t.Context(), "tok-ada", []byte("session data"), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	request := func(step string, check int64) (runtime.Actor, *sessionAccount, error) {
		t.Helper()
		ctx := WithSessionAccount(context.Background())
		b, ok, err := s.FindCtx(ctx, "tok-ada")
		if err != nil || !ok || string(b) != "session data" {
			t.Fatalf("%s: find = %q, %v, %v", step, b, ok, err)
		}
		h := sessionAccountOf(ctx)
		read := *h
		actor, _, err := a.SessionActor(ctx, check)
		return actor, &read, err
	}
	if actor, h, err := request("first request", uid); err != nil || actor.Name != "ada" || h.uid != 0 {
		t.Fatalf("first request: %+v, %v; user read with the session: %d, want none", actor, err, h.uid)
	}
	actor, h, err := request("second request", uid)
	if err != nil || actor.Name != "ada" || actor.Role != runtime.RoleReviewer || h.uid != uid || !h.found {
		t.Fatalf("second request: %+v, %v; read with the session: %+v", actor, err, h)
	}

	ctx := WithSessionAccount(context.Background())
	if _, _, err := s.FindCtx(ctx, "tok-ada"); err != nil {
		t.Fatal(err)
	}
	if err := a.DisableUser(t.Context(), uid, nil); err != nil {
		t.Fatal(err)
	}
	if actor, _, err := a.SessionActor(ctx, uid); err != nil || actor.Name != "ada" {
		t.Fatalf("re-check of the user read with the session: %+v, %v; want the row as read with it", actor, err)
	}
	if _, _, err := request("after disabling", uid); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("a user disabled before the request: %v, want ErrNotFound", err)
	}
	if actor, _, err := request("another uid", other); err != nil || actor.Name != "bob" {
		t.Fatalf("re-check of another uid: %+v, %v", actor, err)
	}
	if _, _, err := a.SessionActor(context.Background(), uid); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("without WithSessionAccount: %v, want ErrNotFound", err)
	}
	if err := s.DeleteCtx(t.Context(), "tok-ada"); err != nil {
		t.Fatal(err)
	}
	if _, known := s.users.Get("tok-ada"); known {
		t.Fatal("a deleted session's user is still remembered")
	}
}
