package handlers

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"runsdesk/runtime"
	"runsdesk/views"
)

// setDeadline gives run uuid's pause an expiry at expires (and the stored action), escalated
// or not, as Suspend stores it for a configured wait.
func (a *testApp) setDeadline(uuid string, expires time.Time, action string, escalated bool) {
	a.t.Helper()
	a.exec(`UPDATE tx_nrllm_agentrun SET expires_at = ?, wait_due = ?, escalated = ?, wait_policy = ? WHERE uuid = ?`,
		expires.Unix(), expires.Unix(), escalated, `{"action":"`+action+`"}`, uuid)
}

// TestBrowserCountdown: a waiting run with a deadline shows "expires in …" in its inbox row
// and on its run card, the absolute time in the <time datetime> element's title and, for
// screen readers, as visually hidden text; a run without a deadline shows none.
func TestBrowserCountdown(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	expires := time.Now().Add(2*time.Hour + 30*time.Second).Truncate(time.Second)
	timed := app.pause(runtime.RoleAdmin, "ask")
	untimed := app.pause(runtime.RoleAdmin, "mail")
	app.setDeadline(timed, expires, "deny", false)
	b := newTab(t, app)
	b.signIn(runtime.RoleReviewer)

	b.open("/runs")
	b.screenshot("inbox-countdown")
	cell := row(timed, `[data-testid="inbox-row-expires"]`)
	if got := b.text(cell); !strings.HasPrefix(got, "expires in 2 hours") {
		t.Errorf("the row's deadline reads %q, want \"expires in 2 hours …\"", got)
	}
	if got := evalIn[string](b, `document.querySelector(`+jsString(cell+` time`)+`).getAttribute("datetime")`); got != views.MachineTime(expires) {
		t.Errorf("datetime = %q, want %q", got, views.MachineTime(expires))
	}
	if got := evalIn[string](b, `document.querySelector(`+jsString(cell+` time`)+`).title`); got != views.AbsoluteTime(expires, nil) {
		t.Errorf("title = %q, want the absolute time %q", got, views.AbsoluteTime(expires, nil))
	}
	if got := b.text(cell + ` .visually-hidden`); !strings.Contains(got, views.AbsoluteTime(expires, nil)) {
		t.Errorf("screen-reader text %q lacks the absolute time", got)
	}
	if n := b.count(row(untimed, `[data-testid="expiry"]`)); n != 0 {
		t.Errorf("a run without a deadline shows %d expiries", n)
	}

	b.open(views.RunPath(timed))
	if got := b.text(`[data-testid="run-card-expires"]`); !strings.HasPrefix(got, "expires in 2 hours") {
		t.Errorf("the run card's deadline reads %q", got)
	}
}

// TestBrowserEscalatedFilter: choosing "Escalated" in the inbox's deadline filter lists only
// the escalated run, with its badge; "Expiring soonest first" lists the runs with a deadline
// by it, "Expiring within an hour" only the one that does.
func TestBrowserEscalatedFilter(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	now := time.Now()
	late := app.pause(runtime.RoleAdmin, "mail")
	soon := app.pause(runtime.RoleAdmin, "ask")
	escalated := app.pause(runtime.RoleAdmin, "wipe")
	app.pause(runtime.RoleAdmin, "long")
	app.setDeadline(late, now.Add(5*time.Hour), "deny", false)
	app.setDeadline(soon, now.Add(20*time.Minute), "cancel", false)
	app.setDeadline(escalated, now.Add(3*time.Hour), "escalate", true)
	b := newTab(t, app)
	b.signIn(runtime.RoleReviewer)

	b.open("/runs")
	if n := b.count(`[data-testid="inbox-row"]`); n != 4 {
		t.Fatalf("the inbox lists %d rows, want 4", n)
	}
	b.do("filter escalated",
		chromedp.Click(chromedp.CSS(`[data-testid="inbox-filters-summary"]`)),
		chromedp.SetValue(chromedp.CSS(`[data-testid="filter-deadline"]`), views.DeadlineEscalated),
		chromedp.Click(chromedp.CSS(`[data-testid="filter-apply"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="filter-clear"]`)),
	)
	b.screenshot("inbox-escalated")
	if n := b.count(`[data-testid="inbox-row"]`); n != 1 || b.count(row(escalated, `[data-testid="escalated-badge"]`)) != 1 {
		t.Fatalf("the escalated filter lists %d rows (want 1, the escalated run with its badge)", n)
	}
	if got := strings.Join(strings.Fields(b.text(row(escalated, `[data-testid="escalated-badge"]`))), " "); got != "⚑ Escalated" {
		t.Errorf("badge text %q", got)
	}

	b.open("/runs?deadline=expiring")
	got := evalIn[[]string](b, `[...document.querySelectorAll('[data-testid="inbox-row"]')].map(r => r.dataset.run)`)
	if want := []string{soon, escalated, late}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("expiring soonest lists %v, want %v", got, want)
	}
	b.open("/runs?deadline=soon")
	if n := b.count(`[data-testid="inbox-row"]`); n != 1 || b.count(row(soon, "td")) == 0 {
		t.Errorf("expiring soon lists %d rows, want only the run expiring in 20 minutes", n)
	}
}

// TestBrowserLateDecision: a person types into a run's input form, the run expires (and is
// denied by the expirer) before they submit; the answer is 409 with the run page saying "This
// run expired 1 minute ago (…) and was denied automatically; your input was not used", and what they
// typed is still on the page.
func TestBrowserLateDecision(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	uuid := app.pause(runtime.RoleAdmin, "ask")
	expires := time.Now().Add(time.Hour)
	app.setDeadline(uuid, expires, "deny", false)
	b := newTab(t, app)
	b.signIn(runtime.RoleReviewer)
	b.open(views.RunPath(uuid))
	b.do("type the city", chromedp.SendKeys(chromedp.CSS(`[name="input/city"]`), "Berlin"))

	app.exec(`UPDATE tx_nrllm_agentrun SET expires_at = ?, wait_due = ? WHERE uuid = ?`, time.Now().Unix()-5, time.Now().Unix()-5, uuid)
	rep, err := app.rt.Expire(t.Context(), 10)
	if err != nil || rep.Expired != 1 {
		t.Fatalf("expire: %+v, %v", rep, err)
	}
	expired := time.Unix(app.row(uuid).ExpiresAt, 0)

	b.do("submit late",
		chromedp.Click(chromedp.CSS(`[data-testid="input-submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="late-decision"]`)),
	)
	b.screenshot("late-decision")
	want := "This run expired " + views.RelativeTime(expired, time.Now()) + " (" + views.AbsoluteTime(expired, nil) + ") and was denied automatically; your input was not used."
	if got := strings.Join(strings.Fields(b.text(`[data-testid="late-decision-text"]`)), " "); got != want {
		t.Errorf("late page says %q, want %q", got, want)
	}
	if got := b.value(`[data-testid="late-decision-value"]`); got != "Berlin" {
		t.Errorf("what was typed is %q on the page, want Berlin", got)
	}
	if got := evalIn[string](b, `document.querySelector('[data-testid="late-decision"]').getAttribute("role")`); got != "alert" {
		t.Errorf("the late notice has role %q, want alert", got)
	}
}
