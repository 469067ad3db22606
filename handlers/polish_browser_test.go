package handlers

import (
	"testing"
	"time"

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
