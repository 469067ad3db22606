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

// TestBrowserInboxIsScannable: at 1280×900 the inbox shows at least 10 of 14 waiting runs
// without scrolling, one row each; on a phone the rows stack within the screen's width.
func TestBrowserInboxIsScannable(t *testing.T) {
	app := newDeskApp(t)
	now := time.Now().Unix()
	configurations := []string{"mail", "refund", "ask", "long", "wipe", "foureyes", "mail"}
	for i := range 14 {
		uuid := app.pause(runtime.RoleAdmin, configurations[i%len(configurations)])
		app.exec(`UPDATE tx_nrllm_agentrun SET suspended_at = ? WHERE uuid = ?`, now-int64(3600-i*60), uuid)
	}
	b := newTab(t, app)
	b.signIn(runtime.RoleReviewer)

	b.emulate(1280, "light")
	b.open("/runs")
	b.screenshot("inbox-1280x900")
	if n := b.count(`[data-testid="inbox-row"]`); n != 14 {
		t.Fatalf("the inbox lists %d rows, want 14", n)
	}
	if n := evalIn[int](b, visibleRows); n < 10 {
		t.Errorf("at 1280×900, %d waiting runs are entirely visible without scrolling, want at least 10", n)
	}
	if h := evalIn[int](b, `Math.round(document.querySelector('[data-testid="inbox-row"]').getBoundingClientRect().height)`); h > 56 {
		t.Errorf("a row is %d px high at 1280 px, want one compact line", h)
	}

	b.emulate(390, "light")
	b.open("/runs")
	b.screenshot("inbox-phone")
	if w := evalIn[int](b, `document.documentElement.scrollWidth`); w > 392 {
		t.Errorf("the inbox is %d px wide on a 390 px phone", w)
	}
	stacked := evalIn[bool](b, `(() => {
		const cells = document.querySelectorAll('[data-testid="inbox-row"]:first-child td');
		return cells.length > 1 && cells[1].getBoundingClientRect().top >= cells[0].getBoundingClientRect().bottom - 1;
	})()`)
	if !stacked {
		t.Error("on a phone a row's cells do not stack")
	}
	if got := evalIn[string](b, `getComputedStyle(document.querySelector('[data-testid="inbox-row"] td'), '::before').content`); got != `"Waiting since"` {
		t.Errorf("a stacked cell is labelled %s, want its column's name", got)
	}
}
