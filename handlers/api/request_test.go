package api_test

import (
	"net/http"
	"testing"

	"runsdesk/runtime"
)

// externalWorld is a world with an external configuration "desk" that takes requests for
// send_mail from the service account ci-request (scope request), whose token it returns.
func externalWorld(t *testing.T) (*world, string) {
	t.Helper()
	return externalWorldOf(t, newWorld(t))
}

// externalWorldOf is externalWorld made of w.
func externalWorldOf(t *testing.T, w *world) (*world, string) {
	t.Helper()
	cfg := runtime.Configuration{Identifier: "desk", Name: "desk", MaxIterations: 1, Tools: []string{"send_mail"},
		External: &runtime.ExternalPolicy{Callers: []string{"ci-request"}}}
	if _, err := w.store.UpsertConfiguration(w.ctx, cfg); err != nil {
		t.Fatal(err)
	}
	return w, w.createToken("ci-request", runtime.ScopeRequest)
}

// TestCreateRequestAPI: POST /requests (scope request) answers 201 with the request waiting
// for approval and its Location; the same Idempotency-Key or external_id with the same body
// answers the same run, a different body under a used external_id is 409
// external_id_conflict; a token without scope request is 403.
func TestCreateRequestAPI(t *testing.T) {
	w, token := externalWorld(t)
	const body = `{"configuration":"desk","kind":"approval","tool":"send_mail","arguments":{"to":"ops@example.com"},"title":"Mail ops","message":"Tell ops.","external_id":"ticket-7"}`
	res := w.do(request{method: http.MethodPost, path: "/api/v1/requests", token: token, body: body, extra: []string{"Idempotency-Key", "k-1"}})
	created := decode[runBody](t, res, http.StatusCreated)
	if created.Status != "waiting_for_approval" || created.Configuration != "desk" {
		t.Fatalf("created request %+v", created)
	}
	if loc := res.header.Get("Location"); loc != "/api/v1/requests/"+created.UUID {
		t.Fatalf("Location %q", loc)
	}
	for _, extra := range [][]string{{"Idempotency-Key", "k-1"}, nil} {
		again := decode[runBody](t, w.do(request{method: http.MethodPost, path: "/api/v1/requests", token: token, body: body, extra: extra}), http.StatusCreated)
		if again.UUID != created.UUID {
			t.Errorf("replay with %v: run %s, want %s", extra, again.UUID, created.UUID)
		}
	}
	const other = `{"configuration":"desk","kind":"approval","tool":"send_mail","arguments":{"to":"all@example.com"},"external_id":"ticket-7"}`
	wantError(t, w.do(request{method: http.MethodPost, path: "/api/v1/requests", token: token, body: other}), http.StatusConflict, "external_id_conflict")
	wantError(t, w.do(request{method: http.MethodPost, path: "/api/v1/requests", token: w.tokens["all"], body: body}), http.StatusForbidden, "insufficient_scope")
	wantError(t, w.do(request{method: http.MethodPost, path: "/api/v1/requests", token: token, body: `{"configuration":"desk"}`}), http.StatusBadRequest, "invalid_request")
	wantError(t, w.do(request{method: http.MethodPost, path: "/api/v1/requests", token: token,
		body: `{"configuration":"desk","kind":"approval","tool":"send_mail","on_behalf_of":"nobody"}`}), http.StatusBadRequest, "invalid_request")
	var n int
	if err := w.sql.QueryRowContext(w.ctx, `SELECT COUNT(*) FROM tx_nrllm_agentrun WHERE configuration_identifier = 'desk'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("%d requests stored (%v), want 1", n, err)
	}
}
