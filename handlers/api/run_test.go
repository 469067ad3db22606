package api_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"runsdesk/runtime"
)

// TestCreateAndGet: POST /runs answers 201 with the queued run and its Location; GET shows the
// same run; once executed it is completed with termination reason and tokens.
func TestCreateAndGet(t *testing.T) {
	w := newWorld(t)
	res := w.do(request{method: http.MethodPost, path: "/api/v1/runs", token: w.tokens["all"], body: `{"configuration":"plain","prompt":"say hello"}`})
	created := decode[runBody](t, res, http.StatusCreated)
	if created.Status != "queued" || created.Configuration != "plain" || created.Created == 0 || created.Finished != nil || created.Pending != nil {
		t.Fatalf("created run %+v", created)
	}
	if loc := res.header.Get("Location"); loc != "/api/v1/runs/"+created.UUID {
		t.Fatalf("Location %q", loc)
	}
	if got := w.get(created.UUID); got.UUID != created.UUID || got.Status != "queued" {
		t.Fatalf("get after create: %+v", got)
	}
	if ok, err := w.rt.RunOnce(w.ctx); !ok || err != nil {
		t.Fatalf("run once: %v %v", ok, err)
	}
	done := w.get(created.UUID)
	if done.Status != "completed" || done.TerminationReason != "completed" || done.Iterations != 1 || done.TotalTokens == 0 || done.Finished == nil {
		t.Fatalf("completed run %+v", done)
	}
}

// TestRetryingRunShowsRetryAt: a queued run handed back after a provider failure shows when
// it is retried (retry_at); a run not waiting for a retry shows null.
func TestRetryingRunShowsRetryAt(t *testing.T) {
	w := newWorld(t)
	res := w.do(request{method: http.MethodPost, path: "/api/v1/runs", token: w.tokens["all"], body: `{"configuration":"plain","prompt":"say hello"}`})
	created := decode[runBody](t, res, http.StatusCreated)
	if created.RetryAt != nil {
		t.Fatalf("new run retry_at = %d, want null", *created.RetryAt)
	}
	const at = int64(1_900_000_000)
	if _, err := w.sql.ExecContext(w.ctx, `UPDATE tx_nrllm_agentrun SET retry_at = ? WHERE uuid = ?`, at, created.UUID); err != nil {
		t.Fatal(err)
	}
	if got := w.get(created.UUID); got.Status != "queued" || got.RetryAt == nil || *got.RetryAt != at {
		t.Fatalf("retrying run: status %s retry_at %v, want queued and %d", got.Status, got.RetryAt, at)
	}
	if _, err := w.sql.ExecContext(w.ctx, `UPDATE tx_nrllm_agentrun SET status = 'failed' WHERE uuid = ?`, created.UUID); err != nil {
		t.Fatal(err)
	}
	if got := w.get(created.UUID); got.RetryAt != nil {
		t.Fatalf("failed run retry_at = %d, want null", *got.RetryAt)
	}
}

// TestCreateRefusals: unknown configuration 404 (the identifier is not echoed), missing
// fields 400; nothing is created.
func TestCreateRefusals(t *testing.T) {
	w := newWorld(t)
	before := w.snapshot("")
	res := w.do(request{method: http.MethodPost, path: "/api/v1/runs", token: w.tokens["run"], body: `{"configuration":"zz-no-such-config","prompt":"hi"}`})
	wantError(t, res, http.StatusNotFound, "configuration_not_found")
	if strings.Contains(string(res.body), "zz-no-such-config") || strings.Contains(w.logs.String(), "zz-no-such-config") {
		t.Fatalf("submitted configuration echoed: %s", res.body)
	}
	for _, body := range []string{`{"prompt":"hi"}`, `{"configuration":"plain"}`, `{"configuration":"plain","prompt":"   "}`} {
		wantError(t, w.do(request{method: http.MethodPost, path: "/api/v1/runs", token: w.tokens["run"], body: body}), http.StatusBadRequest, "invalid_request")
	}
	w.unchanged(before, "")
	res = w.do(request{method: http.MethodPost, path: "/api/v1/runs", token: w.tokens["run"], body: `{"configuration":"plain","prompt":"hi"}`, contentType: "application/json; charset=utf-8"})
	if res.code != http.StatusCreated {
		t.Fatalf("with a charset parameter: %d %s", res.code, res.body)
	}
}

