package handlers

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"runsdesk/runtime"
	"runsdesk/runtime/tool"
	"runsdesk/typo3/backend/backendtest"
	"runsdesk/typo3/roles"
	"runsdesk/views"
)

// TestBrowserTYPO3EditorDecides: beside a TYPO3 site, an editor of the site's "Editors"
// group (mapped to reviewer) types their TYPO3 username and password, whose hash PHP made as
// TYPO3 does, into runsdesk's sign-in page in Chromium, is signed in as a reviewer, and
// approves a run runsdesk started; the run completes, the tool runs once, and TYPO3's tables
// are as they were.
func TestBrowserTYPO3EditorDecides(t *testing.T) {
	t.Parallel()
	notify := &approvalTool{name: "send_note"}
	app := newTestApp(t, appOptions{typo3Site: true, tools: []tool.Tool{notify},
		configurations: []runtime.Configuration{inputConfiguration("notify", "send_note", `{"to":"ops@example.com"}`)}})
	const password = "the editor's TYPO3 password, long"
	editors := backendtest.InsertGroup(t, app.typo3, roles.Group{Title: "Editors"})
	backendtest.InsertUser(t, app.typo3, backendtest.User{Username: "Erika", RealName: "Erika Editor",
		Password: backendtest.Hash(t, backendtest.BcryptFast, password), UserGroups: fmt.Sprint(editors)})
	before := backendtest.Snapshot(t, app.typo3)
	run := app.startRun(runtime.RoleAdmin, "notify").Run.UUID

	b := newTab(t, app)
	b.open("/login")
	b.do("sign in as the TYPO3 editor",
		chromedp.SendKeys(chromedp.CSS(`[data-testid="username"]`), "Erika"),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="password"]`), password),
		chromedp.Click(chromedp.CSS(`[data-testid="login-submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="signed-in-user"]`)),
	)
	if got := b.text(`[data-testid="signed-in-role"]`); got != "Reviewer" {
		t.Errorf("the TYPO3 editor is signed in as %q, want Reviewer", got)
	}
	b.decide(run, "approve")
	if got := b.text(`[data-testid="flash"]`); !strings.Contains(got, "Approval recorded") {
		t.Errorf("approve flash %q", got)
	}
	b.waitFor("the approved run completes", views.RunPath(run), func() bool { return b.statusIs("completed") })
	b.screenshot("typo3-editor-decided")
	if n := notify.ran(); n != 1 {
		t.Errorf("the approved tool ran %d times, want once", n)
	}
	if after := backendtest.Snapshot(t, app.typo3); after != before {
		t.Errorf("TYPO3's tables changed:\nbefore %s\nafter %s", before, after)
	}
}

// TestBrowserTYPO3RunPagesOnPhones: the TYPO3 extension's runs, listed and shown read only,
// fit a 390 px phone in the dark scheme as runsdesk's own pages do: the list, a run waiting
// for approval, one waiting for input (its form disabled), a sealed one and a corrupt one.
func TestBrowserTYPO3RunPagesOnPhones(t *testing.T) {
	t.Parallel()
	app, uuids := newTYPO3App(t)
	b := newTab(t, app)
	b.signIn(runtime.RoleSupport)
	pages := []string{views.TYPO3RunsPath}
	for _, name := range []string{"approval", "input", "sealed", "corrupt"} {
		pages = append(pages, views.TYPO3RunPath(uuids[name]))
	}
	b.emulate(390, "dark")
	for _, page := range pages {
		b.open(page)
		if w := evalIn[int](b, `document.documentElement.scrollWidth`); w > 392 {
			t.Errorf("%s is %d px wide on a 390 px phone", page, w)
		}
		if bg := evalIn[string](b, `getComputedStyle(document.body).backgroundColor`); bg != "rgb(13, 17, 23)" {
			t.Errorf("%s: body background %s in dark mode", page, bg)
		}
	}
	b.open(views.TYPO3RunsPath)
	b.screenshot("typo3-runs-phone-dark")
	b.open(views.TYPO3RunPath(uuids["input"]))
	b.screenshot("typo3-run-input-phone-dark")
}
