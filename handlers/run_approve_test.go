package handlers

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
	"runsdesk/runtime/tool"
)

func TestApproveContinuesTheRun(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	uuid := app.pause(runtime.RoleAdmin, "mail")
	rita := app.login(runtime.RoleReviewer)
	form := rita.approvalFormOf(uuid, "approve")
	form.Set("reason", "checked with ops")
	res := rita.postForm("/runs/"+uuid+"/approval", form)
	wantSeeOther(t, "approve", res, "/runs/"+uuid)
	if got := rita.flashTexts(); got != "Approval recorded; the run continues." {
		t.Errorf("flash %q", got)
	}
	if run := app.row(uuid); run.Status != runtime.StatusCompleted {
		t.Fatalf("run after approval: %s, want completed", run.Status)
	}
	var approval []runtime.Event
	for _, e := range app.storedEvents(uuid) {
		if strings.Contains(string(e.Payload), "checked with ops") {
			t.Errorf("event %s carries the reason: %s", e.Kind, e.Payload)
		}
		if e.Kind == runtime.EventApproval {
			approval = append(approval, e)
		}
	}
	if len(approval) != 1 || string(approval[0].Payload) != `{"approved":true,"decidedBy":`+strconv.FormatInt(app.uids[runtime.RoleReviewer], 10)+`,"reasonGiven":true}` {
		t.Errorf("approval events %+v, want one {approved, decidedBy, reasonGiven}", approval)
	}
	rows, err := app.audit.RecentAudit(t.Context(), 10)
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(rows, func(r runtime.AuditEntry) bool { return r.Action == "approval" }); i < 0 ||
		rows[i].Outcome != "approved" || rows[i].RunUUID != uuid || !strings.Contains(rows[i].Reason, "checked with ops") || rows[i].ActorName != "rita" {
		t.Errorf("audit rows %+v: want one approval row with the reason", rows)
	}
	page := rita.get("/runs/" + uuid)
	doc := page.doc(t)
	timeline := doc.Find(`[data-testid="timeline"]`).Text()
	if !strings.Contains(timeline, "Approved by rita") || !strings.Contains(timeline, "reason: checked with ops") {
		t.Errorf("timeline %q does not say who approved and why", timeline)
	}
	if strings.Contains(timeline, deskSecret) {
		t.Error("the finished run's timeline shows argument values")
	}
	if got := doc.Find(`[data-testid="call-effective"]`).Text(); !strings.Contains(got, deskSecret) {
		t.Errorf("the calls section %q does not show the arguments the tool was sent", got)
	}
	if m := rita.get("/metrics").body; !strings.Contains(m, `runsdesk_decisions_total{kind="approval",outcome="approved"} 1`) {
		t.Error("the decision was not counted in /metrics")
	}
}

func TestDenyContinuesTheRun(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	uuid := app.pause(runtime.RoleAdmin, "wipe")
	ada := app.login(runtime.RoleAdmin)
	wantSeeOther(t, "deny", ada.postForm("/runs/"+uuid+"/approval", ada.approvalFormOf(uuid, "deny")), "/runs/"+uuid)
	if got := ada.flashTexts(); got != "Denial recorded; the run continues." {
		t.Errorf("flash %q", got)
	}
	if run := app.row(uuid); run.Status != runtime.StatusCompleted {
		t.Errorf("run after denial: %s, want completed (the model continues from the refusal)", run.Status)
	}
	if got := ada.get("/runs/" + uuid).doc(t).Find(`[data-testid="timeline"]`).Text(); !strings.Contains(got, "Denied by ada") {
		t.Errorf("timeline %q does not say who denied", got)
	}
}

