package engine_test

import (
	"context"
	"sync/atomic"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
)

// decisionLookups counts idempotency-key lookups.
type decisionLookups struct {
	runtime.Store
	n atomic.Int64
}

func (d *decisionLookups) FindDecision(ctx context.Context, run int64, key string) (runtime.Decision, error) {
	d.n.Add(1)
	return d.Store.FindDecision(ctx, run, key)
}

// TestIdempotencyKeyLookedUpOnlyOnRefusal: an accepted decision costs no key lookup; the same
// key sent again replays the first outcome, also when the run has paused again since with a
// new digest (the claim's unique decision key refuses it, and the refusal finds the first
// decision); the second pause stays waiting.
func TestIdempotencyKeyLookedUpOnlyOnRefusal(t *testing.T) {
	lookups := &decisionLookups{}
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`)), turn(call("send_mail", `{"again":true}`))},
		withStore(func(s runtime.Store) runtime.Store { lookups.Store = s; return lookups }))
	run := e.startAndRun(admin)
	first, err := e.rt.Approve(e.ctx, admin, run.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: e.view(run.UUID).Pause.Digest, IdempotencyKey: "k"})
	if err != nil || first.Replayed {
		t.Fatalf("approve: %+v, %v", first, err)
	}
	if n := lookups.n.Load(); n != 0 {
		t.Fatalf("an accepted decision looked its key up %d times, want 0", n)
	}
	e.rt.Wait()
	e.wantStatus(run.UUID, runtime.StatusWaitingApproval)
	again, err := e.rt.Approve(e.ctx, admin, run.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: e.view(run.UUID).Pause.Digest, IdempotencyKey: "k"})
	want := first.Decision
	want.UID = again.Decision.UID
	if err != nil || !again.Replayed || again.Decision != want {
		t.Fatalf("same key on the next pause: %+v, %v; want the first outcome replayed", again, err)
	}
	e.rt.Wait()
	e.wantStatus(run.UUID, runtime.StatusWaitingApproval)
	if got := len(e.rec.get("send_mail")); got != 1 {
		t.Fatalf("send_mail ran %d times, want 1 (the first approval only)", got)
	}
}
