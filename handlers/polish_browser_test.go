package handlers

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"runsdesk/runtime"
	"runsdesk/views"
)

// badgeGap is the horizontal space in px between the first two badges matching css.
func (b *tab) badgeGap(css string) int {
	b.t.Helper()
	return evalIn[int](b, `(() => {
		const bs = document.querySelectorAll(`+jsString(css)+`);
		if (bs.length < 2) return -1;
		return Math.round(bs[1].getBoundingClientRect().left - bs[0].getBoundingClientRect().right);
	})()`)
}

// TestBrowserEscalatedBadgeInRunHead: an escalated run's page shows the Escalated badge in its
// header beside the status, as the inbox row does, and badges sit as far apart there, in the
// row and in a call's head.
func TestBrowserEscalatedBadgeInRunHead(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	uuid := app.pause(runtime.RoleAdmin, "refund")
	app.setDeadline(uuid, time.Now().Add(3*time.Hour), "escalate", true)
	b := newTab(t, app)
	b.signIn(runtime.RoleReviewer)

	b.open("/runs")
	rowGap := b.badgeGap(row(uuid, `[data-testid="inbox-row-waiting-for"] .badge`))
	b.open(views.RunPath(uuid))
	b.screenshot("run-escalated")
	if n := b.count(`[data-testid="run-head-badges"] [data-testid="escalated-badge"]`); n != 1 {
		t.Fatalf("the run page's header shows %d Escalated badges, want 1", n)
	}
	if n := b.count(`[data-testid="escalated-badge"]`); n != 1 {
		t.Errorf("the run page shows %d Escalated badges, want 1 (in its header)", n)
	}
	headGap := b.badgeGap(`[data-testid="run-head-badges"] .badge`)
	callGap := b.badgeGap(`[data-testid="pending-call"][data-tool="issue_refund"] .call__head .badge`)
	if headGap < 4 || headGap != callGap || rowGap != callGap {
		t.Errorf("badges are %d px apart in the header, %d px in the inbox row, %d px in a call's head; want the same, at least 4", headGap, rowGap, callGap)
	}
}

// buttonsApart reports the smallest space in px between any two of the elements matching css,
// horizontally or vertically (negative: they overlap).
func (b *tab) buttonsApart(css string) int {
	b.t.Helper()
	return evalIn[int](b, `(() => {
		const rs = [...document.querySelectorAll(`+jsString(css)+`)].map(e => e.getBoundingClientRect());
		let min = 1e9;
		for (let i = 0; i < rs.length; i++) for (let j = i + 1; j < rs.length; j++) {
			const a = rs[i], c = rs[j];
			const dx = Math.max(c.left - a.right, a.left - c.right), dy = Math.max(c.top - a.bottom, a.top - c.bottom);
			min = Math.min(min, Math.round(Math.max(dx, dy)));
		}
		return min;
	})()`)
}

// TestBrowserEditPages: the edit form has a Cancel link back to the run; on the review page,
// at desktop and phone widths in both themes, the buttons stand apart and the before → after
// table has its border (one around the table on a desktop, each stacked row's on a phone).
func TestBrowserEditPages(t *testing.T) {
	t.Parallel()
	app := newEditApp(t)
	uuid := app.pause(runtime.RoleAdmin, "edit")
	b := newTab(t, app.testApp)
	b.signIn(runtime.RoleReviewer)
	b.open(views.EditCallPath(uuid, app.callID(uuid)))
	if got := evalIn[string](b, `document.querySelector('[data-testid="edit-form"] [data-testid="input-cancel"]')?.getAttribute("href") ?? ""`); got != views.RunPath(uuid) {
		t.Errorf("the edit form's Cancel leads to %q, want the run page", got)
	}
	b.setValue(inputField(uuid, "/amount"), "40")
	b.do("review the changes",
		chromedp.Click(chromedp.CSS(`[data-testid="input-submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="change-table"]`)),
	)
	for _, v := range []struct {
		width  int64
		scheme string
	}{{1280, "light"}, {1280, "dark"}, {390, "light"}, {390, "dark"}} {
		b.emulate(v.width, v.scheme)
		where := fmt.Sprintf("%d px, %s", v.width, v.scheme)
		if gap := b.buttonsApart(`[data-testid="edit-approve"], [data-testid="edit-back"], [data-testid="edit-cancel"]`); gap < 8 {
			t.Errorf("%s: the review's buttons are %d px apart, want at least 8", where, gap)
		}
		bordered := `(e => { const s = getComputedStyle(e); return parseFloat(s.borderTopWidth) >= 1 && s.borderTopStyle !== "none" && s.borderTopColor !== getComputedStyle(document.body).backgroundColor })`
		if v.width >= 1280 {
			hugged := `(t => { const r = t.getBoundingClientRect(); for (let e = t.parentElement; e; e = e.parentElement) {
				if (` + bordered + `(e)) { const w = e.getBoundingClientRect(); return Math.abs(w.left - r.left) <= 2 && Math.abs(w.right - r.right) <= 2 } } return false })`
			if !evalIn[bool](b, hugged+`(document.querySelector('[data-testid="change-table"]'))`) {
				t.Errorf("%s: the before → after table has no border", where)
			}
		} else if !evalIn[bool](b, bordered+`(document.querySelector('[data-testid="change-row"]'))`) {
			t.Errorf("%s: a stacked before → after row has no border", where)
		}
	}
}

