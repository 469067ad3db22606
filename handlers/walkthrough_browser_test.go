package handlers

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"runsdesk/runtime"
	"runsdesk/views"
)

// walkVariants are the screens of the walk-through: a desktop, a phone, and both in dark mode.
var walkVariants = []struct {
	name          string
	width, height int64
	scheme        string
}{
	{"1280x900", 1280, 900, "light"},
	{"390x844", 390, 844, "light"},
	{"1280x900-dark", 1280, 900, "dark"},
	{"390x844-dark", 390, 844, "dark"},
}

// shootVariants screenshots the loaded page as walk-<page>-<variant> on every walk variant
// (the page is laid out again for each, not reloaded), checking that it fits a phone's width
// and that dark mode is dark.
func (b *tab) shootVariants(page string) {
	b.t.Helper()
	for _, v := range walkVariants {
		b.emulateSize(v.width, v.height, v.scheme)
		if w := evalIn[int](b, `document.documentElement.scrollWidth`); w > int(v.width)+2 {
			b.t.Errorf("%s at %s is %d px wide", page, v.name, w)
		}
		if bg := evalIn[string](b, `getComputedStyle(document.body).backgroundColor`); (v.scheme == "dark") != (bg == "rgb(13, 17, 23)") {
			b.t.Errorf("%s at %s: body background %s", page, v.name, bg)
		}
		b.screenshot(fmt.Sprintf("walk-%s-%s", page, v.name))
	}
}

// TestBrowserWalkThroughScreenshots saves the walk-through's pages (inbox, input run, approval
// run, edit form, edit review, bulk confirmation, bulk outcome, recent runs, expired run, the
// audit trail) at
// 1280×900 and 390×844, light and dark, to the browser tests' artefacts (walk-*.png).
func TestBrowserWalkThroughScreenshots(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	now := time.Now().Unix()
	configurations := []string{"mail", "refund", "ask", "long", "wipe", "mail"}
	var waiting []string
	for i := range 18 {
		uuid := app.pause(runtime.RoleAdmin, configurations[i%len(configurations)])
		app.exec(`UPDATE tx_nrllm_agentrun SET suspended_at = ? WHERE uuid = ?`, now-int64(3600-i*60), uuid)
		waiting = append(waiting, uuid)
	}
	mail, refund, ask := waiting[0], waiting[1], waiting[2]
	app.setDeadline(refund, time.Now().Add(40*time.Minute), "escalate", true)
	own, other := app.pause(runtime.RoleReviewer, "foureyes"), app.pause(runtime.RoleAdmin, "foureyes")
	expired := app.pause(runtime.RoleAdmin, "ask")
	app.setDeadline(expired, time.Now().Add(-5*time.Second), "deny", false)
	if rep, err := app.rt.Expire(t.Context(), 10); err != nil || rep.Expired != 1 {
		t.Fatalf("expire: %+v, %v", rep, err)
	}
	done := app.pause(runtime.RoleAdmin, "wipe")
	rita := app.login(runtime.RoleReviewer)
	wantSeeOther(t, "deny the wipe", rita.postForm("/runs/"+done+"/approval", rita.approvalFormOf(done, "deny")), "/runs/"+done)
	app.rt.Wait()

	b := newTab(t, app)
	b.signIn(runtime.RoleReviewer)
	b.screenshot("walk-home-1280x900")
	b.open("/runs")
	b.open("/runs")
	b.shootVariants("inbox")
	b.open(views.RunPath(ask))
	b.shootVariants("input-run")
	b.open(views.RunPath(mail))
	b.shootVariants("approval-run")
	b.open(views.RunPath(refund))
	b.shootVariants("escalated-run")
	b.open(bulkPath(own, other))
	b.do("find the bulk form", chromedp.WaitVisible(chromedp.CSS(`[data-testid="bulk-form"]`)))
	b.shootVariants("bulk-confirm")
	b.emulateSize(1280, 900, "light")
	b.do("approve the ones that may be approved",
		chromedp.Click(chromedp.CSS(`[data-testid="bulk-approve"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="bulk-outcomes"]`)))
	b.shootVariants("bulk-outcome")
	b.open("/runs/recent")
	b.shootVariants("recent-runs")
	b.open(views.RunPath(expired))
	b.shootVariants("expired-run")
	admin := newTab(t, app)
	admin.signIn(runtime.RoleAdmin)
	admin.open(views.AuditPath)
	admin.shootVariants("audit-trail")

	edits := newEditApp(t)
	uuid := edits.pause(runtime.RoleAdmin, "edit")
	e := newTab(t, edits.testApp)
	e.signIn(runtime.RoleReviewer)
	e.open(views.EditCallPath(uuid, edits.callID(uuid)))
	e.shootVariants("edit-form")
	e.emulateSize(1280, 900, "light")
	e.setValue(inputField(uuid, "/amount"), "40")
	e.do("review the changes",
		chromedp.Click(chromedp.CSS(`[data-testid="input-submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="change-table"]`)))
	e.shootVariants("edit-review")
}
