package api_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"runsdesk/runtime"
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

// TestRunJSONSaysTheRunExpired: a run whose pause expired says so in its JSON once it has
// finished, with what the expiry did (expired true, expiry_action deny; cancel when the
// expiry cancelled it); a run that never expired has expired false and expiry_action null.
func TestRunJSONSaysTheRunExpired(t *testing.T) {
	w := newWorld(t)
	raw := func(id string) map[string]json.RawMessage {
		return decode[map[string]json.RawMessage](t, w.do(request{method: http.MethodGet, path: "/api/v1/runs/" + id, token: w.tokens["read"]}), http.StatusOK)
	}
	denied, cancelled := w.runIn("approve"), w.runIn("input")
	if got := raw(denied); string(got["expired"]) != "false" || string(got["expiry_action"]) != "null" {
		t.Fatalf("before its expiry: expired %s, expiry_action %s", got["expired"], got["expiry_action"])
	}
	past := time.Now().Add(-time.Minute).Unix()
	for id, action := range map[string]string{denied: "deny", cancelled: "cancel"} {
		if _, err := w.sql.ExecContext(w.ctx, `UPDATE tx_nrllm_agentrun SET expires_at = ?, wait_due = ?, wait_policy = ? WHERE uuid = ?`,
			past, past, `{"action":"`+action+`"}`, id); err != nil {
			t.Fatal(err)
		}
	}
	if rep, err := w.rt.Expire(w.ctx, 10); err != nil || rep.Expired != 2 {
		t.Fatalf("expire: %+v %v", rep, err)
	}
	for w.run(denied).Status == runtime.StatusQueued {
		if ok, err := w.rt.RunOnce(w.ctx); err != nil || !ok {
			t.Fatalf("run once: %v %v", ok, err)
		}
	}
	w.rt.Wait()
	for id, want := range map[string][2]string{denied: {"completed", `"deny"`}, cancelled: {"cancelled", `"cancel"`}} {
		got := raw(id)
		if string(got["status"]) != `"`+want[0]+`"` || string(got["expired"]) != "true" || string(got["expiry_action"]) != want[1] {
			t.Errorf("%s: status %s, expired %s, expiry_action %s; want %s, true, %s", id, got["status"], got["expired"], got["expiry_action"], want[0], want[1])
		}
	}
	listed := decode[struct{ Runs []map[string]json.RawMessage }](t, w.do(request{method: http.MethodGet, path: "/api/v1/runs?status=finished", token: w.tokens["read"]}), http.StatusOK)
	if len(listed.Runs) != 2 {
		t.Fatalf("GET /runs?status=finished listed %d runs, want 2", len(listed.Runs))
	}
	for _, got := range listed.Runs {
		if string(got["expired"]) != "true" || string(got["expiry_action"]) == "null" {
			t.Errorf("the run list shows %s with expired %s, expiry_action %s; want what GET shows", got["uuid"], got["expired"], got["expiry_action"])
		}
	}
}
