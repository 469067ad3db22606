package api_test

import (
	"net/http"
	"strings"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/quorum"
)

// TestApprovalVote: under approvals_required: 2 with allow_automatic_vote, a token's approval
// is 202 {votes: 1, required: 2, resumed: false} and the run keeps waiting; a second token (the
// same automatic voter) is 409 already_voted; the first key replays its outcome.
func TestApprovalVote(t *testing.T) {
	w := newWorld(t)
	cfg, err := w.store.ConfigurationByIdentifier(w.ctx, "approve")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Quorum = quorum.Policy{Required: 2, AutomaticVote: true}
	if _, err := w.store.UpsertConfiguration(w.ctx, cfg); err != nil {
		t.Fatal(err)
	}
	id := w.runIn("approve")
	path := "/api/v1/runs/" + id + "/approval"
	type answer struct {
		Approved bool `json:"approved"`
		Replayed bool `json:"replayed"`
		Votes    int  `json:"votes"`
		Required int  `json:"required"`
		Resumed  bool `json:"resumed"`
	}
	req := request{method: http.MethodPost, path: path, token: w.tokens["all"], body: approval(true, w.digest(id)), extra: []string{"Idempotency-Key", "v-1"}}
	first := decode[answer](t, w.do(req), http.StatusAccepted)
	if !first.Approved || first.Votes != 1 || first.Required != 2 || first.Resumed || first.Replayed {
		t.Fatalf("first vote %+v", first)
	}
	if b := w.get(id); b.Status != "waiting_for_approval" {
		t.Fatalf("after one vote of two the run is %s", b.Status)
	}
	wantError(t, w.do(request{method: http.MethodPost, path: path, token: w.tokens["approve"], body: approval(true, w.digest(id))}),
		http.StatusConflict, "already_voted")
	again := decode[answer](t, w.do(req), http.StatusAccepted)
	if !again.Replayed || again.Votes != 1 || again.Required != 2 || again.Resumed {
		t.Fatalf("replay %+v", again)
	}
}

// TestApprovalEditVote: on a turn that needs two approvals (allow_automatic_vote) with a
// person's approval counted, a token's approval with edits is 202 {votes: 1, required: 2,
// resumed: false}: it voids the person's vote and makes the edited call the pending turn
// (a new turn_digest, the edited arguments, edited_by and model_arguments); an approval with the old digest is 409
// stale_approval_turn; the person's approval of the new digest resumes the run, and the tool
// receives the edited arguments.
func TestApprovalEditVote(t *testing.T) {
	w := newWorld(t)
	received := editWorld(t, w)
	cfg, err := w.store.ConfigurationByIdentifier(w.ctx, "refund_edit")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Quorum = quorum.Policy{Required: 2, AutomaticVote: true}
	if _, err := w.store.UpsertConfiguration(w.ctx, cfg); err != nil {
		t.Fatal(err)
	}
	id := w.runIn("refund_edit")
	before := w.get(id)
	old, callID := before.Pending.TurnDigest, before.Pending.Calls[0].ID
	rita := runtime.Actor{UserUID: 7, Name: "rita", Role: runtime.RoleReviewer}
	if out, err := w.rt.Approve(w.ctx, rita, id, runtime.ApprovalDecision{Approved: true, TurnDigest: old}); err != nil || out.Votes != 1 {
		t.Fatalf("rita's approval: %+v, %v", out, err)
	}
	type answer struct {
		Votes    int  `json:"votes"`
		Required int  `json:"required"`
		Resumed  bool `json:"resumed"`
	}
	path := "/api/v1/runs/" + id + "/approval"
	edit := decode[answer](t, w.do(request{method: http.MethodPost, path: path, token: w.tokens["all"],
		body: editBody(old, callID, `[{"op":"replace","path":"/amount","value":42}]`, "")}), http.StatusAccepted)
	if edit.Votes != 1 || edit.Required != 2 || edit.Resumed {
		t.Fatalf("edit %+v; want 1 of 2, not resumed", edit)
	}
	after := w.get(id)
	if after.Pending.TurnDigest == old || !strings.Contains(string(after.Pending.Calls[0].Arguments), `"amount":42`) {
		t.Fatalf("pending turn after the edit: digest %s (was %s), arguments %s", after.Pending.TurnDigest, old, after.Pending.Calls[0].Arguments)
	}
	raw := string(w.do(request{method: http.MethodGet, path: "/api/v1/runs/" + id, token: w.tokens["read"]}).body)
	if !strings.Contains(raw, `"edited_by":"ci-all"`) || !strings.Contains(raw, `"model_arguments":{"amount":100,"order_id":"A1"}`) {
		t.Errorf("the API's pending call after the edit: %s", raw)
	}
	wantError(t, w.do(request{method: http.MethodPost, path: path, token: w.tokens["approve"], body: approval(true, old)}),
		http.StatusConflict, "stale_approval_turn")
	out, err := w.rt.Approve(w.ctx, rita, id, runtime.ApprovalDecision{Approved: true, TurnDigest: after.Pending.TurnDigest})
	if err != nil || !out.Resumed || out.Votes != 2 {
		t.Fatalf("rita's approval of the edit: %+v, %v", out, err)
	}
	w.rt.Wait()
	if got := received("refund_edit"); len(got) != 1 || !strings.Contains(got[0], `"amount":42`) {
		t.Fatalf("the tool received %q, want the edited arguments once", got)
	}
}
