package handlers

import (
	"context"
	"strings"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
	"runsdesk/runtime/quorum"
	"runsdesk/views"
)

// TestEditOnTwoOfTwoCard: on a turn that needs two approvals, after rita's approval ada's
// card offers Edit and says editing voids the approval so far (so does the review page, with
// "1 of them"); ada's edit-and-approve is counted as 1 of 2 (rita's voided), her card then
// shows the edited call as pending, "1 of 2 approvals: ada" and who edited it; ada's approval
// posted from the card as it was before the edit is stale; rita's edit form starts from ada's
// edit; rita, offered Approve again, approves the edited call and the tool runs with it. The
// timeline says who edited and that the approval before was voided, and the run's call keeps
// the model's arguments beside the edited ones.
func TestEditOnTwoOfTwoCard(t *testing.T) {
	t.Parallel()
	app := newEditApp(t)
	cfg := runtime.Configuration{Identifier: "editquorum", Name: "Refunds by two", MaxIterations: 5, Tools: []string{"refund_edit"},
		Quorum: quorum.Policy{Required: 2}, Provider: model.Settings{Kind: "scripted", Script: []model.Turn{
			{ToolCalls: []model.ScriptedCall{deskCall("refund_edit", `{"order_id":"A1","amount":100}`)}}, {Content: "Done."}}}}
	if _, err := app.store.UpsertConfiguration(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	uuid := app.pause(runtime.RoleAdmin, "editquorum")
	rita, ada := app.login(runtime.RoleReviewer), app.login(runtime.RoleAdmin)
	wantSeeOther(t, "rita's approval", rita.postForm(views.RunPath(uuid)+"/approval", rita.approvalFormOf(uuid, views.DecisionApprove)), views.RunPath(uuid))

	before := ada.approvalFormOf(uuid, views.DecisionApprove)
	page := ada.get(views.RunPath(uuid)).doc(t)
	if got := strings.TrimSpace(page.Find(`[data-testid="votes-voids"]`).Text()); !strings.Contains(got, "Editing voids the 1 approval so far: they approved other arguments.") {
		t.Fatalf("ada's card before editing says %q", got)
	}
	href := page.Find(`[data-testid="edit-call"]`).AttrOr("href", "")
	if href == "" {
		t.Fatal("ada's card offers no Edit on a turn that needs two approvals")
	}
	values := formValues(ada.get(href).doc(t).Find(`[data-testid="input-form"]`))
	values.Set("input/amount", "40")
	review := ada.postForm(href, values).doc(t)
	if got := strings.TrimSpace(review.Find(`[data-testid="edit-vote-note"]`).Text()); !strings.Contains(got,
		"This turn needs 2 approvals: approving with these changes counts as 1 of them. Editing voids the 1 approval so far: they approved other arguments.") {
		t.Errorf("the review page says %q", got)
	}
	confirm := formValues(review.Find(`[data-testid="edit-approve-form"]`))
	confirm.Set(views.FieldDecision, views.DecisionApprove)
	wantSeeOther(t, "ada's edit", ada.postForm(views.RunPath(uuid)+"/approval", confirm), views.RunPath(uuid))
	if got := ada.flashTexts(); !strings.Contains(got, "Your approval was counted") {
		t.Errorf("ada's flash after the edit: %q", got)
	}
	if run := app.row(uuid); run.Status != runtime.StatusWaitingApproval {
		t.Fatalf("after the edit the run is %s, want waiting", run.Status)
	}

	page = ada.get(views.RunPath(uuid)).doc(t)
	votes := strings.Join(strings.Fields(page.Find(`[data-testid="votes"]`).Text()), " ")
	if !strings.Contains(votes, "1 of 2 approvals: ada, just now") || !strings.Contains(votes, "— the call above is the edited one, and approvals count for it.") || !strings.Contains(votes, "ada edited the arguments, just now (") {
		t.Errorf("ada's card after the edit says %q", votes)
	}
	if args := page.Find(`[data-testid="pending-call"]`).Text(); !strings.Contains(args, `"amount": 40`) || strings.Contains(args, `"amount": 100`) {
		t.Errorf("the pending call after the edit: %q", args)
	}
	wantSeeOther(t, "ada's approval of the turn before the edit", ada.postForm(views.RunPath(uuid)+"/approval", before), views.RunPath(uuid))
	if got := ada.flashTexts(); !strings.Contains(got, "The pending action changed") {
		t.Errorf("ada's flash after approving the old turn: %q", got)
	}

	ritaPage := rita.get(views.RunPath(uuid)).doc(t)
	if got := rita.get(ritaPage.Find(`[data-testid="edit-call"]`).AttrOr("href", "")).doc(t).Find(`[data-testid="edit-pending-title"]`).Text(); got != "What is pending: ada's edit of the model's call" {
		t.Errorf("rita's edit form after ada's edit is titled %q", got)
	}
	if ritaPage.Find(`[data-testid="approve"]`).Length() != 1 || ritaPage.Find(`[data-testid="votes-waiting"]`).Length() != 0 {
		t.Fatalf("rita, whose approval was voided, is not offered Approve again: %q", ritaPage.Find(`[data-testid="votes"]`).Text())
	}
	wantSeeOther(t, "rita's approval of the edit", rita.postForm(views.RunPath(uuid)+"/approval", rita.approvalFormOf(uuid, views.DecisionApprove)), views.RunPath(uuid))
	app.rt.Wait()
	if run := app.row(uuid); run.Status != runtime.StatusCompleted {
		t.Fatalf("after two approvals of the edit the run is %s", run.Status)
	}
	if got := app.ran(); len(got) != 1 || got[0] != `{"amount":40,"order_id":"A1"}` {
		t.Fatalf("the tool ran with %q, want the edited arguments once", got)
	}
	samPage := app.login(runtime.RoleSupport).get(views.RunPath(uuid)).doc(t)
	tl := strings.Join(strings.Fields(samPage.Find(`[data-testid="timeline"]`).Text()), " ")
	for _, want := range []string{"Approval 1 of 2 by rita; waiting for more", "Approval 1 of 2 by ada, with edited arguments; waiting for more",
		"the 1 earlier approval was voided: it approved other arguments", "Approved by rita, with edited arguments", "edited by ada"} {
		if !strings.Contains(tl, want) {
			t.Errorf("timeline lacks %q: %q", want, tl)
		}
	}
	done := samPage.Find(`[data-testid="run-call"]`)
	if !strings.Contains(done.Find(`[data-testid="call-proposed"]`).Text(), `"amount": 100`) || !strings.Contains(done.Text(), "edited by ada") {
		t.Errorf("run page's edited call: %q", done.Text())
	}
}
