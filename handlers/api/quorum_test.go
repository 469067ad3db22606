package api_test

import (
	"net/http"
	"testing"

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
