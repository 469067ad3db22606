package db

import (
	"errors"
	"net/url"
	"reflect"
	"sync"
	"testing"

	"runsdesk/runtime"
)

func draftOf(r runtime.Run, user int64, values url.Values) runtime.Draft {
	return runtime.Draft{Run: r.UID, User: user, Digest: "d1", Values: values, SuspendedAt: r.SuspendedAt, UpdatedAt: now1}
}

func draftCount(t *testing.T, s *Store, run int64) int {
	t.Helper()
	var n int
	if err := s.db.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM tx_runsdesk_draft WHERE run = ?`, run).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestDraftsSaveLoadReplaceAndIsolation(t *testing.T) {
	s, _ := newStore(t)
	r := waitingRun(t, s, runtime.StatusWaitingInput, t0, "ask")
	typed := url.Values{"input/city": {"x"}, "input/tags": {"a", "b", ""}}
	if err := s.SaveDraft(t.Context(), draftOf(r, 7, typed)); err != nil {
		t.Fatalf("SaveDraft: %v", err)
	}
	got, err := s.LoadDraft(t.Context(), r.UID, 7, "d1")
	if err != nil || !reflect.DeepEqual(got.Values, typed) || got.UpdatedAt != now1 {
		t.Fatalf("LoadDraft = %+v, %v; want the values as typed", got, err)
	}
	for _, c := range []struct {
		user   int64
		digest string
	}{{8, "d1"}, {7, "d2"}} {
		if _, err := s.LoadDraft(t.Context(), r.UID, c.user, c.digest); !errors.Is(err, runtime.ErrNotFound) {
			t.Errorf("LoadDraft(user %d, digest %s): %v, want ErrNotFound (drafts are per person and pause)", c.user, c.digest, err)
		}
	}
	again := url.Values{"input/city": {"Bern"}}
	if err := s.SaveDraft(t.Context(), draftOf(r, 7, again)); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.LoadDraft(t.Context(), r.UID, 7, "d1"); !reflect.DeepEqual(got.Values, again) || draftCount(t, s, r.UID) != 1 {
		t.Errorf("a second save: %v (%d rows), want it to replace the first", got.Values, draftCount(t, s, r.UID))
	}
}

func TestDraftSaveRefusedOutsideItsPause(t *testing.T) {
	s, _ := newStore(t)
	approval := waitingRun(t, s, runtime.StatusWaitingApproval, t0, "mail")
	wantGuard(t, s.SaveDraft(t.Context(), draftOf(approval, 7, url.Values{"a": {"1"}})))
	input := waitingRun(t, s, runtime.StatusWaitingInput, t0, "ask")
	later := draftOf(input, 7, url.Values{"a": {"1"}})
	later.SuspendedAt = t0 - 5
	wantGuard(t, s.SaveDraft(t.Context(), later))
	if n := draftCount(t, s, approval.UID) + draftCount(t, s, input.UID); n != 0 {
		t.Errorf("%d drafts stored by refused saves", n)
	}
}

func TestDraftsRemovedWhenThePauseEnds(t *testing.T) {
	s, _ := newStore(t)
	claimed := waitingRun(t, s, runtime.StatusWaitingInput, t0, "ask")
	cancelled := waitingRun(t, s, runtime.StatusWaitingInput, t0, "ask")
	for _, r := range []runtime.Run{claimed, cancelled} {
		for _, user := range []int64{7, 8} {
			if err := s.SaveDraft(t.Context(), draftOf(r, user, url.Values{"a": {"1"}})); err != nil {
				t.Fatal(err)
			}
		}
	}
	c := resumeClaim(claimed, "resume:h:1", "k1")
	c.Decision.Kind = "input"
	if _, _, err := s.Commit(t.Context(), c); err != nil {
		t.Fatalf("ClaimForResume: %v", err)
	}
	if err := s.Cancel(t.Context(), cancelled.UID, now1); err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	for name, r := range map[string]runtime.Run{"input claim": claimed, "cancel": cancelled} {
		if n := draftCount(t, s, r.UID); n != 0 {
			t.Errorf("after the %s: %d drafts left, want none", name, n)
		}
	}
	wantGuard(t, s.Cancel(t.Context(), cancelled.UID, now1))
}

// TestDraftSaveRacingTheClaim: saves racing the input claim never leave a draft behind: each
// is refused, or removed by the claim.
func TestDraftSaveRacingTheClaim(t *testing.T) {
	s, _ := newStore(t)
	for round := 0; round < 5; round++ {
		r := waitingRun(t, s, runtime.StatusWaitingInput, t0, "ask")
		var wg sync.WaitGroup
		start := make(chan struct{})
		claims := make(chan error, 1)
		for user := int64(1); user <= 6; user++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				err := s.SaveDraft(t.Context(), draftOf(r, user, url.Values{"a": {"1"}}))
				if err != nil && !errors.Is(err, runtime.ErrGuard) {
					t.Errorf("SaveDraft: %v", err)
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			c := resumeClaim(r, "resume:h:1", "k1")
			c.Decision.Kind = "input"
			_, _, err := s.Commit(t.Context(), c)
			claims <- err
		}()
		close(start)
		wg.Wait()
		if err := <-claims; err != nil {
			t.Fatalf("ClaimForResume: %v", err)
		}
		if n := draftCount(t, s, r.UID); n != 0 {
			t.Fatalf("round %d: %d drafts outlived the claim", round, n)
		}
	}
}

// TestDraftSavedAfterTheDecisionsRead: a decision reads the pause (no drafts yet), a draft is
// saved, then the batched claim runs: the claim read has_drafts = 0 and removes none, so its
// guard must miss and the claim fall back to the one that removes them; the claim succeeds
// and no draft is left. Racing saves after the read leave none either. A pause read with no
// draft is claimed in one batch that leaves the drafts table untouched.
func TestDraftSavedAfterTheDecisionsRead(t *testing.T) {
	s, _ := newStore(t)
	claim := func(r runtime.Run) error {
		t.Helper()
		c := resumeClaim(r, "resume:h:1", "k1")
		c.Decision.Kind = "input"
		c.Configuration = &runtime.Configuration{}
		_, _, err := s.Commit(t.Context(), c)
		return err
	}
	read := func(r runtime.Run) runtime.Run {
		t.Helper()
		got, err := s.FindByUUID(t.Context(), r.UUID)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}

	r := waitingRun(t, s, runtime.StatusWaitingInput, t0, "ask")
	pause := read(r)
	if err := s.SaveDraft(t.Context(), draftOf(r, 7, url.Values{"a": {"1"}})); err != nil {
		t.Fatal(err)
	}
	if err := claim(pause); err != nil {
		t.Fatalf("claim after a draft saved since the read: %v", err)
	}
	if n := draftCount(t, s, r.UID); n != 0 {
		t.Fatalf("a draft saved after the decision's read outlived the claim: %d left", n)
	}

	for round := 0; round < 5; round++ {
		r := waitingRun(t, s, runtime.StatusWaitingInput, t0, "ask")
		pause := read(r)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for user := int64(1); user <= 6; user++ {
			wg.Go(func() {
				<-start
				if err := s.SaveDraft(t.Context(), draftOf(r, user, url.Values{"a": {"1"}})); err != nil && !errors.Is(err, runtime.ErrGuard) {
					t.Errorf("SaveDraft: %v", err)
				}
			})
		}
		var claimErr error
		wg.Go(func() {
			<-start
			claimErr = claim(pause)
		})
		close(start)
		wg.Wait()
		if claimErr != nil {
			t.Fatalf("round %d: ClaimForResume: %v", round, claimErr)
		}
		if n := draftCount(t, s, r.UID); n != 0 {
			t.Fatalf("round %d: %d drafts outlived the claim", round, n)
		}
	}

	r = waitingRun(t, s, runtime.StatusWaitingInput, t0, "ask")
	if err := claim(read(r)); err != nil {
		t.Fatal(err)
	}
	if got := mustFind(t, s, r.UID); got.Status != runtime.StatusRunning {
		t.Fatalf("claim of a pause without drafts: status %s", got.Status)
	}
}
