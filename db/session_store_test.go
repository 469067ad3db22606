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
	s := NewSessionStore(pool)
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
