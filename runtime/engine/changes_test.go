package engine_test

import (
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/quorum"
)

// TestRequestChangesTellsTheModel: a request for changes runs none of the pending calls; the
// model's tool result for each says who asked for what and to revise the call; it is stored
// as a decision of kind request_changes with its text as the reason and recorded as a
// request_changes event; on a 2-of-N turn it decides at once, like a denial; an empty request is
// invalid_request and changes nothing.
func TestRequestChangesTellsTheModel(t *testing.T) {
	ada := runtime.Actor{UserUID: 3, Name: "rita", DisplayName: "Ada", Role: runtime.RoleReviewer}
	m := newRecordingModel(t, toolCall("send_mail"), textAnswer("revised"))
	e := newEnv(t, nil)
	e.useModel(m.url)
	e.cfg.Quorum = quorum.Policy{Required: 2}
	e.saveConfig()
	run := e.startAndRun(admin)
	digest := e.view(run.UUID).Pause.Digest
	_, err := e.rt.RequestChanges(e.ctx, ada, run.UUID, runtime.ChangeRequest{TurnDigest: digest})
	wantCode(t, err, runtime.CodeInvalidRequest)
	e.wantStatus(run.UUID, runtime.StatusWaitingApproval)
	out, err := e.rt.RequestChanges(e.ctx, ada, run.UUID, runtime.ChangeRequest{TurnDigest: digest, Text: "use the customer's second address", IdempotencyKey: "c-1"})
	if err != nil || out.Decision.Kind != runtime.DecisionRequestChanges || out.Decision.Approved || !out.Resumed {
		t.Fatalf("request changes: %+v, %v", out, err)
	}
	e.rt.Wait()
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	if n := len(e.rec.get("send_mail")); n != 0 {
		t.Fatalf("send_mail ran %d times after a request for changes", n)
	}
	sent := m.request(1)
	want := "changes requested by Ada (reviewer): use the customer's second address — revise the call and try again"
	if got := sent[len(sent)-1]; got.Role != "tool" || got.Content != want {
		t.Fatalf("the model was told %q (%s), want %q", got.Content, got.Role, want)
	}
	if p := e.eventPayload(run.UUID, runtime.DecisionRequestChanges); p["changesRequested"] != true {
		t.Errorf("request_changes event %v", p)
	}
	dec, err := e.store.FindDecision(e.ctx, run.UID, "c-1")
	if err != nil || dec.Kind != runtime.DecisionRequestChanges || dec.Approved {
		t.Errorf("stored decision %+v, %v", dec, err)
	}
	var reason string
	if err := e.sql.QueryRowContext(e.ctx, `SELECT reason FROM tx_runsdesk_decision WHERE run = ?`, run.UID).Scan(&reason); err != nil || reason != "use the customer's second address" {
		t.Errorf("stored reason %q, %v", reason, err)
	}
	if again, err := e.rt.RequestChanges(e.ctx, ada, run.UUID, runtime.ChangeRequest{TurnDigest: digest, Text: "x", IdempotencyKey: "c-1"}); err != nil || !again.Replayed {
		t.Errorf("replay: %+v, %v", again, err)
	}
}
