package handlers

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"runsdesk/runtime"
	"runsdesk/views"
)

// focusedTestID is the data-testid of the focused element ("" if none).
func (b *tab) focusedTestID() string {
	b.t.Helper()
	return evalIn[string](b, `document.activeElement ? (document.activeElement.getAttribute("data-testid") || "") : ""`)
}

// tabTo presses Tab until the element with data-testid id has the focus.
func (b *tab) tabTo(id string) {
	b.t.Helper()
	for range 80 {
		if b.focusedTestID() == id {
			return
		}
		b.do("press Tab", chromedp.KeyEvent(kb.Tab))
	}
	b.fail("tab to "+id, fmt.Errorf("never focused; last focus %q", b.focusedTestID()))
}

// emulate sets the viewport width (900 px high) and the preferred colour scheme ("light" or
// "dark").
func (b *tab) emulate(width int64, scheme string) {
	b.t.Helper()
	b.emulateSize(width, 900, scheme)
}

// emulateSize sets the viewport's size and the preferred colour scheme.
func (b *tab) emulateSize(width, height int64, scheme string) {
	b.t.Helper()
	b.do("emulate "+scheme, chromedp.EmulateViewport(width, height),
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
			return err
		}))
}

func TestBrowserKeyboardOnlyDecision(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	uuid := app.pause(runtime.RoleAdmin, "mail")
	b := newTab(t, app)
	b.signIn(runtime.RoleReviewer)
	b.open("/runs")
	b.tabTo("inbox-row-link")
	b.do("press Enter on the run's link", chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS(`[data-testid="run-card"][data-run="`+uuid+`"]`)))
	b.tabTo("decision-reason")
	b.do("type a reason", chromedp.KeyEvent("checked by keyboard"))
	b.tabTo("approve")
	outline := evalIn[string](b, `getComputedStyle(document.activeElement).outlineStyle`)
	if outline == "none" || outline == "" {
		t.Errorf("the focused Approve button shows no focus ring (outline-style %q)", outline)
	}
	b.do("press Enter on Approve", chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS(`[data-testid="run-summary"]`)))
	if got := b.text(`[data-testid="flash"]`); !strings.Contains(got, "Approval recorded; the run continues.") {
		t.Errorf("flash %q", got)
	}
	if run := app.row(uuid); run.Status != runtime.StatusCompleted {
		t.Errorf("run after a keyboard approval: %s", run.Status)
	}
}

func TestBrowserKeyboardOnlyInputFromTheInbox(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	uuid := app.pause(runtime.RoleAdmin, "ask")
	b := newTab(t, app)
	b.signIn(runtime.RoleReviewer)
	b.open("/runs")
	b.tabTo("inbox-row-link")
	b.do("press Enter on the run's link", chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`#`+views.InputFormID(uuid))))
	if got := evalIn[string](b, `location.pathname`); got != views.RunPath(uuid) {
		t.Errorf("the link led to %q", got)
	}
	for range 80 {
		if b.activeID() == views.FieldID(uuid, "/city") {
			break
		}
		b.do("press Tab", chromedp.KeyEvent(kb.Tab))
	}
	if got := b.activeID(); got != views.FieldID(uuid, "/city") {
		t.Fatalf("Tab never reaches the form's first field (focus on %q)", got)
	}
	b.do("type the city", chromedp.KeyEvent("Berlin"))
	b.tabTo("input-submit")
	b.do("press Enter on Submit", chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS(`[data-testid="flash"]`)))
	if got := b.text(`[data-testid="flash"]`); !strings.Contains(got, "Input submitted; the run continues.") {
		t.Errorf("flash %q", got)
	}
	if run := app.row(uuid); run.Status != runtime.StatusCompleted {
		t.Errorf("run after a keyboard submission: %s", run.Status)
	}
}

// A queued run's page follows the run in place over the live desk's stream; in a browser
// without EventSource it reloads every 3 s instead.
func TestBrowserLiveRunPageFollowsTheRun(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{true, false} {
		t.Run(map[bool]string{true: "stream", false: "reload"}[stream], func(t *testing.T) {
			followRun(t, stream)
		})
	}
}

func followRun(t *testing.T, stream bool) {
	app := newDeskApp(t)
	run, err := app.rt.Start(t.Context(), app.deskActor(runtime.RoleAdmin), "plain", "hello")
	if err != nil {
		t.Fatal(err)
	}
	b := newTab(t, app)
	if !stream {
		b.do("take EventSource away", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument,
				page.AddScriptToEvaluateOnNewDocumentParams{Source: "delete window.EventSource"})
			return err
		}))
	}
	b.signIn(runtime.RoleSupport)
	b.open("/runs/" + run.UUID)
	if stream {
		app.waitStreams(1)
	}
	if b.count("[data-live]") != 1 {
		t.Fatal("the queued run's page is not live")
	}
	evalIn[bool](b, `(window.__sameDocument = true)`)
	if _, err := app.rt.RunOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for b.liveText(`[data-testid="summary-status"] .badge__label`) != "Completed" {
		if time.Now().After(deadline) {
			b.fail("live reload", fmt.Errorf("the page still shows %q", b.liveText(`[data-testid="summary-status"] .badge__label`)))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if same := evalIn[bool](b, `window.__sameDocument === true`); same != stream {
		t.Errorf("the page stayed the same document: %v, want %v", same, stream)
	}
	if b.count("[data-live]") != 0 {
		t.Error("a finished run's page is still live")
	}
}

func TestBrowserRunPagesOnPhonesAndInTheDark(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	mail := app.pause(runtime.RoleAdmin, "mail")
	app.pause(runtime.RoleAdmin, "refund")
	app.pause(runtime.RoleAdmin, "long")
	app.pause(runtime.RoleAdmin, "ask")
	done := app.pause(runtime.RoleAdmin, "wipe")
	rita := app.login(runtime.RoleReviewer)
	wantSeeOther(t, "deny the wipe", rita.postForm("/runs/"+done+"/approval", rita.approvalFormOf(done, "deny")), "/runs/"+done)
	app.rt.Wait()
	b := newTab(t, app)
	b.signIn(runtime.RoleReviewer)

	b.emulate(1280, "light")
	b.open("/runs")
	b.screenshot("runs-inbox-desktop")
	b.open("/runs/" + mail)
	b.screenshot("runs-run-page-desktop")
	b.open("/runs/recent")
	b.screenshot("runs-recent-desktop")

	for _, page := range []string{"/runs", "/runs/" + mail, "/runs/" + done, "/runs/recent", "/runs/new", "/runs/" + mail + "/cancel"} {
		b.emulate(390, "dark")
		b.open(page)
		if w := evalIn[int](b, `document.documentElement.scrollWidth`); w > 392 {
			t.Errorf("%s is %d px wide on a 390 px phone", page, w)
		}
		bg := evalIn[string](b, `getComputedStyle(document.body).backgroundColor`)
		if bg != "rgb(13, 17, 23)" {
			t.Errorf("%s: body background %s in dark mode", page, bg)
		}
	}
	b.open("/runs")
	b.screenshot("runs-inbox-phone-dark")
	b.open("/runs/" + done)
	b.screenshot("runs-run-page-phone-dark")
	b.open("/runs/recent")
	b.screenshot("runs-recent-phone-dark")
}
