package engine_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"runsdesk/runtime"
)

// adHocEnv is externalEnv whose configuration sets ad_hoc: true.
func adHocEnv(t *testing.T) *env {
	t.Helper()
	e := externalEnv(t)
	e.cfg.External.AdHoc = true
	e.saveConfig()
	return e
}

const colourSchema = `{"type":"object","required":["colour"],"properties":{"colour":{"type":"string","title":"Colour"}}}`

// TestAdHocApproval: with ad_hoc: true a request may ask for the approval of an action the
// configuration does not declare: it waits with the call as given, its tool registered and
// offered (a write without parameters, so its arguments show as JSON), a person may approve
// it, and the caller is answered approved.
func TestAdHocApproval(t *testing.T) {
	e := adHocEnv(t)
	run := e.request(runtime.RequestApproval, "deploy_service", `{"service":"billing","version":"1.4.2"}`, runtime.StatusWaitingApproval)
	v := e.view(run.UUID)
	info := v.Pause.Tools["deploy_service"]
	if !info.Registered || !info.Offered || info.Editable || info.Effect != "non_idempotent_write" ||
		string(v.Pause.PendingCalls[0].Function.Arguments) != `{"service":"billing","version":"1.4.2"}` {
		t.Fatalf("ad hoc approval's pause %+v, tool %+v", v.Pause, info)
	}
	if got, err := e.rt.Get(e.ctx, admin, run.UUID); err != nil || len(got.Pause.Gate.Refusals) != 0 {
		t.Fatalf("the gate of an admin on the ad hoc approval: %+v, %v", got.Pause.Gate, err)
	}
	approve(t, e, admin, run.UUID, true)
	e.wantDecided(run.UUID)
	if ans := e.answerOf(run.UUID); ans.Status != runtime.RequestApproved {
		t.Errorf("answer %+v", ans)
	}
}

// TestAdHocQuestion: with ad_hoc: true a question of an undeclared name carries its own
// schema, stored with the pause: the view's schema and form are the request's, a submission
// is validated against it (an invalid one refused, nothing decided), and the caller is
// answered the values.
func TestAdHocQuestion(t *testing.T) {
	e := adHocEnv(t)
	run, err := e.rt.CreateRequest(e.ctx, service, runtime.NewRequest{Configuration: "test", Kind: runtime.RequestInput, Tool: "ask_colour",
		Arguments: json.RawMessage(`{"room":"hall"}`), Schema: json.RawMessage(strings.ReplaceAll(colourSchema, ",", ", "))})
	if err != nil {
		t.Fatal(err)
	}
	v := e.view(run.UUID)
	if run.Status != runtime.StatusWaitingInput || v.Pause.InputTool != "ask_colour" || string(v.Pause.InputSchema) != colourSchema || v.Pause.Form == nil {
		t.Fatalf("ad hoc question %s, pause %+v", run.Status, v.Pause)
	}
	_, err = e.rt.SubmitInput(e.ctx, admin, run.UUID, runtime.InputSubmission{Data: map[string]any{"colour": 7}, TurnDigest: v.Pause.Digest})
	if !errors.Is(err, &runtime.Error{Code: runtime.CodeInvalidInputSubmission}) {
		t.Fatalf("an invalid answer: %v", err)
	}
	if _, err := e.rt.SubmitInput(e.ctx, admin, run.UUID, runtime.InputSubmission{Data: map[string]any{"colour": "teal"}, TurnDigest: v.Pause.Digest}); err != nil {
		t.Fatal(err)
	}
	e.wantDecided(run.UUID)
	if ans := e.answerOf(run.UUID); ans.Status != runtime.RequestAnswered || ans.Decision == nil || ans.Decision.Values["colour"] != "teal" {
		t.Errorf("answer %+v", ans)
	}
}

