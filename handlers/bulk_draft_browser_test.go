package handlers

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"runsdesk/runtime"
	"runsdesk/views"
)

func TestBrowserBulkBatchWithOneStaleItem(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	runs := []string{app.pause(runtime.RoleAdmin, "mail"), app.pause(runtime.RoleAdmin, "mail"), app.pause(runtime.RoleAdmin, "mail")}
	fresh, decided, changed := runs[0], runs[1], runs[2]
	b := newTab(t, app)
	b.signIn(runtime.RoleReviewer)
	b.open("/runs")
	group := evalIn[string](b, `document.querySelector('[data-testid="bulk-select"]').getAttribute("form")`)
	for _, r := range runs {
		b.do("select "+r, chromedp.Click(chromedp.CSS(row(r, `[data-testid="bulk-select"]`))))
	}
	b.screenshot("bulk-inbox-selected")
	b.do("review the selection",
		chromedp.Click(chromedp.CSS(`form[id="`+group+`"] [data-testid="bulk-review"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="bulk-form"]`)))
	if n := b.count(`[data-testid="bulk-item"]`); n != 3 {
		t.Fatalf("the confirmation lists %d runs, want 3", n)
	}
	if n := b.count(`[data-testid="bulk-item"] [data-testid="call-arguments"]`); n != 3 {
		t.Errorf("the confirmation shows %d arguments, want each run's", n)
	}
	b.screenshot("bulk-confirm")

	ctx, ada := t.Context(), app.deskActor(runtime.RoleAdmin)
	view, err := app.rt.Get(ctx, ada, decided)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.rt.Approve(ctx, ada, decided, runtime.ApprovalDecision{Approved: true, TurnDigest: view.Pause.Digest}); err != nil {
		t.Fatalf("a decision in between: %v", err)
	}
	app.exec(`UPDATE tx_nrllm_agentrun SET suspended_state = REPLACE(suspended_state, 'ops@example.com', 'other@example.com') WHERE uuid = ?`, changed)

	b.do("approve all",
		chromedp.Click(chromedp.CSS(`[data-testid="bulk-approve"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="bulk-outcomes"]`)))
	b.screenshot("bulk-outcomes")
	want := map[string]string{fresh: "approved", decided: "already handled", changed: "stale"}
	for r, outcome := range want {
		if got := b.text(`[data-testid="bulk-outcome"][data-run="` + r + `"] .badge__label`); got != outcome {
			t.Errorf("%s: outcome %q, want %q", r, got, outcome)
		}
	}
	if got := b.text(`[data-testid="bulk-summary"]`); got != "1 of 3 approved." {
		t.Errorf("summary %q", got)
	}
	if s := app.row(changed).Status; s != runtime.StatusWaitingApproval {
		t.Errorf("the stale run is %s, want still waiting", s)
	}
}

func TestBrowserDraftRestoredAfterReload(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	run := app.pause(runtime.RoleAdmin, "ask")
	city := inputField(run, "/city")
	b := newTab(t, app)
	b.signIn(runtime.RoleReviewer)
	b.open(views.RunPath(run))
	b.do("find the form", chromedp.WaitVisible(chromedp.CSS(city)))
	b.setValue(city, "Be")
	deadline := time.Now().Add(browserStepTimeout)
	for app.draftRows(run) == 0 {
		if time.Now().After(deadline) {
			b.fail("autosave", errors.New("no draft stored while typing"))
		}
		time.Sleep(200 * time.Millisecond)
	}
	deadline = time.Now().Add(browserStepTimeout)
	for got := ""; !strings.Contains(got, "saved automatically"); time.Sleep(100 * time.Millisecond) {
		got = b.liveText(`[data-testid="input-draft-status"]`)
		if time.Now().After(deadline) {
			t.Errorf("draft status after the autosave: %q", got)
			break
		}
	}
	b.open(views.RunPath(run))
	b.do("find the form again", chromedp.WaitVisible(chromedp.CSS(city)))
	if got := b.value(city); got != "Be" {
		t.Errorf("after a reload the field shows %q, want the autosaved draft", got)
	}
	if got := b.text(`[data-testid="input-draft-status"]`); !strings.Contains(got, "is restored") {
		t.Errorf("draft status after the reload: %q", got)
	}

	b.setValue(city, "B")
	b.do("save the draft with the button (below the field's minimum length, so not submittable)",
		chromedp.Click(chromedp.CSS(`[data-testid="input-save-draft"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="flash"]`)))
	b.screenshot("draft-saved")
	other := newTab(t, app)
	other.signIn(runtime.RoleReviewer)
	other.open(views.RunPath(run))
	other.do("find the form on another device", chromedp.WaitVisible(chromedp.CSS(city)))
	if got := other.value(city); got != "B" {
		t.Errorf("on another device the field shows %q, want the saved draft as typed", got)
	}
	admin := newTab(t, app)
	admin.signIn(runtime.RoleAdmin)
	admin.open(views.RunPath(run))
	admin.do("find the form as another person", chromedp.WaitVisible(chromedp.CSS(city)))
	if got := admin.value(city); got == "B" {
		t.Errorf("another person sees the draft %q", got)
	}
}
