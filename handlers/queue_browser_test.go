package handlers

import (
	"testing"

	"github.com/chromedp/chromedp"

	"runsdesk/runtime"
)

// TestBrowserQueueFigureOpensTheInbox: in a browser, the header's Queue health entry opens the
// page, and clicking a configuration and tool's waiting figure opens the inbox filtered to it,
// listing exactly the run counted.
func TestBrowserQueueFigureOpensTheInbox(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	mail := app.pause(runtime.RoleAdmin, "mail")
	app.pause(runtime.RoleAdmin, "refund")
	app.pause(runtime.RoleAdmin, "ask")
	decided := app.pause(runtime.RoleAdmin, "mail")
	rita := app.login(runtime.RoleReviewer)
	wantSeeOther(t, "approve", rita.postForm("/runs/"+decided+"/approval", rita.approvalFormOf(decided, "approve")), "/runs/"+decided)
	b := newTab(t, app)
	b.signIn(runtime.RoleAdmin)
	b.do("open Queue health from the header",
		chromedp.Click(chromedp.CSS(`[data-testid="nav-queue"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="queue-waiting"]`)),
	)
	b.screenshot("queue")
	if got := b.text(`[data-testid="queue-person"][data-person="rita"] [data-testid="queue-person-decisions"]`); got != "1" {
		t.Errorf("rita's decisions %q, want 1", got)
	}
	figure := `[data-testid="queue-row"][data-configuration="Mail assistant"][data-tool="send_mail"] [data-testid="queue-approval"]`
	if got := b.text(figure); got != "1" {
		t.Fatalf("mail/send_mail approvals %q, want 1", got)
	}
	b.do("open the figure's inbox",
		chromedp.Click(chromedp.CSS(figure)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="inbox-row"]`)),
	)
	if n := b.count(`[data-testid="inbox-row"]`); n != 1 || b.count(`[data-testid="inbox-row"][data-run="`+mail+`"]`) != 1 {
		t.Errorf("the figure's inbox lists %d rows, want only run %s", n, mail)
	}
	if path := evalIn[string](b, `location.pathname + location.search`); path != "/runs?configuration=mail&kind=approval&tool=send_mail" {
		t.Errorf("the figure opened %s", path)
	}
}