// TestAdHocRefusals: without ad_hoc an undeclared tool stays unknown_tool, and so does a
// tool the desk has that the configuration does not offer; a schema with a declared tool or
// an approval, a question without a schema, a name outside the tool name rule, and a schema
// that is over 64 KiB, declares more than 200 fields (counted at every depth), does not
// compile or yields no form are invalid_schema (the schema's naming its limit); nothing is
// stored.
func TestAdHocRefusals(t *testing.T) {
	e := externalEnv(t)
	if _, err := e.rt.CreateRequest(e.ctx, service, runtime.NewRequest{Configuration: "test", Kind: "approval", Tool: "deploy_service"}); !errors.Is(err, &runtime.Error{Code: runtime.CodeUnknownTool}) {
		t.Errorf("undeclared tool without ad_hoc: %v, want unknown_tool", err)
	}
	e.cfg.External.AdHoc = true
	e.saveConfig()
	props := func(n int) string {
		var p []string
		for i := range n {
			p = append(p, fmt.Sprintf(`"f%d":{"type":"string"}`, i))
		}
		return strings.Join(p, ",")
	}
	for _, tc := range []struct {
		name   string
		req    runtime.NewRequest
		code   runtime.Code
		schema bool
		says   string
	}{
		{"a tool the desk has but the configuration does not offer", runtime.NewRequest{Kind: "approval", Tool: "lookup"}, runtime.CodeUnknownTool, false, ""},
		{"a schema with a declared question", runtime.NewRequest{Kind: "input", Tool: "ask_budget", Schema: json.RawMessage(colourSchema)}, runtime.CodeInvalidRequest, false, "ad hoc"},
		{"a schema with an approval", runtime.NewRequest{Kind: "approval", Tool: "deploy", Schema: json.RawMessage(colourSchema)}, runtime.CodeInvalidRequest, false, "question"},
		{"a question without a schema", runtime.NewRequest{Kind: "input", Tool: "ask_colour"}, runtime.CodeInvalidSchema, true, `"schema"`},
		{"a name outside the rule", runtime.NewRequest{Kind: "approval", Tool: "deploy service"}, runtime.CodeInvalidRequest, false, "name"},
		{"a question's name outside the rule", runtime.NewRequest{Kind: "input", Tool: "ask colour", Schema: json.RawMessage(colourSchema)}, runtime.CodeInvalidRequest, false, "name"},
		{"over 64 KiB", runtime.NewRequest{Kind: "input", Tool: "ask", Schema: json.RawMessage(`{"type":"object","description":"` + strings.Repeat("x", 64<<10) + `","properties":{"a":{"type":"string"}}}`)}, runtime.CodeInvalidSchema, true, "64 KiB"},
		{"201 fields", runtime.NewRequest{Kind: "input", Tool: "ask", Schema: json.RawMessage(`{"type":"object","properties":{` + props(201) + `}}`)}, runtime.CodeInvalidSchema, true, "201 fields, more than 200"},
		{"201 fields nested", runtime.NewRequest{Kind: "input", Tool: "ask", Schema: json.RawMessage(`{"type":"object","properties":{` + props(150) + `,"more":{"type":"object","properties":{` + props(50) + `}}}}`)}, runtime.CodeInvalidSchema, true, "201 fields"},
		{"does not compile", runtime.NewRequest{Kind: "input", Tool: "ask", Schema: json.RawMessage(`{"type":"nothing","properties":{"a":{"type":"string"}}}`)}, runtime.CodeInvalidSchema, true, "compile"},
		{"no form", runtime.NewRequest{Kind: "input", Tool: "ask", Schema: json.RawMessage(`{"type":"object"}`)}, runtime.CodeInvalidSchema, true, "form"},
		{"a list", runtime.NewRequest{Kind: "input", Tool: "ask", Schema: json.RawMessage(`[1]`)}, runtime.CodeInvalidSchema, true, "one JSON object"},
	} {
		tc.req.Configuration = "test"
		_, err := e.rt.CreateRequest(e.ctx, service, tc.req)
		var re *runtime.Error
		if !errors.As(err, &re) || re.Code != tc.code || errors.Is(err, runtime.ErrUnusableSchema) != tc.schema || !strings.Contains(re.Message, tc.says) {
			t.Errorf("%s: %v, want %s (schema refusal %v) saying %q", tc.name, err, tc.code, tc.schema, tc.says)
		}
	}
	if _, err := e.rt.CreateRequest(e.ctx, service, runtime.NewRequest{Configuration: "test", Kind: "input", Tool: "ask",
		Schema: json.RawMessage(`{"type":"object","properties":{` + props(200) + `}}`)}); err != nil {
		t.Errorf("200 fields: %v, want the question created", err)
	}
	if n := e.countRows(`SELECT COUNT(*) FROM tx_nrllm_agentrun`); n != 1 {
		t.Errorf("%d runs stored, want only the question within the limits", n)
	}
}

// TestAdHocQuestionReplay: the same ad hoc question under the same external_id answers the
// request already created; a different schema under it is external_id_conflict.
func TestAdHocQuestionReplay(t *testing.T) {
	e := adHocEnv(t)
	req := runtime.NewRequest{Configuration: "test", Kind: "input", Tool: "ask_colour", ExternalID: "q-1", Schema: json.RawMessage(colourSchema)}
	first, err := e.rt.CreateRequest(e.ctx, service, req)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := e.rt.CreateRequest(e.ctx, service, req); err != nil || again.UUID != first.UUID {
		t.Errorf("replay: %s, %v; want %s", again.UUID, err, first.UUID)
	}
	req.Schema = json.RawMessage(`{"type":"object","properties":{"shade":{"type":"string"}}}`)
	if _, err := e.rt.CreateRequest(e.ctx, service, req); !errors.Is(err, &runtime.Error{Code: runtime.CodeExternalIDConflict}) {
		t.Errorf("another schema under the external_id: %v, want external_id_conflict", err)
	}
}
