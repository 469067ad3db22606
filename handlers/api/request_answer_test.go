package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"runsdesk/db"
	"runsdesk/handlers/api"
	"runsdesk/handlers/waiters"
	"runsdesk/runtime"
)

// heldWorld is externalWorld with a waiters hall polling its store every 20 ms, so requests
// can be held.
func heldWorld(t *testing.T) (*world, string) {
	t.Helper()
	src := &lateSource{}
	hall := waiters.New(waiters.Config{Source: src, Interval: 20 * time.Millisecond})
	t.Cleanup(hall.Close)
	w := newWorld(t, func(c *api.Config) { c.Waiters = hall })
	src.store.Store(w.store)
	return externalWorldOf(t, w)
}

// lateSource is a world's store as a hall's source, set once the world is built (the hall
// reads nothing before).
type lateSource struct{ store atomic.Pointer[db.Store] }

func (s *lateSource) Stamps(ctx context.Context, kind string, ids []string) (map[string]string, error) {
	st := s.store.Load()
	if st == nil {
		return map[string]string{}, nil
	}
	return st.Stamps(ctx, kind, ids)
}

// answerBody is the answer of a request as a client reads it.
type answerBody struct {
	ID         string `json:"id"`
	ExternalID string `json:"external_id"`
	Status     string `json:"status"`
	Decision   *struct {
		Approved         bool           `json:"approved"`
		Reason           string         `json:"reason"`
		Values           map[string]any `json:"values"`
		DecidedBy        int64          `json:"decided_by"`
		DecidedByService string         `json:"decided_by_service"`
		DecidedAt        int64          `json:"decided_at"`
	} `json:"decision"`
}

// createRequest creates an approval request of send_mail with token and returns its id and
// Location.
func (w *world) createRequest(token, externalID string) (string, string) {
	w.t.Helper()
	body, _ := json.Marshal(map[string]any{"configuration": "desk", "kind": "approval", "tool": "send_mail",
		"arguments": map[string]any{"to": "ops@example.com"}, "external_id": externalID})
	res := w.do(request{method: http.MethodPost, path: "/api/v1/requests", token: token, body: string(body)})
	return decode[runBody](w.t, res, http.StatusCreated).UUID, res.header.Get("Location")
}

// decide approves (or denies) request uuid as the person ada, with reason.
func (w *world) decide(uuid string, approved bool, reason string) {
	w.t.Helper()
	ada := runtime.Actor{UserUID: 1, Name: "ada", Role: runtime.RoleAdmin}
	view, err := w.rt.Get(w.ctx, ada, uuid)
	if err != nil || view.Pause == nil {
		w.t.Fatalf("read request %s: %v", uuid, err)
	}
	if _, err := w.rt.Approve(w.ctx, ada, uuid, runtime.ApprovalDecision{Approved: approved, Reason: reason, TurnDigest: view.Pause.Digest}); err != nil {
		w.t.Fatal(err)
	}
}