// TestCreateRefusesAnExternalConfiguration: POST /runs naming a configuration of kind:
// external is 400 invalid_request (it runs no model) and creates nothing.
func TestCreateRefusesAnExternalConfiguration(t *testing.T) {
	w := newWorld(t)
	ext := runtime.Configuration{Identifier: "outside", Name: "Outside", MaxIterations: 1, Privacy: runtime.PrivacyMetadata,
		SupportSees: runtime.PrivacyRedacted, External: &runtime.ExternalPolicy{Callers: []string{"run"}}}
	if _, err := w.store.UpsertConfiguration(w.ctx, ext); err != nil {
		t.Fatal(err)
	}
	before := w.snapshot("")
	res := w.do(request{method: http.MethodPost, path: "/api/v1/runs", token: w.tokens["run"], body: `{"configuration":"outside","prompt":"hi"}`})
	wantError(t, res, http.StatusBadRequest, "invalid_request")
	w.unchanged(before, "")
}

// TestWaitingApprovalShowsPendingTurn: a run waiting for approval shows its calls (id, tool,
// arguments, effect, preview) and the digest; no input schema.
func TestWaitingApprovalShowsPendingTurn(t *testing.T) {
	w := newWorld(t)
	id := w.runIn("approve")
	b := w.get(id)
	if b.Status != "waiting_for_approval" || b.WaitingSince == nil || b.Pending == nil {
		t.Fatalf("waiting run %+v", b)
	}
	p := b.Pending
	if p.Kind != "approval" || p.TurnDigest == "" || p.InputTool != "" || p.InputSchema != nil || len(p.Calls) != 1 {
		t.Fatalf("pending %+v", p)
	}
	c := p.Calls[0]
	if c.ID == "" || c.Tool != "send_mail" || string(c.Arguments) != `{"to":"ops@example.com"}` || c.Effect != "read_only" || !slices.Equal(c.Preview, []string{"would send one mail"}) {
		t.Fatalf("call %+v (arguments %s)", c, c.Arguments)
	}
}

