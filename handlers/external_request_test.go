package handlers

import (
	"encoding/json"
	"strings"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/apply"
	"runsdesk/views"
)

// externalDesk applies an external configuration taking requests from the service account
// agent: a declared approval (wire_transfer) and a declared question (ask_budget).
func externalDesk(t *testing.T, app *testApp) {
	t.Helper()
	a := apply.New(apply.Config{Catalog: app.store, Rules: app.store})
	plan, err := a.Plan(t.Context(), []byte(`configurations:
  - identifier: outside
    name: Outside agents
    kind: external
    callers: [agent]
    tools: [wire_transfer, ask_budget]
tools:
  - name: wire_transfer
    parameters: {type: object, properties: {amount: {type: number}}}
    effect: non_idempotent_write
  - name: ask_budget
    input_schema: {type: object, required: [budget], properties: {budget: {type: integer, title: Budget}}}
`))
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	if _, err := a.Apply(t.Context(), plan); err != nil {
		t.Fatalf("apply: %v", err)
	}
}

// request creates a request of the service account agent, titled and with a message, and
// returns its id.
func (a *testApp) request(kind, name, args string) string {
	a.t.Helper()
	agent := runtime.Actor{Name: "agent", Role: runtime.RoleService, Scopes: []string{runtime.ScopeRead}}
	run, err := a.rt.CreateRequest(a.t.Context(), agent, runtime.NewRequest{Configuration: "outside", Kind: kind, Tool: name, Arguments: json.RawMessage(args),
		Title: "Agent asks: " + name, Message: "<b>Please</b> look at " + name})
	if err != nil {
		a.t.Fatalf("CreateRequest: %v", err)
	}
	return run.UUID
}

// TestPersonDecidesAnExternalRequest: a request waits in the inbox like any run, under its
// title; its card shows the message as the caller's untrusted words (as text, never markup);
// a person approves one and answers another through the run page's forms, and each ends
// completed, decided. The request's page passes the Nu HTML Checker.
func TestPersonDecidesAnExternalRequest(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	externalDesk(t, app)
	approval := app.request(runtime.RequestApproval, "wire_transfer", `{"amount":125}`)
	question := app.request(runtime.RequestInput, "ask_budget", `{}`)
	rita := app.login(runtime.RoleReviewer)
	inbox := rita.get("/runs?status=waiting").body
	for _, id := range []string{approval, question} {
		if !strings.Contains(inbox, views.RunPath(id)) {
			t.Errorf("the waiting runs do not list the request %s", id)
		}
	}
	if !strings.Contains(inbox, "Agent asks: wire_transfer") || !strings.Contains(inbox, "Agent asks: ask_budget") {
		t.Error("the waiting runs do not show the requests' titles")
	}
	page := rita.get(views.RunPath(approval))
	words := page.doc(t).Find(`[data-testid="model-words"]`)
	if !strings.Contains(words.Text(), "The caller's words") || words.Find(`[data-testid="caller-words"]`).Length() != 1 ||
		!strings.Contains(words.Text(), "<b>Please</b> look at wire_transfer") || strings.Contains(page.body, "<b>Please</b>") {
		t.Errorf("the card's words %q: want the message as the caller's, escaped", words.Text())
	}
	checkMarkup(t, map[string]string{"request": page.body})
	wantSeeOther(t, "approve", rita.postForm(views.RunPath(approval)+"/approval", rita.approvalFormOf(approval, "approve")), views.RunPath(approval))
	wantFlash(t, rita, "Approval recorded; the decision goes back to the agent that asked.")
	form, _ := rita.inputFormOf(question)
	form.Set("input/budget", "900")
	wantSeeOther(t, "answer", rita.postForm(views.RunPath(question)+"/input", form), views.RunPath(question))
	wantFlash(t, rita, "Answer recorded; it goes back to the agent that asked.")
	for _, id := range []string{approval, question} {
		if run := app.row(id); run.Status != runtime.StatusCompleted || run.TerminationReason != runtime.ReasonDecided {
			t.Errorf("request %s after the decision: %s/%s, want completed/decided", id, run.Status, run.TerminationReason)
		}
	}
}

// TestRequestCardShowsOnBehalfOf: the card of a request made on behalf of a person names
// them; a request without one shows no such line.
func TestRequestCardShowsOnBehalfOf(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	externalDesk(t, app)
	agent := runtime.Actor{Name: "agent", Role: runtime.RoleService, Scopes: []string{runtime.ScopeRequest}}
	run, err := app.rt.CreateRequest(t.Context(), agent, runtime.NewRequest{Configuration: "outside", Kind: runtime.RequestApproval, Tool: "wire_transfer",
		Arguments: json.RawMessage(`{"amount":5}`), OnBehalfOf: testUsers[runtime.RoleSupport]})
	if err != nil {
		t.Fatal(err)
	}
	plain := app.request(runtime.RequestApproval, "wire_transfer", `{"amount":6}`)
	rita := app.login(runtime.RoleReviewer)
	if got := rita.get(views.RunPath(run.UUID)).doc(t).Find(`[data-testid="run-card-on-behalf-of"]`).Text(); got != testUsers[runtime.RoleSupport] {
		t.Errorf("card on behalf of %q, want %q", got, testUsers[runtime.RoleSupport])
	}
	if n := rita.get(views.RunPath(plain)).doc(t).Find(`[data-testid="run-card-on-behalf-of"]`).Length(); n != 0 {
		t.Errorf("a request without on_behalf_of shows %d such lines", n)
	}
}

