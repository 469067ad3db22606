package db

import (
	"context"
	"testing"
	"time"
)

// TestDeleteExpiredSessions removes expired sessions and keeps live ones.
func TestDeleteExpiredSessions(t *testing.T) {
	ctx := context.Background()
	_, pool := newStore(t)
	if _, err := pool.ExecContext(ctx, `INSERT INTO sessions (token, data, expiry) VALUES
		('old', '', UTC_TIMESTAMP(6) - INTERVAL 1 HOUR), ('live', '', UTC_TIMESTAMP(6) + INTERVAL 1 HOUR)`); err != nil {
		t.Fatal(err)
	}
	n, err := DeleteExpiredSessions(ctx, pool)
	if err != nil || n != 1 {
		t.Fatalf("deleted %d, %v; want 1", n, err)
	}
	var left string
	if err := pool.QueryRowContext(ctx, `SELECT token FROM sessions`).Scan(&left); err != nil || left != "live" {
		t.Fatalf("left %q, %v", left, err)
	}
}

// TestSessionStore: commit, find (expired sessions are not found), delete, and a deadline
// that has passed fails fast instead of waiting for the database.
func TestSessionStore(t *testing.T) {
	ctx := context.Background()
	_, pool := newStore(t)
	s := NewSessionStore(pool, DefaultSessionExpirySlack)
	if err := s.CommitCtx(ctx, "tok", []byte("data"), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit("old", []byte("x"), time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if b, ok, err := s.Find("tok"); err != nil || !ok || string(b) != "data" {
		t.Fatalf("find = %q %v %v", b, ok, err)
	}
	if _, ok, err := s.FindCtx(ctx, "old"); err != nil || ok {
		t.Fatalf("expired session found: %v %v", ok, err)
	}
	if err := s.CommitCtx(ctx, "tok", []byte("new"), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if b, _, _ := s.FindCtx(ctx, "tok"); string(b) != "new" {
		t.Fatalf("commit did not replace the data: %q", b)
	}
	if err := s.Delete("tok"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.FindCtx(ctx, "tok"); ok {
		t.Fatal("deleted session found")
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := s.FindCtx(done, "tok"); err == nil {
		t.Fatal("find with a cancelled context succeeded")
	}
}

// TestSessionCommitSkipsUnchanged: re-committing the same data with an expiry that moved less
// than the slack writes nothing; more than the slack, or other data, is written.
func TestSessionCommitSkipsUnchanged(t *testing.T) {
	ctx := t.Context()
	_, pool := newStore(t)
	s := NewSessionStore(pool, DefaultSessionExpirySlack)
	first := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)
	stored := func() (string, time.Time) {
		t.Helper()
		var data string
		var expiry time.Time
		if err := pool.QueryRowContext(ctx, `SELECT data, expiry FROM sessions WHERE token = 'tok'`).Scan(&data, &expiry); err != nil {
			t.Fatal(err)
		}
		return data, expiry.UTC()
	}
	commit := func(data string, expiry time.Time) {
		t.Helper()
		if err := s.CommitCtx(ctx, "tok", []byte(data), expiry); err != nil {
			t.Fatal(err)
		}
	}
	commit("d", first)
	commit("d", first.Add(DefaultSessionExpirySlack-time.Second))
	if _, got := stored(); !got.Equal(first) {
		t.Fatalf("unchanged session within the slack: expiry %v, want it left at %v", got, first)
	}
	later := first.Add(DefaultSessionExpirySlack + time.Second)
	commit("d", later)
	if _, got := stored(); !got.Equal(later) {
		t.Fatalf("unchanged session beyond the slack: expiry %v, want %v", got, later)
	}
	commit("e", later.Add(time.Second))
	if data, got := stored(); data != "e" || !got.Equal(later.Add(time.Second)) {
		t.Fatalf("changed session: %q %v, want %q %v", data, got, "e", later.Add(time.Second))
	}
	earlier := first.Add(-time.Minute)
	commit("e", earlier)
	if _, got := stored(); !got.Equal(earlier) {
		t.Fatalf("an earlier expiry (the absolute lifetime) must be stored: %v, want %v", got, earlier)
	}
}

// TestSessionCommitAfterFindSendsNothing: a commit of the data the same request found, with
// an expiry within the slack of the stored one, sends no statement; other data, an expiry
// beyond the slack, or a commit without a find (a new session) is sent. A session another
// request deleted meanwhile is not brought back by an unchanged commit.
func TestSessionCommitAfterFindSendsNothing(t *testing.T) {
	ctx := t.Context()
	dsn := newMigrated(t)
	rec := &recorder{}
	s := NewSessionStore(openRecording(t, dsn, rec), DefaultSessionExpirySlack)
	first := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)
	sent := func(step string, want int, do func() error) {
		t.Helper()
		rec.reset()
		if err := do(); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if got := len(rec.take()); got != want {
			t.Fatalf("%s: sent %d statements, want %d", step, got, want)
		}
	}
	find := func() error { _, _, err := s.FindCtx(ctx, "tok"); return err }
	commit := func(data string, expiry time.Time) func() error {
		return func() error { return s.CommitCtx(ctx, "tok", []byte(data), expiry) }
	}
	sent("new session", 1, commit("d", first))
	sent("find", 1, find)
	sent("unchanged after find", 0, commit("d", first.Add(DefaultSessionExpirySlack-time.Second)))
	sent("unchanged without a find", 1, commit("d", first))
	sent("find", 1, find)
	sent("beyond the slack", 1, commit("d", first.Add(DefaultSessionExpirySlack+time.Second)))
	sent("find", 1, find)
	sent("other data", 1, commit("e", first.Add(DefaultSessionExpirySlack+time.Second)))
	sent("find", 1, find)
	other := NewSessionStore(openRecording(t, dsn, &recorder{}), DefaultSessionExpirySlack)
	if err := other.DeleteCtx(ctx, "tok"); err != nil {
		t.Fatal(err)
	}
	sent("unchanged after another request's delete", 0, commit("e", first.Add(DefaultSessionExpirySlack+time.Second)))
	if _, ok, err := s.FindCtx(ctx, "tok"); err != nil || ok {
		t.Fatalf("deleted session: found %v, %v; want gone", ok, err)
	}
}
