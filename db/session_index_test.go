package db

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"runsdesk/runtime"
)

// TestSessionIndex: a started session is found by its id; Touch writes once per guard and
// never an ended row; List shows a person's open, unexpired sessions of their epoch, the most
// recently seen first; End ends only the person's own open session; EndOthers keeps the one
// named; Forget removes a row; the janitor's delete removes expired rows only.
func TestSessionIndex(t *testing.T) {
	_, pool := newStore(t)
	ctx := t.Context()
	x := NewSessionIndex(pool)
	const now = int64(1_900_000_000)
	start := func(id string, user, epoch, seen int64) {
		t.Helper()
		if err := x.Start(ctx, runtime.Session{ID: id, UserUID: user, Epoch: epoch, Created: now - 600, LastSeen: seen,
			Expires: seen + 1800, IP: "192.0.2.7", UserAgent: "Firefox ✓"}); err != nil {
			t.Fatal(err)
		}
	}
	start("a-laptop", 1, 3, now-300)
	start("a-phone", 1, 3, now-60)
	start("a-old-epoch", 1, 2, now-60)
	start("a-expired", 1, 3, now-4000)
	start("b-laptop", 2, 0, now-10)

	s, err := x.Find(ctx, "a-laptop")
	if err != nil || s.UserUID != 1 || s.Epoch != 3 || s.Created != now-600 || s.IP != "192.0.2.7" || s.UserAgent != "Firefox ✓" || s.Ended != 0 {
		t.Fatalf("Find = %+v, %v", s, err)
	}
	for _, id := range []string{"", "nobody"} {
		if _, err := x.Find(ctx, id); !errors.Is(err, runtime.ErrNotFound) {
			t.Errorf("Find(%q) = %v, want ErrNotFound", id, err)
		}
	}
	if err := x.Touch(ctx, "a-laptop", now, now-59, "198.51.100.1", now+1800); err != nil {
		t.Fatal(err)
	}
	if err := x.Touch(ctx, "a-laptop", now+5, now+5-59, "203.0.113.9", now+1805); err != nil {
		t.Fatal(err)
	}
	if s, _ := x.Find(ctx, "a-laptop"); s.LastSeen != now || s.IP != "198.51.100.1" || s.Expires != now+1800 {
		t.Errorf("after two touches within a minute: %+v, want the first one's", s)
	}

	ids := func(user, epoch int64) []string {
		t.Helper()
		list, err := x.List(ctx, user, epoch, now)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range list {
			out = append(out, s.ID)
		}
		return out
	}
	if got := ids(1, 3); len(got) != 2 || got[0] != "a-laptop" || got[1] != "a-phone" {
		t.Errorf("List(1, epoch 3) = %v, want [a-laptop a-phone]", got)
	}

	phone, _ := x.Find(ctx, "a-phone")
	if err := x.End(ctx, 2, "b-laptop", phone.UID, now); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("End of another person's session = %v, want ErrNotFound", err)
	}
	if err := x.End(ctx, 1, "a-phone", phone.UID, now); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("End of the asking session itself = %v, want ErrNotFound", err)
	}
	if err := x.End(ctx, 1, "a-laptop", phone.UID, now); err != nil {
		t.Fatal(err)
	}
	if err := x.End(ctx, 1, "a-laptop", phone.UID, now); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("End of an ended session = %v, want ErrNotFound", err)
	}
	laptop, _ := x.Find(ctx, "a-laptop")
	if err := x.End(ctx, 1, "a-phone", laptop.UID, now); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("End asked by an ended session = %v, want ErrNotFound", err)
	}
	if n, err := x.EndOthers(ctx, 1, "a-phone", now); !errors.Is(err, runtime.ErrNotFound) || n != 0 {
		t.Errorf("EndOthers asked by an ended session = %d, %v, want ErrNotFound", n, err)
	}
	if err := x.Touch(ctx, "a-phone", now+120, now+61, "198.51.100.1", now+2000); err != nil {
		t.Fatal(err)
	}
	if s, _ := x.Find(ctx, "a-phone"); s.Ended != now || s.LastSeen != now-60 {
		t.Errorf("ended session after a touch: %+v, want ended and untouched", s)
	}
	if got := ids(1, 3); len(got) != 1 || got[0] != "a-laptop" {
		t.Errorf("List after End = %v, want [a-laptop]", got)
	}

	start("a-tablet", 1, 3, now)
	if n, err := x.EndOthers(ctx, 1, "a-tablet", now); err != nil || n != 3 {
		t.Errorf("EndOthers = %d, %v, want 3 (laptop, old epoch, expired)", n, err)
	}
	if got := ids(1, 3); len(got) != 1 || got[0] != "a-tablet" {
		t.Errorf("List after EndOthers = %v, want [a-tablet]", got)
	}
	if got := ids(2, 0); len(got) != 1 {
		t.Errorf("another person's sessions after EndOthers: %v", got)
	}

	if err := x.Forget(ctx, "a-tablet"); err != nil {
		t.Fatal(err)
	}
	if _, err := x.Find(ctx, "a-tablet"); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("Find after Forget = %v, want ErrNotFound", err)
	}

	if _, err := pool.Exec(`UPDATE tx_runsdesk_session SET expires_at = UNIX_TIMESTAMP() - 1 WHERE session_id = 'a-laptop'`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(`UPDATE tx_runsdesk_session SET expires_at = UNIX_TIMESTAMP() + 600 WHERE session_id <> 'a-laptop'`); err != nil {
		t.Fatal(err)
	}
	if n, err := DeleteExpiredSessionIndex(ctx, pool); err != nil || n != 1 {
		t.Errorf("DeleteExpiredSessionIndex = %d, %v, want 1", n, err)
	}
	if _, err := x.Find(ctx, "a-laptop"); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("expired row after the janitor: %v, want gone", err)
	}
}

// TestEndOthersConcurrently: sessions of one person each signing out all the others at once
// take turns; exactly one wins and stays open, every other one is ended.
func TestEndOthersConcurrently(t *testing.T) {
	_, pool := newStore(t)
	ctx := t.Context()
	x := NewSessionIndex(pool)
	const n = 12
	for i := range n {
		if err := x.Start(ctx, runtime.Session{ID: fmt.Sprintf("s%d", i), UserUID: 5, Created: 1, LastSeen: 1, Expires: 1 << 31}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			_, errs[i] = x.EndOthers(ctx, 5, fmt.Sprintf("s%d", i), 2)
		})
	}
	close(start)
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, runtime.ErrNotFound):
			t.Errorf("session %d: %v", i, err)
		}
	}
	open, err := x.List(ctx, 5, 0, 0)
	if won != 1 || err != nil || len(open) != 1 {
		t.Errorf("%d winners, %d sessions open (%v), want one of each", won, len(open), err)
	}
}