// TestGetRequestAPI: GET /requests/:id (the Location POST /requests answers) is pending while
// the request waits, with its external_id; ?wait= holds the call until a person decides and
// answers the decision at once; ?wait= on a pending request answers pending at its limit; a
// bad ?wait= is 400.
func TestGetRequestAPI(t *testing.T) {
	w, token := heldWorld(t)
	id, location := w.createRequest(token, "ticket-9")
	pending := decode[answerBody](t, w.do(request{method: http.MethodGet, path: location, token: token}), http.StatusOK)
	if pending.ID != id || pending.ExternalID != "ticket-9" || pending.Status != "pending" || pending.Decision != nil {
		t.Fatalf("pending answer %+v", pending)
	}
	began := time.Now()
	limit := decode[answerBody](t, w.do(request{method: http.MethodGet, path: location + "?wait=1s", token: token}), http.StatusOK)
	if took := time.Since(began); limit.Status != "pending" || took < time.Second || took > 5*time.Second {
		t.Fatalf("?wait=1s on a pending request: %+v after %v", limit, took)
	}
	wantError(t, w.do(request{method: http.MethodGet, path: location + "?wait=soon", token: token}), http.StatusBadRequest, "invalid_request")

	held := make(chan response, 1)
	go func() { held <- w.do(request{method: http.MethodGet, path: location + "?wait=30s", token: token}) }()
	time.Sleep(200 * time.Millisecond)
	began = time.Now()
	w.decide(id, true, "fine")
	select {
	case res := <-held:
		got := decode[answerBody](t, res, http.StatusOK)
		if got.Status != "approved" || got.Decision == nil || !got.Decision.Approved || got.Decision.Reason != "fine" || got.Decision.DecidedBy != 1 {
			t.Fatalf("held answer %s", res.body)
		}
		if took := time.Since(began); took > 5*time.Second {
			t.Errorf("the decision reached the held call after %v", took)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the held call was not answered when the request was decided")
	}
}

// TestRequestsOnlyForTheirCaller: another service account with scope request gets 404 for a
// request it did not create, reading, holding or withdrawing it, and the request still
// waits; a token without scope request is 403; a run that is no request is 404 to its
// starter too.
func TestRequestsOnlyForTheirCaller(t *testing.T) {
	w, token := heldWorld(t)
	id, location := w.createRequest(token, "")
	other := w.createToken("ci-other", runtime.ScopeRequest)
	for _, r := range []request{
		{method: http.MethodGet, path: location, token: other},
		{method: http.MethodGet, path: location + "?wait=5s", token: other},
		{method: http.MethodDelete, path: location, token: other},
		{method: http.MethodGet, path: "/api/v1/requests/not-a-uuid", token: token},
	} {
		wantError(t, w.do(r), http.StatusNotFound, "run_not_found")
	}
	wantError(t, w.do(request{method: http.MethodGet, path: location, token: w.tokens["all"]}), http.StatusForbidden, "insufficient_scope")
	if got := w.run(id).Status; got != runtime.StatusWaitingApproval {
		t.Errorf("request after the others' attempts: %s", got)
	}
	plain := w.runIn("approve")
	wantError(t, w.do(request{method: http.MethodGet, path: "/api/v1/requests/" + plain, token: w.tokens["all"]}), http.StatusForbidden, "insufficient_scope")
	wantError(t, w.do(request{method: http.MethodGet, path: "/api/v1/requests/" + plain, token: token}), http.StatusNotFound, "run_not_found")
}

// TestWithdrawRequestAPI: DELETE /requests/:id withdraws a waiting request (200, status
// cancelled; the run cancelled); a second withdrawal, and one of a decided request, is 409
// run_not_cancellable and the decision stands.
func TestWithdrawRequestAPI(t *testing.T) {
	w, token := heldWorld(t)
	id, location := w.createRequest(token, "")
	got := decode[answerBody](t, w.do(request{method: http.MethodDelete, path: location, token: token}), http.StatusOK)
	if got.ID != id || got.Status != "cancelled" || got.Decision != nil {
		t.Fatalf("withdrawn %+v", got)
	}
	if run := w.run(id); run.Status != runtime.StatusCancelled {
		t.Fatalf("withdrawn request's run %s", run.Status)
	}
	wantError(t, w.do(request{method: http.MethodDelete, path: location, token: token}), http.StatusConflict, "run_not_cancellable")

	decided, location := w.createRequest(token, "")
	w.decide(decided, false, "no")
	w.rt.Wait()
	wantError(t, w.do(request{method: http.MethodDelete, path: location, token: token}), http.StatusConflict, "run_not_cancellable")
	if got := decode[answerBody](t, w.do(request{method: http.MethodGet, path: location, token: token}), http.StatusOK); got.Status != "denied" || got.Decision == nil || got.Decision.Reason != "no" {
		t.Errorf("answer of the decided request %+v", got)
	}
}

// TestAdHocRequestAPI: in a configuration with ad_hoc: true, POST /requests asks a question of
// an undeclared name with its "schema" (201, waiting_for_input, the run's pending input
// schema the one given) and the approval of an undeclared action; a schema over its field
// limit, or yielding no form, is 422 invalid_schema naming the rule (a body over the API's
// 64 KiB is 413 before the schema's own 64 KiB bound); an undeclared tool where ad_hoc is not
// set stays 422 unknown_tool.
func TestAdHocRequestAPI(t *testing.T) {
	w, token := externalWorld(t)
	post := func(body string) response {
		return w.do(request{method: http.MethodPost, path: "/api/v1/requests", token: token, body: body})
	}
	wantError(t, post(`{"configuration":"desk","kind":"approval","tool":"deploy_service","arguments":{"service":"billing"}}`), http.StatusUnprocessableEntity, "unknown_tool")
	cfg := runtime.Configuration{Identifier: "desk", Name: "desk", MaxIterations: 1, Tools: []string{"send_mail"},
		External: &runtime.ExternalPolicy{Callers: []string{"ci-request"}, AdHoc: true}}
	if _, err := w.store.UpsertConfiguration(w.ctx, cfg); err != nil {
		t.Fatal(err)
	}
	const schema = `{"type":"object","required":["colour"],"properties":{"colour":{"type":"string"}}}`
	asked := w.get(decode[runBody](t, post(`{"configuration":"desk","kind":"input","tool":"ask_colour","title":"Which colour?","schema":`+schema+`}`), http.StatusCreated).UUID)
	if asked.Status != "waiting_for_input" || asked.Pending == nil || string(asked.Pending.InputSchema) != schema || asked.Pending.InputTool != "ask_colour" {
		t.Fatalf("ad hoc question %+v", asked)
	}
	approval := w.get(decode[runBody](t, post(`{"configuration":"desk","kind":"approval","tool":"deploy_service","arguments":{"service":"billing"}}`), http.StatusCreated).UUID)
	if approval.Status != "waiting_for_approval" || approval.Pending == nil || approval.Pending.Calls[0].Tool != "deploy_service" {
		t.Fatalf("ad hoc approval %+v", approval)
	}
	var many []string
	for i := range 201 {
		many = append(many, fmt.Sprintf(`"f%d":{"type":"string"}`, i))
	}
	res := post(`{"configuration":"desk","kind":"input","tool":"ask","schema":{"type":"object","properties":{` + strings.Join(many, ",") + `}}}`)
	wantError(t, res, http.StatusUnprocessableEntity, "invalid_schema")
	if !strings.Contains(string(res.body), "201 fields, more than 200") {
		t.Errorf("refusal %s does not name the limit", res.body)
	}
	wantError(t, post(`{"configuration":"desk","kind":"input","tool":"ask","schema":{"type":"object"}}`), http.StatusUnprocessableEntity, "invalid_schema")
	wantError(t, post(`{"configuration":"desk","kind":"input","tool":"ask","schema":{"type":"object","description":"`+strings.Repeat("x", 64<<10)+`"}}`),
		http.StatusRequestEntityTooLarge, "body_too_large")
}
