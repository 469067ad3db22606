package handlers

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"runsdesk/runtime"
)

// sibling opens another tab in b's browser context: the same cookies, the same shared worker.
func (b *tab) sibling() *tab {
	b.t.Helper()
	tctx, cancel := chromedp.NewContext(b.ctx)
	b.t.Cleanup(cancel)
	if err := chromedp.Do(tctx); err != nil {
		b.t.Fatalf("open a second tab: %v", err)
	}
	return &tab{t: b.t, app: b.app, ctx: tctx}
}

// until polls cond on the page as it is (no reload) until it holds, or fails after the step
// timeout.
func (b *tab) until(what string, cond func() bool) {
	b.t.Helper()
	for deadline := time.Now().Add(browserStepTimeout); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.fail(what, errors.New("timed out"))
		}
	}
}

// markLoaded marks the tab's document, so notReloaded can tell it is still the same page.
func (b *tab) markLoaded() {
	b.t.Helper()
	evalIn[bool](b, "window.runsdeskTestMark = true")
}

func (b *tab) notReloaded() bool {
	b.t.Helper()
	return evalIn[bool](b, "window.runsdeskTestMark === true")
}

// withoutSharedWorker takes SharedWorker away from every page the tab loads from now on.
func (b *tab) withoutSharedWorker() {
	b.t.Helper()
	b.do("take SharedWorker away", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument,
			page.AddScriptToEvaluateOnNewDocumentParams{Source: "delete window.SharedWorker"})
		return err
	}))
}

// Two tabs of one browser on the inbox keep one event stream between them, and both update
// their counts and rows in place when a run starts waiting and when another person decides
// it, keeping what is typed in the search box. Without SharedWorker one tab holds the stream
// and passes its events on, and when it is left the other takes the stream over.
func TestBrowserLiveInboxUpdatesInPlace(t *testing.T) {
	t.Parallel()
	for _, shared := range []bool{true, false} {
		t.Run(map[bool]string{true: "shared worker", false: "leader tab"}[shared], func(t *testing.T) {
			liveInbox(t, shared)
		})
	}
}

func liveInbox(t *testing.T, shared bool) {
	app := newDeskApp(t)
	first := newTab(t, app)
	if !shared {
		first.withoutSharedWorker()
	}
	first.signIn(runtime.RoleReviewer)
	first.open("/runs")
	second := first.sibling()
	if !shared {
		second.withoutSharedWorker()
	}
	second.open("/runs")
	app.waitStreams(1)
	time.Sleep(200 * time.Millisecond)
	if n := app.hall.Waiting(); n != 1 {
		t.Errorf("%d event streams open for two tabs of one browser, want 1", n)
	}
	for _, b := range []*tab{first, second} {
		b.markLoaded()
	}
	first.setValue(`[data-testid="filter-q"]`, "typed, not sent")

	uuid := app.pause(runtime.RoleAdmin, "mail")
	for _, b := range []*tab{first, second} {
		b.until("the new run listed", func() bool {
			return b.count(`[data-testid="inbox-row"][data-run="`+uuid+`"]`) == 1 && b.liveText(`[data-testid="count-approval"]`) == "1"
		})
		if !b.notReloaded() {
			t.Error("the inbox reloaded, want it updated in place")
		}
	}
	if got := first.value(`[data-testid="filter-q"]`); got != "typed, not sent" {
		t.Errorf("search box %q after the update, want what was typed", got)
	}

	ada := app.login(runtime.RoleAdmin)
	if res := ada.postForm("/runs/"+uuid+"/approval", ada.approvalFormOf(uuid, "approve")); res.status != http.StatusSeeOther {
		t.Fatalf("approve: %d", res.status)
	}
	first.until("the decided run gone", func() bool {
		return first.count(`[data-testid="inbox-row"]`) == 0 && first.liveText(`[data-testid="count-approval"]`) == "0"
	})
	if !first.notReloaded() {
		t.Error("the inbox reloaded after the decision, want it updated in place")
	}
	if shared {
		return
	}
	first.open("/account")
	app.waitStreams(1)
	again := app.pause(runtime.RoleAdmin, "mail")
	second.until("the run listed after the hand-over", func() bool {
		return second.count(`[data-testid="inbox-row"][data-run="`+again+`"]`) == 1
	})
	if !second.notReloaded() {
		t.Error("the remaining tab reloaded, want it updated in place")
	}
}

// A reviewer reading a waiting run while another person approves it sees a banner naming who
// approved, the decision buttons disabled and the reason they typed still there; the status
// and timeline follow without a reload.
func TestBrowserLiveRunPageBannerWhenAnotherDecides(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	uuid := app.pause(runtime.RoleAdmin, "mail")
	b := newTab(t, app)
	b.signIn(runtime.RoleReviewer)
	b.open("/runs/" + uuid)
	app.waitStreams(1)
	b.markLoaded()
	b.setValue(`[data-testid="approval-form"] textarea`, "looks fine to me")

	ada := app.login(runtime.RoleAdmin)
	if res := ada.postForm("/runs/"+uuid+"/approval", ada.approvalFormOf(uuid, "approve")); res.status != http.StatusSeeOther {
		t.Fatalf("approve: %d", res.status)
	}
	b.until("the banner", func() bool { return b.count(`[data-testid="live-banner"]`) == 1 })
	if got := b.liveText(`[data-testid="live-banner"]`); !strings.HasPrefix(got, "Ada approved this while you were reading") {
		t.Errorf("banner %q, want it to say Ada approved this while you were reading", got)
	}
	if !evalIn[bool](b, `document.querySelector('[data-testid="approve"]').disabled && document.querySelector('[data-testid="deny"]').disabled`) {
		t.Error("the stale decision buttons are enabled, want them disabled")
	}
	if got := b.value(`[data-testid="approval-form"] textarea`); got != "looks fine to me" {
		t.Errorf("reason %q after the banner, want what was typed", got)
	}
	b.until("the timeline's approval", func() bool {
		return b.count(`[data-live-region="run-timeline"] tr[data-decided-by="ada"]`) == 1
	})
	if b.liveText(`[data-testid="run-head-badges"]`) == "" || strings.Contains(b.liveText(`[data-testid="run-head-badges"]`), "Waiting") {
		t.Errorf("status %q after the approval, want it moved on", b.liveText(`[data-testid="run-head-badges"]`))
	}
	if !b.notReloaded() {
		t.Error("the run page reloaded, want it updated in place")
	}
}
