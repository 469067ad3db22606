package handlers

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
	"runsdesk/views"
)

// TestApprovalAgainstChangedPolicyShowsWhatChanged: a page's approval posted after the
// configuration turned four-eyes on is refused with the tool-changed flash, the run still
// waits, the page then lists the change, and its form approves.
func TestApprovalAgainstChangedPolicyShowsWhatChanged(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	uuid := app.pause(runtime.RoleAdmin, "mail")
	rita := app.login(runtime.RoleReviewer)
	form := rita.approvalFormOf(uuid, "approve")
	if form.Get(views.FieldPinDigest) == "" {
		t.Fatalf("approval form lacks %s: %v", views.FieldPinDigest, form)
	}
	cfg := deskConfiguration("mail", "Mail assistant", true, model.Turn{ToolCalls: []model.ScriptedCall{deskCall("send_mail", deskArgs)}})
	if _, err := app.store.UpsertConfiguration(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	wantSeeOther(t, "approve after the change", rita.postForm("/runs/"+uuid+"/approval", form), "/runs/"+uuid)
	if got := rita.flashTexts(); got != "A setting of the run's configuration changed since this run paused — review it again." {
		t.Errorf("flash %q: want a changed setting, not a changed tool", got)
	}
	if run := app.row(uuid); run.Status != runtime.StatusWaitingApproval {
		t.Fatalf("run after the refused approval: %s", run.Status)
	}
	time.Sleep(2100 * time.Millisecond)
	changes := rita.get("/runs/" + uuid).doc(t).Find(`[data-testid="run-card-changes"]`)
	heading := "The configuration's setting “a second person must approve (four-eyes)” (was off, now on) changed since this run paused — review it again."
	var cells []string
	changes.Find(`[data-testid="run-card-change"] td`).Each(func(_ int, s *goquery.Selection) { cells = append(cells, strings.TrimSpace(s.Text())) })
	if got := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(changes.Find("p").Text()), "⚠")); changes.Length() != 1 || got != heading ||
		strings.Join(cells, " | ") != "configuration | a second person must approve (four-eyes) | off | on" {
		t.Fatalf("the card does not name the setting that changed: %q, rows %q", got, cells)
	}
	wantSeeOther(t, "approve after review", rita.postForm("/runs/"+uuid+"/approval", rita.approvalFormOf(uuid, "approve")), "/runs/"+uuid)
	if got := rita.flashTexts(); got != "Approval recorded; the run continues." {
		t.Errorf("flash after review %q", got)
	}
}

// TestInputToUnpinnedPauseNeedsReview: an input pause stored without pinned definitions
// refuses a form that carries no pin digest (tool-changed flash) and accepts the page's form,
// which carries the current one.
func TestInputToUnpinnedPauseNeedsReview(t *testing.T) {
	t.Parallel()
	w := newInputWorld(t)
	v := w.waitingRun("details")
	var st map[string]json.RawMessage
	if err := json.Unmarshal([]byte(w.app.row(v.Run.UUID).SuspendedState), &st); err != nil {
		t.Fatal(err)
	}
	delete(st, "definitions")
	old, _ := json.Marshal(st)
	if _, err := w.app.pool.ExecContext(context.Background(), `UPDATE tx_nrllm_agentrun SET suspended_state = ? WHERE uuid = ?`, string(old), v.Run.UUID); err != nil {
		t.Fatal(err)
	}
	rita := w.app.login(runtime.RoleReviewer)
	fields := url.Values{"input/amount": {"12"}, "input/method": {"card"}}
	wantSeeOtherToRun(t, "submit without a pin digest", rita.postForm(inputPath(v), submission(rita, v, "k1", fields)), v.Run.UUID)
	if got := flashes(rita); len(got) != 1 || !strings.Contains(got[0], "The tool changed since this run paused") {
		t.Fatalf("flashes %q", got)
	}
	page := rita.get("/runs/" + v.Run.UUID).doc(t)
	if !strings.Contains(page.Find(`[data-testid="run-card-changes"]`).Text(), "not recorded") {
		t.Fatalf("the card does not say the pause has no pin")
	}
	pin, _ := page.Find(`[data-testid="input-form"] input[name="` + views.FieldPinDigest + `"]`).Attr("value")
	form := submission(rita, v, "k2", fields)
	form.Set(views.FieldPinDigest, pin)
	wantSeeOtherToRun(t, "submit with the page's pin digest", rita.postForm(inputPath(v), form), v.Run.UUID)
	if st := w.app.row(v.Run.UUID).Status; st == runtime.StatusWaitingInput {
		t.Fatalf("run still waits for input after a submission bound to the current definitions")
	}
}

// TestRunPageSaysApprovedByRule: a turn a standing approval covers is approved when it
// pauses, and the run page names the rule.
func TestRunPageSaysApprovedByRule(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	rule := runtime.StandingApproval{Name: "wipe-all", Tool: "wipe_cache", When: json.RawMessage(`{"type":"object","properties":{"scope":{"const":"all"}}}`)}
	if err := app.store.WriteStandingApprovals(context.Background(), []runtime.StandingApproval{rule}, nil, app.uids[runtime.RoleAdmin]); err != nil {
		t.Fatal(err)
	}
	uuid := app.pause(runtime.RoleReviewer, "wipe")
	app.rt.Wait()
	if run := app.row(uuid); run.Status != runtime.StatusCompleted {
		t.Fatalf("run covered by a rule: %s, want completed", run.Status)
	}
	ada := app.login(runtime.RoleAdmin)
	page := ada.get("/runs/" + uuid)
	if page.status != http.StatusOK || !strings.Contains(page.doc(t).Find(`[data-testid="timeline"]`).Text(), "Approved by rule wipe-all") {
		t.Fatalf("timeline does not name the rule: %d %.500s", page.status, page.doc(t).Find(`[data-testid="timeline"]`).Text())
	}
}
