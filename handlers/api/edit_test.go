package api_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
	"runsdesk/runtime/tool"
)

const editParams = `{"type":"object","required":["order_id","amount"],"properties":{"order_id":{"type":"string"},"amount":{"type":"number","maximum":500}}}`

// editWorld adds HTTP tools to w's catalog (answered by an endpoint recording the arguments
// it receives) and one configuration per tool, whose model calls it once; it returns the
// recorded arguments by tool.
func editWorld(t *testing.T, w *world) func(string) []string {
	var mu sync.Mutex
	got := map[string][]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var body struct {
			Tool      string          `json:"tool"`
			Arguments json.RawMessage `json:"arguments"`
		}
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &body)
		mu.Lock()
		got[body.Tool] = append(got[body.Tool], string(body.Arguments))
		mu.Unlock()
		_, _ = rw.Write([]byte(`{"content":"done"}`))
	}))
	t.Cleanup(srv.Close)
	defs := []tool.Definition{
		{Name: "refund_edit", Parameters: json.RawMessage(editParams), RequiresApproval: true, Editable: true},
		{Name: "refund_write", Parameters: json.RawMessage(editParams), Effect: tool.EffectNonIdempotentWrite, Editable: true},
		{Name: "refund_admin", Parameters: json.RawMessage(editParams), RequiresApproval: true, AdminOnly: true, Editable: true},
		{Name: "refund_fixed", Parameters: json.RawMessage(editParams), RequiresApproval: true},
	}
	for _, d := range defs {
		d.HTTP = tool.HTTPConfig{URL: srv.URL + "/" + d.Name}
		if _, err := w.store.UpsertTool(w.ctx, d); err != nil {
			t.Fatal(err)
		}
		cfg := runtime.Configuration{Identifier: d.Name, Name: d.Name, MaxIterations: 10, Tools: []string{d.Name},
			Provider: model.Settings{Kind: "scripted", Script: []model.Turn{{ToolCalls: []model.ScriptedCall{call(d.Name, `{"order_id":"A1","amount":100}`)}}}}}
		if _, err := w.store.UpsertConfiguration(w.ctx, cfg); err != nil {
			t.Fatal(err)
		}
	}
	return func(name string) []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got[name]...)
	}
}

func editBody(digest, callID, patch, extra string) string {
	return `{"approved":true,"turn_digest":"` + digest + `","edits":{"` + callID + `":` + patch + `}` + extra + `}`
}

// TestAPIEditAndApprove: edits in the approval body run the tool with the edited arguments;
// the approval event records edited, patchDigest and changedPaths, never a value.
func TestAPIEditAndApprove(t *testing.T) {
	w := newWorld(t)
	received := editWorld(t, w)
	id := w.runIn("refund_edit")
	b := w.get(id)
	callID := b.Pending.Calls[0].ID
	if raw := w.do(request{method: http.MethodGet, path: "/api/v1/runs/" + id, token: w.tokens["read"]}); !strings.Contains(string(raw.body), `"editable":true`) {
		t.Errorf("the pending call is not shown as editable: %s", raw.body)
	}
	res := w.do(request{method: http.MethodPost, path: "/api/v1/runs/" + id + "/approval", token: w.tokens["all"],
		body: editBody(b.Pending.TurnDigest, callID, `[{"op":"replace","path":"/amount","value":42}]`, "")})
	if res.code != http.StatusAccepted {
		t.Fatalf("status %d: %s", res.code, res.body)
	}
	w.rt.Wait()
	if got := received("refund_edit"); len(got) != 1 || got[0] != `{"amount":42,"order_id":"A1"}` {
		t.Fatalf("tool received %q", got)
	}
	evs := decode[[]struct {
		Kind    string          `json:"kind"`
		Payload json.RawMessage `json:"payload"`
	}](t, w.do(request{method: http.MethodGet, path: "/api/v1/runs/" + id + "/events", token: w.tokens["read"]}), http.StatusOK)
	for _, e := range evs {
		if e.Kind != "approval" {
			continue
		}
		var p map[string]any
		_ = json.Unmarshal(e.Payload, &p)
		if p["edited"] != true || len(p["patchDigest"].(string)) != 64 || len(p) != 6 ||
			!strings.Contains(string(e.Payload), `"changedPaths":["/`+callID+`/amount"]`) {
			t.Errorf("approval payload %s", e.Payload)
		}
	}
}