func TestApprovalReplayRedirectsLikeTheFirst(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	uuid := app.pause(runtime.RoleAdmin, "mail")
	rita := app.login(runtime.RoleReviewer)
	form := rita.approvalFormOf(uuid, "approve")
	first := rita.postForm("/runs/"+uuid+"/approval", form)
	second := rita.postForm("/runs/"+uuid+"/approval", form)
	wantSeeOther(t, "first POST", first, "/runs/"+uuid)
	wantSeeOther(t, "replayed POST", second, "/runs/"+uuid)
	if got := rita.flashTexts(); strings.Count(got, "Approval recorded; the run continues.") != 2 {
		t.Errorf("flashes %q, want the success message twice", got)
	}
	n := 0
	for _, e := range app.storedEvents(uuid) {
		if e.Kind == runtime.EventApproval {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d approval events, want 1", n)
	}
}

func TestApprovalRefusalsLeaveTheRunWaiting(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	rita, ada := app.login(runtime.RoleReviewer), app.login(runtime.RoleAdmin)
	cases := []struct {
		name, configuration string
		starter             runtime.Role
		who                 *client
		form                func(uuid string) url.Values
		want                string
	}{
		{"stale digest", "mail", runtime.RoleAdmin, rita, func(uuid string) url.Values {
			f := rita.approvalFormOf(uuid, "approve")
			f.Set("turn_digest", strings.Repeat("0", 64))
			return f
		}, "The pending action changed — please re-review."},
		{"missing digest", "mail", runtime.RoleAdmin, rita, func(uuid string) url.Values {
			f := rita.approvalFormOf(uuid, "approve")
			f.Del("turn_digest")
			return f
		}, "The pending action changed — please re-review."},
		{"four eyes", "foureyes", runtime.RoleReviewer, rita, func(uuid string) url.Values {
			f := rita.approvalFormOf(uuid, "deny")
			f.Set("decision", "approve")
			return f
		}, "This configuration requires a second person: you started this run, so you may deny it but not approve it."},
		{"admin-only write", "refund", runtime.RoleAdmin, rita, func(uuid string) url.Values {
			f := rita.approvalFormOf(uuid, "deny")
			f.Set("decision", "approve")
			return f
		}, "You may not approve this turn: one of its tools is restricted to admins or no longer enabled."},
		{"input run", "ask", runtime.RoleAdmin, ada, func(uuid string) url.Values {
			return url.Values{"_csrf": {ada.token()}, "decision": {"approve"}, "turn_digest": {"x"}}
		}, "This run is not waiting for an approval; nothing was decided."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			uuid := app.pause(tc.starter, tc.configuration)
			before := app.row(uuid)
			res := tc.who.postForm("/runs/"+uuid+"/approval", tc.form(uuid))
			wantSeeOther(t, tc.name, res, "/runs/"+uuid)
			if got := tc.who.flashTexts(); got != tc.want {
				t.Errorf("flash %q, want %q", got, tc.want)
			}
			if after := app.row(uuid); after.Status != before.Status || after.Tstamp != before.Tstamp {
				t.Errorf("run changed: %s → %s", before.Status, after.Status)
			}
			if tc.name == "admin-only write" {
				// The flash is a fixed text; the run page it lands on names the tool.
				note := tc.who.get("/runs/" + uuid).doc(t).Find(`[data-testid="run-card-note"]`).Text()
				if !strings.Contains(note, "issue_refund") || !strings.Contains(note, "admin-only") {
					t.Errorf("run page note %q does not say which tool is admin-only", note)
				}
			}
		})
	}
	t.Run("four eyes hides approve from the starter", func(t *testing.T) {
		uuid := app.pause(runtime.RoleReviewer, "foureyes")
		card := rita.get("/runs/" + uuid).doc(t).Find(`[data-testid="run-card"]`)
		if card.Find(`[data-testid="approve"]`).Length() != 0 || card.Find(`[data-testid="deny"]`).Length() != 1 {
			t.Error("the starter of a four-eyes run is offered Approve")
		}
		if !strings.Contains(card.Find(`[data-testid="run-card-note"]`).Text(), "requires a second person") {
			t.Error("the starter is not told why Approve is missing")
		}
		wantSeeOther(t, "deny by starter", rita.postForm("/runs/"+uuid+"/approval", rita.approvalFormOf(uuid, "deny")), "/runs/"+uuid)
		if got := rita.flashTexts(); got != "Denial recorded; the run continues." {
			t.Errorf("the starter's denial: flash %q", got)
		}
	})
}

// TestApprovalAlreadyDecidedNamesTheDecider: a decision after someone else's is refused with
// the run page (409) saying who decided first, when and what, and keeping the reason typed.
func TestApprovalAlreadyDecidedNamesTheDecider(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	uuid := app.pause(runtime.RoleAdmin, "mail")
	rita, ada := app.login(runtime.RoleReviewer), app.login(runtime.RoleAdmin)
	late := rita.approvalFormOf(uuid, "deny")
	late.Set("reason", "not this customer")
	wantSeeOther(t, "admin approves", ada.postForm("/runs/"+uuid+"/approval", ada.approvalFormOf(uuid, "approve")), "/runs/"+uuid)
	app.rt.Wait()
	res := rita.postForm("/runs/"+uuid+"/approval", late)
	wantDecidedFirst(t, "late decision", res, "This run was already decided: Approved by ada at <time>. Your decision was not used.")
	if got := res.doc(t).Find(`[data-testid="late-decision-value"]`).Text(); !strings.Contains(got, "not this customer") {
		t.Errorf("the typed reason is not kept on the page: %q", got)
	}
}

// TestStaleTurnNamesTheDecision: a decision on a turn someone else decided, after the run
// paused again on another turn, is refused with the run page (409) saying who decided the
// turn, when and what, and that the run now waits on another turn, which it shows.
func TestStaleTurnNamesTheDecision(t *testing.T) {
	t.Parallel()
	twice := model.Turn{ToolCalls: []model.ScriptedCall{deskCall("send_mail", deskArgs)}}
	app := newTestApp(t, appOptions{tools: []tool.Tool{deskMailTool{deskTool{"send_mail"}}},
		configurations: []runtime.Configuration{deskConfiguration("twice", "Mail twice", false, twice, twice)}})
	uuid := app.pause(runtime.RoleAdmin, "twice")
	rita, ada := app.login(runtime.RoleReviewer), app.login(runtime.RoleAdmin)
	late := rita.approvalFormOf(uuid, "approve")
	wantSeeOther(t, "admin denies", ada.postForm("/runs/"+uuid+"/approval", ada.approvalFormOf(uuid, "deny")), "/runs/"+uuid)
	if s := app.row(uuid).Status; s != runtime.StatusWaitingApproval {
		t.Fatalf("after the denial the run is %s, want waiting on its second turn", s)
	}
	res := rita.postForm("/runs/"+uuid+"/approval", late)
	wantDecidedFirst(t, "stale turn", res, "The turn you reviewed was decided first: Denied by ada at <time>. The run now waits on another turn; your decision was not used. Review the turn below.")
	if res.doc(t).Find(`[data-testid="approval-form"]`).Length() != 1 {
		t.Error("the page does not show the new turn's form")
	}
}