// TestBrowserSelectAllByKeyboard: with JavaScript, "Select all on this page" is a checkbox
// (the button is hidden) that Tab reaches and Space ticks: every bulk checkbox of the page is
// ticked, and the group's Review selected lists them all.
func TestBrowserSelectAllByKeyboard(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	runs := []string{app.pause(runtime.RoleAdmin, "mail"), app.pause(runtime.RoleAdmin, "mail"), app.pause(runtime.RoleAdmin, "mail")}
	app.pause(runtime.RoleAdmin, "ask")
	b := newTab(t, app)
	b.signIn(runtime.RoleReviewer)
	b.open("/runs")
	if n := b.count(`[data-testid="bulk-select-all-form"]:not([hidden])`); n != 0 {
		t.Errorf("with JavaScript the Select all button still shows")
	}
	b.tabTo("bulk-select-all-box")
	b.do("press Space", chromedp.KeyEvent(" "))
	if n := b.count(`[data-testid="bulk-select"]:checked`); n != len(runs) {
		t.Fatalf("%d boxes ticked after Select all, want %d", n, len(runs))
	}
	b.screenshot("bulk-inbox-select-all")
	b.do("press Space again", chromedp.KeyEvent(" "))
	if n := b.count(`[data-testid="bulk-select"]:checked`); n != 0 {
		t.Fatalf("%d boxes ticked after unticking Select all, want none", n)
	}
	b.do("tick all again and review", chromedp.KeyEvent(" "),
		chromedp.Click(chromedp.CSS(`[data-testid="bulk-review"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="bulk-form"]`)))
	if n := b.count(`[data-testid="bulk-item"]`); n != len(runs) {
		t.Errorf("the confirmation lists %d runs, want %d", n, len(runs))
	}
}

// TestBrowserReloadAfterRejectedInput: after a 422 on an input form the page shows the run's
// own address (history.replaceState) and saves what was typed as the person's draft, so a
// reload loads the run page (no second POST) with the typed values restored.
func TestBrowserReloadAfterRejectedInput(t *testing.T) {
	t.Parallel()
	d := newBrowserDesk(t)
	run := d.app.startRun(runtime.RoleReviewer, "refund").Run.UUID
	b := newTab(t, d.app)
	b.signIn(runtime.RoleAdmin)
	b.open(views.RunPath(run))
	b.do("type too many tags and submit",
		chromedp.SendKeys(chromedp.CSS(inputField(run, "/amount")), "12.5"),
		chromedp.SetValue(chromedp.CSS(inputField(run, "/method")), "card"),
		chromedp.SendKeys(chromedp.CSS(inputField(run, "/tags")), "refund\nurgent\nvip"),
		chromedp.Click(chromedp.CSS(`[data-testid="input-submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("#"+views.InputErrorsID(run))),
	)
	if got := evalIn[string](b, `location.pathname`); got != views.RunPath(run) {
		t.Errorf("after the 422 the address is %q, want the run page's", got)
	}
	deadline := time.Now().Add(browserStepTimeout)
	for d.app.draftRows(run) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the typed values were not saved as a draft")
		}
		time.Sleep(100 * time.Millisecond)
	}
	failures := strings.Count(strings.Join(d.app.auditActions(), "\n"), "input")
	b.do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(inputField(run, "/tags"))))
	b.screenshot("input-reloaded-after-422")
	if n := b.count("#" + views.InputErrorsID(run)); n != 0 {
		t.Errorf("the reloaded page shows %d error summaries: the POST was sent again", n)
	}
	if got := strings.Count(strings.Join(d.app.auditActions(), "\n"), "input"); got != failures {
		t.Errorf("the reload recorded %d more input submissions", got-failures)
	}
	for ptr, want := range map[string]string{"/amount": "12.5", "/method": "card", "/tags": "refund\nurgent\nvip"} {
		if got := b.value(inputField(run, ptr)); got != want {
			t.Errorf("after the reload %s is %q, want %q as typed", ptr, got, want)
		}
	}
	if got := b.dialogsOpened(); len(got) != 0 {
		t.Errorf("dialogs opened: %q", got)
	}
}