// TestWaitingInputShowsSchema: a run waiting for input shows the target tool, its schema and
// the digest; the API has no input route, and approving it is 400 run_not_awaiting_approval.
func TestWaitingInputShowsSchema(t *testing.T) {
	w := newWorld(t)
	id := w.runIn("input")
	b := w.get(id)
	if b.Status != "waiting_for_input" || b.Pending == nil {
		t.Fatalf("waiting run %+v", b)
	}
	p := b.Pending
	if p.Kind != "input" || p.InputTool != "ask_city" || p.TurnDigest == "" || len(p.Calls) != 1 || p.Calls[0].Tool != "ask_city" {
		t.Fatalf("pending %+v", p)
	}
	var got, want any
	if err := json.Unmarshal(p.InputSchema, &got); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal([]byte(citySchema), &want)
	if !jsonEqual(got, want) {
		t.Fatalf("input schema %s", p.InputSchema)
	}
	before := w.snapshot(id)
	for _, method := range []string{http.MethodPost, http.MethodPut} {
		wantError(t, w.do(request{method: method, path: "/api/v1/runs/" + id + "/input", token: w.tokens["all"], body: `{"data":{"city":"Berlin"}}`}), http.StatusNotFound, "not_found")
	}
	res := w.do(request{method: http.MethodPost, path: "/api/v1/runs/" + id + "/approval", token: w.tokens["all"], body: approval(true, p.TurnDigest)})
	wantError(t, res, http.StatusBadRequest, "run_not_awaiting_approval")
	w.unchanged(before, id)
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestApproveWithDigest: the digest from GET approves; the run continues to completion; the
// event records the verdict and names the service account that decided; a replay with the
// same Idempotency-Key returns the first answer (the same account); another key is 409; the
// decisions are counted.
func TestApproveWithDigest(t *testing.T) {
	w := newWorld(t)
	id := w.runIn("approve")
	path := "/api/v1/runs/" + id + "/approval"
	req := request{method: http.MethodPost, path: path, token: w.tokens["all"], body: approval(true, w.digest(id)), extra: []string{"Idempotency-Key", "k-1"}}
	res := w.do(req)
	type answer struct {
		UUID             string `json:"uuid"`
		Approved         bool   `json:"approved"`
		Decided          int64  `json:"decided"`
		DecidedBy        *int64 `json:"decided_by"`
		DecidedByService string `json:"decided_by_service"`
		Replayed         bool   `json:"replayed"`
		Votes            int    `json:"votes"`
		Required         int    `json:"required"`
		Resumed          bool   `json:"resumed"`
	}
	first := decode[answer](t, res, http.StatusAccepted)
	if first.UUID != id || !first.Approved || first.Decided == 0 || first.Replayed || res.header.Get("Location") != "/api/v1/runs/"+id ||
		first.Votes != 1 || first.Required != 1 || !first.Resumed ||
		first.DecidedBy == nil || *first.DecidedBy != 0 || first.DecidedByService != "ci-all" {
		t.Fatalf("answer %+v, Location %q", first, res.header.Get("Location"))
	}
	w.rt.Wait()
	if b := w.get(id); b.Status != "completed" || b.Pending != nil {
		t.Fatalf("after approval %+v", b)
	}
	again := decode[answer](t, w.do(req), http.StatusAccepted)
	if !again.Replayed || again.Decided != first.Decided || !again.Approved || again.DecidedByService != "ci-all" {
		t.Fatalf("replay %+v", again)
	}
	req.extra = []string{"Idempotency-Key", "k-2"}
	wantError(t, w.do(req), http.StatusConflict, "run_already_resuming")

	evs := decode[[]struct {
		Sequence int             `json:"sequence"`
		Kind     string          `json:"kind"`
		Payload  json.RawMessage `json:"payload"`
	}](t, w.do(request{method: http.MethodGet, path: "/api/v1/runs/" + id + "/events", token: w.tokens["read"]}), http.StatusOK)
	n := 0
	for _, e := range evs {
		if e.Kind == "approval" {
			n++
			if string(e.Payload) != `{"approved":true,"decidedBy":0,"decidedByService":"ci-all"}` {
				t.Errorf("approval payload %s", e.Payload)
			}
		}
	}
	if n != 1 {
		t.Fatalf("%d approval events", n)
	}
	if got := w.obs.list(); !slices.Equal(got, []string{"approval/approved", "approval/replayed", "approval/run_already_resuming"}) {
		t.Fatalf("observed %v", got)
	}
}

// TestIdempotencyKeyInBody: the body key works like the header; disagreeing keys are 400.
func TestIdempotencyKeyInBody(t *testing.T) {
	w := newWorld(t)
	id := w.runIn("approve")
	path := "/api/v1/runs/" + id + "/approval"
	body := `{"approved":false,"turn_digest":"` + w.digest(id) + `","idempotency_key":"b-1"}`
	before := w.snapshot(id)
	wantError(t, w.do(request{method: http.MethodPost, path: path, token: w.tokens["all"], body: body, extra: []string{"Idempotency-Key", "other"}}), http.StatusBadRequest, "invalid_request")
	w.unchanged(before, id)
	if res := w.do(request{method: http.MethodPost, path: path, token: w.tokens["all"], body: body}); res.code != http.StatusAccepted {
		t.Fatalf("deny: %d %s", res.code, res.body)
	}
	w.rt.Wait()
	if res := w.do(request{method: http.MethodPost, path: path, token: w.tokens["all"], body: body, extra: []string{"Idempotency-Key", "b-1"}}); res.code != http.StatusAccepted || !strings.Contains(string(res.body), `"replayed":true`) {
		t.Fatalf("replay: %d %s", res.code, res.body)
	}
}

// TestApprovalReason: "reason" beside "approved" is stored with the decision, a denial's
// reaches the model (the run completes after it), the event records only reasonGiven; a
// reason over 1,000 characters or not a string is 400 invalid_request and decides nothing.
func TestApprovalReason(t *testing.T) {
	w := newWorld(t)
	id := w.runIn("approve")
	path := "/api/v1/runs/" + id + "/approval"
	before := w.snapshot(id)
	for _, reason := range []string{`"` + strings.Repeat("x", runtime.MaxReasonCharacters+1) + `"`, `5`} {
		body := `{"approved":false,"turn_digest":"` + w.digest(id) + `","reason":` + reason + `}`
		wantError(t, w.do(request{method: http.MethodPost, path: path, token: w.tokens["all"], body: body}), http.StatusBadRequest, "invalid_request")
	}
	w.unchanged(before, id)
	body := `{"approved":false,"turn_digest":"` + w.digest(id) + `","reason":"` + strings.Repeat("é", runtime.MaxReasonCharacters-9) + ` B-2 only"}`
	if res := w.do(request{method: http.MethodPost, path: path, token: w.tokens["all"], body: body}); res.code != http.StatusAccepted {
		t.Fatalf("deny with a reason of %d characters: %d %s", runtime.MaxReasonCharacters, res.code, res.body)
	}
	w.rt.Wait()
	evs := decode[[]struct {
		Kind    string          `json:"kind"`
		Payload json.RawMessage `json:"payload"`
	}](t, w.do(request{method: http.MethodGet, path: "/api/v1/runs/" + id + "/events", token: w.tokens["read"]}), http.StatusOK)
	for _, e := range evs {
		if e.Kind == "approval" && string(e.Payload) != `{"approved":false,"decidedBy":0,"decidedByService":"ci-all","reasonGiven":true}` {
			t.Errorf("approval payload %s", e.Payload)
		}
		if strings.Contains(string(e.Payload), "B-2") {
			t.Errorf("event %s carries the reason: %s", e.Kind, e.Payload)
		}
	}
}

// TestStaleDigest: a changed or missing digest is 409 stale_approval_turn; the run still waits
// and has no new event.
func TestStaleDigest(t *testing.T) {
	w := newWorld(t)
	id := w.runIn("approve")
	before := w.snapshot(id)
	for _, body := range []string{approval(true, "sha256:0000"), `{"approved":true}`} {
		res := w.do(request{method: http.MethodPost, path: "/api/v1/runs/" + id + "/approval", token: w.tokens["all"], body: body})
		wantError(t, res, http.StatusConflict, "stale_approval_turn")
	}
	w.unchanged(before, id)
}

// TestServiceAccountNeverApprovesAWrite: approving a turn that declares a write is 403
// approver_not_permitted and changes nothing; denying it is allowed.
func TestServiceAccountNeverApprovesAWrite(t *testing.T) {
	w := newWorld(t)
	id := w.runIn("write")
	b := w.get(id)
	if b.Pending == nil || len(b.Pending.Calls) != 2 || b.Pending.Calls[1].Effect != "non_idempotent_write" {
		t.Fatalf("pending %+v", b.Pending)
	}
	path := "/api/v1/runs/" + id + "/approval"
	before := w.snapshot(id)
	wantError(t, w.do(request{method: http.MethodPost, path: path, token: w.tokens["all"], body: approval(true, b.Pending.TurnDigest)}), http.StatusForbidden, "approver_not_permitted")
	w.unchanged(before, id)
	if res := w.do(request{method: http.MethodPost, path: path, token: w.tokens["all"], body: approval(false, b.Pending.TurnDigest)}); res.code != http.StatusAccepted {
		t.Fatalf("deny: %d %s", res.code, res.body)
	}
	w.rt.Wait()
	if got := w.get(id); got.Status != "completed" {
		t.Fatalf("after denial %+v", got)
	}
	if got := w.obs.list(); !slices.Equal(got, []string{"approval/approver_not_permitted", "approval/denied"}) {
		t.Fatalf("observed %v", got)
	}
}

// TestCancel: a waiting run is cancelled (200, status cancelled); again is 409.
func TestCancel(t *testing.T) {
	w := newWorld(t)
	id := w.runIn("approve")
	path := "/api/v1/runs/" + id + "/cancel"
	b := decode[runBody](t, w.do(request{method: http.MethodPost, path: path, token: w.tokens["all"]}), http.StatusOK)
	if b.Status != "cancelled" || b.TerminationReason != "cancelled" || b.Pending != nil {
		t.Fatalf("cancelled run %+v", b)
	}
	wantError(t, w.do(request{method: http.MethodPost, path: path, token: w.tokens["all"], body: `{}`}), http.StatusConflict, "run_not_cancellable")
}

// TestUnknownRun: a run that does not exist, or a path that cannot name one, is 404
// run_not_found on every route.
func TestUnknownRun(t *testing.T) {
	w := newWorld(t)
	for _, id := range []string{uuid.NewString(), "not-a-uuid", strings.Repeat("z", 36)} {
		for _, r := range []request{
			{method: http.MethodGet, path: "/api/v1/runs/" + id},
			{method: http.MethodGet, path: "/api/v1/runs/" + id + "/events"},
			{method: http.MethodGet, path: "/api/v1/runs/" + id + "/calls"},
			{method: http.MethodPost, path: "/api/v1/runs/" + id + "/approval", body: approval(true, "x")},
			{method: http.MethodPost, path: "/api/v1/runs/" + id + "/cancel"},
		} {
			r.token = w.tokens["all"]
			wantError(t, w.do(r), http.StatusNotFound, "run_not_found")
		}
	}
}

// TestEvents: ?after filters by sequence; a bad after is 400.
func TestEvents(t *testing.T) {
	w := newWorld(t)
	id := w.runIn("approve")
	type ev struct {
		Sequence   int             `json:"sequence"`
		Kind       string          `json:"kind"`
		Round      int             `json:"round"`
		DurationMS float64         `json:"duration_ms"`
		Payload    json.RawMessage `json:"payload"`
		Crdate     int64           `json:"crdate"`
	}
	path := "/api/v1/runs/" + id + "/events"
	all := decode[[]ev](t, w.do(request{method: http.MethodGet, path: path, token: w.tokens["read"]}), http.StatusOK)
	if len(all) < 2 || all[0].Sequence != 0 || all[0].Kind != "request" || all[0].Crdate == 0 || len(all[0].Payload) == 0 {
		t.Fatalf("events %+v", all)
	}
	later := decode[[]ev](t, w.do(request{method: http.MethodGet, path: path + "?after=0", token: w.tokens["read"]}), http.StatusOK)
	if len(later) != len(all)-1 || later[0].Sequence != 1 {
		t.Fatalf("after=0: %+v", later)
	}
	none := w.do(request{method: http.MethodGet, path: path + "?after=1000", token: w.tokens["read"]})
	if none.code != http.StatusOK || strings.TrimSpace(string(none.body)) != "[]" {
		t.Fatalf("after=1000: %d %s", none.code, none.body)
	}
	for _, q := range []string{"abc", "-2", "1.5", "99999999999", "", "1&after=2"} {
		res := w.do(request{method: http.MethodGet, path: path + "?after=" + q, token: w.tokens["read"]})
		wantError(t, res, http.StatusBadRequest, "invalid_request")
		if q != "" && strings.Contains(string(res.body), q) {
			t.Errorf("after=%s echoed: %s", q, res.body)
		}
	}
}

// TestMethodNotAllowed: another method on an API route is 405 in the error shape with Allow.
func TestMethodNotAllowed(t *testing.T) {
	w := newWorld(t)
	id := w.runIn("plain")
	res := w.do(request{method: http.MethodDelete, path: "/api/v1/runs/" + id, token: w.tokens["all"]})
	wantError(t, res, http.StatusMethodNotAllowed, "method_not_allowed")
	if res.header.Get("Allow") != http.MethodGet {
		t.Fatalf("Allow %q", res.header.Get("Allow"))
	}
	res = w.do(request{method: http.MethodPut, path: "/api/v1/runs", token: w.tokens["all"]})
	wantError(t, res, http.StatusMethodNotAllowed, "method_not_allowed")
	if res.header.Get("Allow") != "POST, GET" {
		t.Fatalf("Allow on /runs %q, want POST, GET", res.header.Get("Allow"))
	}
	wantError(t, w.do(request{method: http.MethodGet, path: "/api/v1/nothing/here", token: w.tokens["all"]}), http.StatusNotFound, "not_found")
}
