package handlers

import (
	"testing"
	"time"

	"runsdesk/runtime"
)

// visibleRows counts the listed waiting runs (rows, or cards where a page lists runs as
// cards) that lie entirely within the viewport.
const visibleRows = `[...document.querySelectorAll('[data-testid="inbox-row"], [data-testid="run-card"]')].filter(e => {
	const r = e.getBoundingClientRect();
	return r.height > 0 && r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth;
}).length`

// visibleSubjects counts the inbox rows entirely within the viewport whose subject shows
// (at least a few characters wide).
const visibleSubjects = `[...document.querySelectorAll('[data-testid="inbox-row"]')].filter(e => {
	const r = e.getBoundingClientRect(), s = e.querySelector('[data-testid="inbox-row-subject"]').getBoundingClientRect();
	return r.height > 0 && r.top >= 0 && r.bottom <= innerHeight && r.right <= innerWidth && s.width >= 60 && s.bottom <= innerHeight;
}).length`

// TestBrowserInboxIsScannable: with a page of 25 waiting runs, at 1280×900 at least 16 rows
// show their subject without scrolling, one line each (the filters behind a disclosure, the
// introduction gone after the first visit); on a 390×844 phone at least 4 rows show, each a
// short card within the screen's width.
func TestBrowserInboxIsScannable(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	now := time.Now().Unix()
	configurations := []string{"mail", "refund", "ask", "long", "wipe", "foureyes", "mail"}
	for i := range 25 {
		uuid := app.pause(runtime.RoleAdmin, configurations[i%len(configurations)])
		app.exec(`UPDATE tx_nrllm_agentrun SET suspended_at = ? WHERE uuid = ?`, now-int64(3600-i*60), uuid)
	}
	b := newTab(t, app)
	b.signIn(runtime.RoleReviewer)

	b.emulate(1280, "light")
	b.open("/runs")
	if n := b.count(`[data-testid="inbox-info"]`); n != 1 {
		t.Errorf("the first visit shows %d introductions, want 1", n)
	}
	b.open("/runs")
	b.screenshot("inbox-1280x900")
	if n := b.count(`[data-testid="inbox-info"]`); n != 0 {
		t.Errorf("a later visit shows %d introductions, want none", n)
	}
	if n := b.count(`[data-testid="inbox-row"]`); n != 25 {
		t.Fatalf("the inbox lists %d rows, want 25", n)
	}
	if n := evalIn[int](b, visibleSubjects); n < 16 {
		t.Errorf("at 1280×900, %d waiting runs show their subject without scrolling, want at least 16", n)
	}
	if h := evalIn[int](b, `Math.round(document.querySelector('[data-testid="inbox-row"]').getBoundingClientRect().height)`); h > 40 {
		t.Errorf("a row is %d px high at 1280 px, want one compact line", h)
	}

	b.emulateSize(390, 844, "light")
	b.open("/runs")
	b.screenshot("inbox-phone")
	if w := evalIn[int](b, `document.documentElement.scrollWidth`); w > 392 {
		t.Errorf("the inbox is %d px wide on a 390 px phone", w)
	}
	if n := evalIn[int](b, visibleSubjects); n < 4 {
		t.Errorf("on a 390×844 phone, %d waiting runs show on the first screen, want at least 4", n)
	}
	if n := evalIn[int](b, visibleRows); n < 4 {
		t.Errorf("on a 390×844 phone, %d rows lie entirely on the first screen, want at least 4", n)
	}
}