// wantDecidedFirst checks res is the run page answering a decision another came before (409),
// saying want (its time as "<time>").
func wantDecidedFirst(t *testing.T, what string, res response, want string) {
	t.Helper()
	if res.status != http.StatusConflict {
		t.Fatalf("%s: %d, want 409; body %.300s", what, res.status, res.body)
	}
	got := strings.Join(strings.Fields(res.doc(t).Find(`[data-testid="late-decision-text"]`).Text()), " ")
	if got = decisionTimes.ReplaceAllString(got, "at <time>"); got != want {
		t.Errorf("%s: the page says %q, want %q", what, got, want)
	}
}

func TestApprovalBadRequests(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	uuid := app.pause(runtime.RoleAdmin, "mail")
	rita := app.login(runtime.RoleReviewer)
	form := rita.approvalFormOf(uuid, "approve")
	for _, tc := range []struct {
		name, path string
		edit       func(url.Values)
		status     int
	}{
		{"no decision", "/runs/" + uuid + "/approval", func(v url.Values) { v.Del("decision") }, http.StatusBadRequest},
		{"odd decision", "/runs/" + uuid + "/approval", func(v url.Values) { v.Set("decision", "maybe") }, http.StatusBadRequest},
		{"long reason", "/runs/" + uuid + "/approval", func(v url.Values) { v.Set("reason", strings.Repeat("x", runtime.MaxReasonCharacters+1)) }, http.StatusBadRequest},
		{"long key", "/runs/" + uuid + "/approval", func(v url.Values) { v.Set("idempotency_key", strings.Repeat("k", 65)) }, http.StatusBadRequest},
		{"unknown run", "/runs/0a6e2b58-1234-4abc-9def-000000000000/approval", func(url.Values) {}, http.StatusNotFound},
		{"not a run id", "/runs/%3Cscript%3E/approval", func(url.Values) {}, http.StatusNotFound},
	} {
		v := url.Values{}
		for k, vs := range form {
			v[k] = slices.Clone(vs)
		}
		tc.edit(v)
		if res := rita.postForm(tc.path, v); res.status != tc.status {
			t.Errorf("%s: %d, want %d", tc.name, res.status, tc.status)
		}
	}
	if run := app.row(uuid); run.Status != runtime.StatusWaitingApproval {
		t.Errorf("bad requests changed the run: %s", run.Status)
	}
	support := app.login(runtime.RoleSupport)
	if res := support.postForm("/runs/"+uuid+"/approval", url.Values{"_csrf": {support.token()}, "decision": {"approve"}}); res.status != http.StatusForbidden {
		t.Errorf("support approving: %d, want 403", res.status)
	}
}

// TestRequestChangesFromTheCard: the card's Request changes with the reason as the instructions
// continues the run without running the call, flashes so, and the timeline says who asked for
// what; without a reason it is 400 and decides nothing.
func TestRequestChangesFromTheCard(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	uuid := app.pause(runtime.RoleAdmin, "mail")
	rita := app.login(runtime.RoleReviewer)
	form := rita.approvalFormOf(uuid, "request_changes")
	if res := rita.postForm("/runs/"+uuid+"/approval", form); res.status != http.StatusBadRequest {
		t.Fatalf("request changes without a reason: %d, want 400", res.status)
	}
	if run := app.row(uuid); run.Status != runtime.StatusWaitingApproval {
		t.Fatalf("an empty request for changes left the run %s", run.Status)
	}
	form.Set("reason", "write to the customer's second address")
	wantSeeOther(t, "request changes", rita.postForm("/runs/"+uuid+"/approval", form), "/runs/"+uuid)
	if got := rita.flashTexts(); got != "Changes requested; the model is told what to revise and the run continues." {
		t.Errorf("flash %q", got)
	}
	if run := app.row(uuid); run.Status != runtime.StatusCompleted {
		t.Fatalf("run after the request: %s, want completed", run.Status)
	}
	timeline := rita.get("/runs/" + uuid).doc(t).Find(`[data-testid="timeline"]`).Text()
	if !strings.Contains(timeline, "Changes requested by rita") || !strings.Contains(timeline, "asked: write to the customer's second address") {
		t.Errorf("timeline %q does not say who asked for what", timeline)
	}
}
