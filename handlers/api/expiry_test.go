package api_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// TestRunJSONShowsTheDeadline: while a run waits, its JSON has expires_at (null when its
// pause never expires) and escalated; an approval after the deadline is 409 run_expired and
// changes nothing.
func TestRunJSONShowsTheDeadline(t *testing.T) {
	w := newWorld(t)
	id := w.runIn("approve")
	raw := func() map[string]json.RawMessage {
		return decode[map[string]json.RawMessage](t, w.do(request{method: http.MethodGet, path: "/api/v1/runs/" + id, token: w.tokens["read"]}), http.StatusOK)
	}
	if got := raw(); string(got["expires_at"]) != "null" || string(got["escalated"]) != "false" {
		t.Fatalf("without a deadline: expires_at %s, escalated %s", got["expires_at"], got["escalated"])
	}
	digest := w.digest(id)
	expires := time.Now().Add(-time.Minute).Unix()
	if _, err := w.sql.ExecContext(w.ctx, `UPDATE tx_nrllm_agentrun SET expires_at = ?, escalated = 1, wait_policy = '{"action":"deny"}' WHERE uuid = ?`, expires, id); err != nil {
		t.Fatal(err)
	}
	got := raw()
	var at int64
	if err := json.Unmarshal(got["expires_at"], &at); err != nil || at != expires || string(got["escalated"]) != "true" {
		t.Fatalf("with a deadline: expires_at %s, escalated %s", got["expires_at"], got["escalated"])
	}
	before := w.snapshot(id)
	res := w.do(request{method: http.MethodPost, path: "/api/v1/runs/" + id + "/approval", token: w.tokens["all"], body: approval(true, digest)})
	wantError(t, res, http.StatusConflict, "run_expired")
	w.unchanged(before, id)
}
