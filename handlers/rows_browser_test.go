package handlers

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"runsdesk/runtime"
	"runsdesk/views"
)

// TestBrowserEnterInAFormWithRowsSubmitsIt presses Enter in a field of a form whose lists
// of rows have Add another and Remove buttons: the form is submitted, no row is removed.
func TestBrowserEnterInAFormWithRowsSubmitsIt(t *testing.T) {
	t.Parallel()
	app, rec := newLinesWorld(t)
	run := app.startRun(runtime.RoleReviewer, "lines").Run.UUID
	b := newTab(t, app)
	b.signIn(runtime.RoleReviewer)
	b.open(views.RunPath(run))
	b.do("type a SKU and press Enter",
		chromedp.SendKeys(chromedp.CSS(inputField(run, "/lines/0/sku")), "A-1"),
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="flash"]`)),
	)
	b.waitFor("the run completes", views.RunPath(run), func() bool { return b.statusIs("completed") })
	calls := rec.received()
	if len(calls) != 1 {
		t.Fatalf("the tool ran %d times, want once", len(calls))
	}
	mustJSONEqual(t, "tool arguments", calls[0], `{"lines":[{"sku":"A-1"}]}`)
}