// TestAPICalls: GET /runs/{id}/calls lists nothing before a call ran; after an edited
// approval it lists the call with the model's, the approved and the effective arguments apart,
// effective what the tool's endpoint received.
func TestAPICalls(t *testing.T) {
	w := newWorld(t)
	received := editWorld(t, w)
	id := w.runIn("refund_edit")
	path := "/api/v1/runs/" + id + "/calls"
	if res := w.do(request{method: http.MethodGet, path: path, token: w.tokens["read"]}); res.code != http.StatusOK ||
		strings.TrimSpace(string(res.body)) != `{"calls":[]}` {
		t.Fatalf("calls of a waiting run: %d %s", res.code, res.body)
	}
	b := w.get(id)
	callID := b.Pending.Calls[0].ID
	res := w.do(request{method: http.MethodPost, path: "/api/v1/runs/" + id + "/approval", token: w.tokens["all"],
		body: editBody(b.Pending.TurnDigest, callID, `[{"op":"replace","path":"/amount","value":42}]`, "")})
	if res.code != http.StatusAccepted {
		t.Fatalf("status %d: %s", res.code, res.body)
	}
	w.rt.Wait()
	got := decode[map[string][]map[string]json.RawMessage](t, w.do(request{method: http.MethodGet, path: path, token: w.tokens["read"]}), http.StatusOK)
	sent := received("refund_edit")
	if len(got["calls"]) != 1 || len(sent) != 1 {
		t.Fatalf("calls %v; the endpoint received %q", got, sent)
	}
	c := got["calls"][0]
	if string(c["id"]) != `"`+callID+`"` || string(c["tool"]) != `"refund_edit"` || len(c) != 5 ||
		string(c["proposed"]) != `{"order_id":"A1","amount":100}` || string(c["approved"]) != `{"amount":42,"order_id":"A1"}` ||
		string(c["effective"]) != sent[0] {
		t.Errorf("call %v; the endpoint received %s", c, sent[0])
	}
}

// TestAPIEditRefusals: each refusal of an edited approval answers its status and code,
// changes nothing, and (422) lists per-field errors naming the call.
func TestAPIEditRefusals(t *testing.T) {
	w := newWorld(t)
	received := editWorld(t, w)
	cases := []struct {
		name, configuration, patch, extra string
		status                            int
		code                              string
		fields                            []string
	}{
		{"tool not editable", "refund_fixed", `[{"op":"replace","path":"/amount","value":1}]`, "", 403, "edit_not_permitted", nil},
		{"admin-only tool, service account", "refund_admin", `[{"op":"replace","path":"/amount","value":1}]`, "", 403, "edit_not_permitted", nil},
		{"service account, write turn", "refund_write", `[{"op":"replace","path":"/amount","value":1}]`, "", 403, "approver_not_permitted", nil},
		{"not a patch", "refund_edit", `[{"op":"merge","path":"/amount"}]`, "", 422, "invalid_edit", []string{""}},
		{"patch not an array", "refund_edit", `{"amount":1}`, "", 422, "invalid_edit", []string{""}},
		{"patch does not apply", "refund_edit", `[{"op":"remove","path":"/nope"}]`, "", 422, "invalid_edit", []string{""}},
		{"fails parameters", "refund_edit", `[{"op":"replace","path":"/amount","value":9999}]`, "", 422, "invalid_edit", []string{"/amount"}},
		{"undeclared property", "refund_edit", `[{"op":"add","path":"/bcc","value":"attacker@example.com"}]`, "", 422, "invalid_edit", []string{"/bcc"}},
		{"copy doubling past the bound", "refund_edit", copyBomb(20), "", 422, "invalid_edit", []string{""}},
		{"101 operations", "refund_edit", "[" + strings.TrimSuffix(strings.Repeat(`{"op":"test","path":"/amount","value":100},`, 101), ",") + "]", "", 422, "invalid_edit", []string{""}},
		{"stale patch digest", "refund_edit", `[{"op":"replace","path":"/amount","value":1}]`, `,"patch_digest":"00"`, 409, "stale_approval_turn", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := w.runIn(c.configuration)
			b := w.get(id)
			callID := b.Pending.Calls[0].ID
			before := w.snapshot(id)
			res := w.do(request{method: http.MethodPost, path: "/api/v1/runs/" + id + "/approval", token: w.tokens["all"],
				body: editBody(b.Pending.TurnDigest, callID, c.patch, c.extra)})
			if res.code != c.status {
				t.Fatalf("status %d, want %d: %s", res.code, c.status, res.body)
			}
			var body struct {
				Error struct {
					Code    string `json:"code"`
					Message string `json:"message"`
					Fields  []struct {
						CallID  string `json:"call_id"`
						Pointer string `json:"pointer"`
						Message string `json:"message"`
					} `json:"fields"`
				} `json:"error"`
			}
			if err := json.Unmarshal(res.body, &body); err != nil || body.Error.Code != c.code || body.Error.Message == "" {
				t.Fatalf("body %s, want code %s", res.body, c.code)
			}
			var ptrs []string
			for _, f := range body.Error.Fields {
				if f.CallID != callID || f.Message == "" {
					t.Errorf("field %+v does not name call %s", f, callID)
				}
				ptrs = append(ptrs, f.Pointer)
			}
			if strings.Join(ptrs, ",") != strings.Join(c.fields, ",") || strings.Contains(string(res.body), "9999") {
				t.Errorf("fields %q, want %q (body %s)", ptrs, c.fields, res.body)
			}
			w.unchanged(before, id)
			if got := received(c.configuration); len(got) != 0 {
				t.Errorf("tool ran: %q", got)
			}
		})
	}
}

// copyBomb is a patch of n copies of the whole arguments into new keys, doubling them each time.
func copyBomb(n int) string {
	ops := make([]string, n)
	for i := range ops {
		ops[i] = fmt.Sprintf(`{"op":"copy","from":"","path":"/k%d"}`, i)
	}
	return "[" + strings.Join(ops, ",") + "]"
}
