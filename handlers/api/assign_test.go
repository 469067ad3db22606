package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// assigneeOf is the "assignee" of run id's JSON, as its raw text.
func (w *world) assigneeOf(id string) string {
	w.t.Helper()
	b := decode[map[string]json.RawMessage](w.t, w.do(request{method: http.MethodGet, path: "/api/v1/runs/" + id, token: w.tokens["read"]}), http.StatusOK)
	return string(b["assignee"])
}

// TestRunAssignment: POST /runs/{id}/assignment (scope approve) assigns a waiting run to a
// person and shows "assignee" in the run JSON; another assignment of it is 409
// already_assigned; force is 403 for a token; null releases it; a missing field, an unknown
// person and a token without approve are refused.
func TestRunAssignment(t *testing.T) {
	w := newWorld(t)
	if _, err := w.sql.ExecContext(w.ctx, `INSERT INTO be_users (username, role) VALUES ('rita', 'reviewer'), ('bob', 'admin'), ('sam', 'support')`); err != nil {
		t.Fatal(err)
	}
	id := w.runIn("approve")
	if got := w.assigneeOf(id); got != "null" {
		t.Fatalf("an unassigned run's assignee is %s, want null", got)
	}
	post := func(body string) response {
		return w.do(request{method: http.MethodPost, path: "/api/v1/runs/" + id + "/assignment", token: w.tokens["approve"], body: body})
	}
	if res := post(`{"assignee":"rita"}`); res.code != http.StatusOK {
		t.Fatalf("assign to rita: %d %s", res.code, res.body)
	}
	if got := w.assigneeOf(id); got != `"rita"` {
		t.Fatalf("assignee %s, want rita", got)
	}
	held := post(`{"assignee":"bob"}`)
	wantError(t, held, http.StatusConflict, "already_assigned")
	if !strings.Contains(string(held.body), "assigned to rita") {
		t.Errorf("409 body %s does not name rita", held.body)
	}
	wantError(t, post(`{"assignee":"bob","force":true}`), http.StatusForbidden, "run_access_denied")
	wantError(t, post(`{}`), http.StatusBadRequest, "invalid_request")
	wantError(t, post(`{"assignee":"sam"}`), http.StatusBadRequest, "invalid_request")
	res := w.do(request{method: http.MethodPost, path: "/api/v1/runs/" + id + "/assignment", token: w.tokens["read"], body: `{"assignee":null}`})
	wantError(t, res, http.StatusForbidden, "insufficient_scope")
	released := w.do(request{method: http.MethodPost, path: "/api/v1/runs/" + id + "/assignment", token: w.tokens["approve"], body: `{"assignee":null,"force":false}`})
	wantError(t, released, http.StatusConflict, "already_assigned")
	if _, err := w.sql.ExecContext(w.ctx, `UPDATE tx_nrllm_agentrun SET assignee = 0, assignee_name = '' WHERE uuid = ?`, id); err != nil {
		t.Fatal(err)
	}
	wantError(t, post(`{"assignee":"nobody"}`), http.StatusBadRequest, "invalid_request")
	if res := post(`{"assignee":"bob"}`); res.code != http.StatusOK {
		t.Fatalf("assign to bob: %d %s", res.code, res.body)
	}
	if res := post(`{"assignee":null}`); res.code != http.StatusConflict {
		t.Fatalf("a token releasing bob's run: %d %s, want 409", res.code, res.body)
	}
}