// TestReplayedRequestDecisionFlash: a repeat of the same approval or answer of a request (the
// same form posted again: its idempotency key replays the first outcome) says, as the first
// did, that the decision goes back to the agent, never that the run continues.
func TestReplayedRequestDecisionFlash(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	externalDesk(t, app)
	approval := app.request(runtime.RequestApproval, "wire_transfer", `{"amount":125}`)
	question := app.request(runtime.RequestInput, "ask_budget", `{}`)
	rita := app.login(runtime.RoleReviewer)
	approve := rita.approvalFormOf(approval, "approve")
	form, _ := rita.inputFormOf(question)
	form.Set("input/budget", "900")
	for range 2 {
		wantSeeOther(t, "approve", rita.postForm(views.RunPath(approval)+"/approval", approve), views.RunPath(approval))
		wantFlash(t, rita, "Approval recorded; the decision goes back to the agent that asked.")
		wantSeeOther(t, "answer", rita.postForm(views.RunPath(question)+"/input", form), views.RunPath(question))
		wantFlash(t, rita, "Answer recorded; it goes back to the agent that asked.")
	}
}

// TestPersonAnswersAdHocRequests: in a configuration with ad_hoc: true, an agent asks the
// approval of an action nothing declares — its card shows the tool and its arguments as JSON
// and a person approves it — and a question with its own schema, whose form the run page
// renders from the schema stored with the pause and a person answers; both end decided, and
// the caller is answered the decision and the values.
func TestPersonAnswersAdHocRequests(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	a := apply.New(apply.Config{Catalog: app.store, Rules: app.store})
	plan, err := a.Plan(t.Context(), []byte(`configurations:
  - identifier: anything
    name: Anything agents ask
    kind: external
    callers: [agent]
    ad_hoc: true
`))
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	if _, err := a.Apply(t.Context(), plan); err != nil {
		t.Fatalf("apply: %v", err)
	}
	agent := runtime.Actor{Name: "agent", Role: runtime.RoleService, Scopes: []string{runtime.ScopeRequest}}
	action, err := app.rt.CreateRequest(t.Context(), agent, runtime.NewRequest{Configuration: "anything", Kind: runtime.RequestApproval,
		Tool: "deploy_service", Arguments: json.RawMessage(`{"service":"billing","version":"1.4.2"}`)})
	if err != nil {
		t.Fatal(err)
	}
	question, err := app.rt.CreateRequest(t.Context(), agent, runtime.NewRequest{Configuration: "anything", Kind: runtime.RequestInput,
		Tool: "ask_colour", Title: "Which colour?", Schema: json.RawMessage(`{"type":"object","required":["colour"],"properties":{"colour":{"type":"string","title":"Colour"}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	rita := app.login(runtime.RoleReviewer)
	page := rita.get(views.RunPath(action.UUID))
	doc := page.doc(t)
	if tool := doc.Find(`[data-testid="call-tool"]`).Text(); tool != "deploy_service" ||
		!strings.Contains(doc.Find(`[data-testid="call-arguments"]`).Text(), `"version": "1.4.2"`) {
		t.Errorf("the ad hoc approval's card: tool %q, arguments %q", tool, doc.Find(`[data-testid="call-arguments"]`).Text())
	}
	checkMarkup(t, map[string]string{"ad hoc approval": page.body})
	wantSeeOther(t, "approve", rita.postForm(views.RunPath(action.UUID)+"/approval", rita.approvalFormOf(action.UUID, "approve")), views.RunPath(action.UUID))
	wantFlash(t, rita, "Approval recorded; the decision goes back to the agent that asked.")

	form, doc := rita.inputFormOf(question.UUID)
	if doc.Find(`input[name="input/colour"]`).Length() != 1 {
		t.Fatal("the ad hoc question's form has no colour field")
	}
	form.Set("input/colour", "teal")
	wantSeeOther(t, "answer", rita.postForm(views.RunPath(question.UUID)+"/input", form), views.RunPath(question.UUID))
	wantFlash(t, rita, "Answer recorded; it goes back to the agent that asked.")
	app.rt.Wait()
	if ans, err := app.rt.RequestAnswer(t.Context(), agent, action.UUID); err != nil || ans.Status != runtime.RequestApproved {
		t.Errorf("the ad hoc approval's answer %+v, %v", ans, err)
	}
	if ans, err := app.rt.RequestAnswer(t.Context(), agent, question.UUID); err != nil || ans.Status != runtime.RequestAnswered || ans.Decision.Values["colour"] != "teal" {
		t.Errorf("the ad hoc question's answer %+v, %v", ans, err)
	}
}
