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

// TestSessionReadCarriesItsIndexRow: once a token's request has checked its session index row,
// the token's next session read reads that row in the same statement, and the index check
// uses it without another read: a row ended or removed before the request is seen so.
func TestSessionReadCarriesItsIndexRow(t *testing.T) {
	a, pool := newAccounts(t)
	s := NewSessionStore(pool, DefaultSessionExpirySlack)
	x := NewSessionIndex(pool)
	uid := mustCreateUser(t, a, "ada", runtime.RoleReviewer)
	if err := s.CommitCtx(t.Context(), "tok-ada", []byte("session data"), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := x.Start(t.Context(), runtime.Session{ID: "sid-ada", UserUID: uid, Created: 1, LastSeen: 1, Expires: 1 << 31, IP: "192.0.2.1"}); err != nil {
		t.Fatal(err)
	}
	request := func(step string) (runtime.Session, sessionAccount, error) {
		t.Helper()
		ctx := WithSessionAccount(context.Background())
		if _, ok, err := s.FindCtx(ctx, "tok-ada"); err != nil || !ok {
			t.Fatalf("%s: find = %v, %v", step, ok, err)
		}
		read := *sessionAccountOf(ctx)
		if _, _, err := a.SessionActor(ctx, uid); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		row, err := x.Find(ctx, "sid-ada")
		return row, read, err
	}
	if row, h, err := request("first request"); err != nil || row.IP != "192.0.2.1" || h.indexID != "" {
		t.Fatalf("first request: %+v, %v; index row read with the session: %q, want none", row, err, h.indexID)
	}
	row, h, err := request("second request")
	if err != nil || row.IP != "192.0.2.1" || row.UserUID != uid || h.indexID != "sid-ada" || !h.indexed {
		t.Fatalf("second request: %+v, %v; read with the session: %+v", row, err, h)
	}
	other, _ := x.Find(t.Context(), "sid-ada")
	if err := x.End(t.Context(), uid, "another", other.UID, 5); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("End asked by an unknown session: %v", err)
	}
	if _, err := pool.Exec(`UPDATE tx_runsdesk_session SET ended_at = 5 WHERE session_id = 'sid-ada'`); err != nil {
		t.Fatal(err)
	}
	if row, _, err := request("after the sign-out"); err != nil || row.Ended != 5 {
		t.Fatalf("after the sign-out: %+v, %v; want the ended row", row, err)
	}
	if err := x.Forget(t.Context(), "sid-ada"); err != nil {
		t.Fatal(err)
	}
	if _, h, err := request("after forgetting"); !errors.Is(err, runtime.ErrNotFound) || h.indexID != "sid-ada" || h.indexed {
		t.Fatalf("after forgetting: %v, read with the session %+v; want ErrNotFound from the combined read", err, h)
	}
	if err := s.DeleteCtx(t.Context(), "tok-ada"); err != nil {
		t.Fatal(err)
	}
	if _, known := s.indexIDs.Get("tok-ada"); known {
		t.Fatal("a deleted session's index id is still remembered")
	}
}
