package handlers

import (
	"context"
	"strings"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
)

// TestCardNamesRefusedArguments: in a turn that pauses for another call, a call whose
// arguments the model gave a key twice is shown with why they were refused and that it will
// be answered with an error.
func TestCardNamesRefusedArguments(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	cfg := deskConfiguration("dupmail", "Duplicate mail", false, model.Turn{ToolCalls: []model.ScriptedCall{
		deskCall("send_mail", `{"to":"a@example.com","to":"b@example.com"}`), deskCall("send_mail", deskArgs)}})
	if _, err := app.store.UpsertConfiguration(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	uuid := app.pause(runtime.RoleAdmin, "dupmail")
	if run := app.row(uuid); run.Status != runtime.StatusWaitingApproval {
		t.Fatalf("run is %s, want waiting for approval", run.Status)
	}
	page := app.login(runtime.RoleReviewer).get("/runs/" + uuid).doc(t).Text()
	want := "The model's arguments for this call were refused (duplicate key to); it will be answered with an error, not executed."
	if !strings.Contains(page, want) {
		t.Fatalf("the card does not say %q", want)
	}
}
