package db

import (
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"runsdesk/runtime"
)

// TestClaimCountsRuleUseGuarded: a claim that uses a standing approval counts one use with
// it, and one whose rule is revoked, past until_at or used up is refused whole
// (ErrRuleNotInForce): the run still waits, with no decision, event or audit row.
func TestClaimCountsRuleUseGuarded(t *testing.T) {
	s, _ := newStore(t)
	rules := []runtime.StandingApproval{
		{Name: "fine", Tool: "refund", When: json.RawMessage(`{}`), MaxUses: 1},
		{Name: "expired", Tool: "refund", When: json.RawMessage(`{}`), Until: now1},
		{Name: "revoked", Tool: "refund", When: json.RawMessage(`{}`)},
	}
	if err := s.WriteStandingApprovals(t.Context(), rules, nil, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteStandingApprovals(t.Context(), nil, []string{"revoked"}, 1); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"expired", "revoked"} {
		r := waitingRun(t, s, runtime.StatusWaitingApproval, t0+1, "refund")
		c := resumeClaim(r, "resume:"+name, "k-"+name)
		c.RuleUses = []string{name}
		if _, _, err := s.Commit(t.Context(), c); !errors.Is(err, runtime.ErrRuleNotInForce) {
			t.Fatalf("claim with rule %s: %v, want ErrRuleNotInForce", name, err)
		}
		if got := mustFind(t, s, r.UID); got.Status != runtime.StatusWaitingApproval {
			t.Fatalf("run after the refused claim with %s: %s", name, got.Status)
		}
		if n := countRows(t, s, `SELECT COUNT(*) FROM tx_runsdesk_decision WHERE run = ?`, r.UID); n != 0 {
			t.Fatalf("decisions after the refused claim with %s: %d", name, n)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	start := make(chan struct{})
	for i := range errs {
		r := waitingRun(t, s, runtime.StatusWaitingApproval, t0+1, "refund")
		c := resumeClaim(r, "resume:fine", "k")
		c.RuleUses = []string{"fine"}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, _, errs[i] = s.Commit(t.Context(), c)
		}()
	}
	close(start)
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, runtime.ErrRuleNotInForce):
			t.Fatalf("claim: %v", err)
		}
	}
	uses, err := s.StandingApprovalUses(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if won != 1 || uses["fine"] != 1 || uses["expired"] != 0 || uses["revoked"] != 0 {
		t.Fatalf("claims won %d, uses %v; want 1 and fine=1", won, uses)
	}
}
