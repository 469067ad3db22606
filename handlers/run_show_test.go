package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"runsdesk/runtime"
	"runsdesk/views"
)

func TestRunPageShowsSummaryPendingCallAndTimeline(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	uuid := app.pause(runtime.RoleReviewer, "mail")
	ada := app.login(runtime.RoleAdmin)
	res := ada.get("/runs/" + uuid)
	if res.status != http.StatusOK {
		t.Fatalf("GET run page: %d", res.status)
	}
	doc := res.doc(t)
	for sel, want := range map[string]string{
		`[data-testid="summary-configuration"]`:        "Mail assistant",
		`[data-testid="summary-owner"]`:                "rita",
		`[data-testid="run-uuid"]`:                     uuid,
		`[data-testid="summary-status"] .badge__label`: "Waiting for approval",
	} {
		if got := strings.TrimSpace(doc.Find(sel).First().Text()); got != want {
			t.Errorf("%s = %q, want %q", sel, got, want)
		}
	}
	if h := doc.Find("h1, h2, h3").Map(func(_ int, s *goquery.Selection) string { return goquery.NodeName(s) }); strings.Join(h, ",") != "h1,h2,h2,h2,h2,h2" {
		t.Errorf("heading order %v", h)
	}
	pending := doc.Find(`[data-testid="run-pending"] [data-testid="call-arguments"]`).Text()
	if !strings.Contains(pending, deskSecret) || !strings.Contains(pending, "<img src=x onerror=alert(1)>") {
		t.Errorf("pending call view %q lacks the arguments as text", pending)
	}
	if n := doc.Find(`main script, main img`).Length(); n != 0 {
		t.Errorf("arguments created %d elements", n)
	}
	timeline := doc.Find(`[data-testid="timeline"]`).Text()
	for _, want := range []string{"Started by rita", "The model asked for send_mail", "prompt +"} {
		if !strings.Contains(timeline, want) {
			t.Errorf("timeline %q lacks %q", timeline, want)
		}
	}
	if strings.Contains(timeline, deskSecret) || strings.Contains(timeline, "alert(1)") || strings.Contains(timeline, "please help") {
		t.Errorf("timeline shows argument values or the prompt: %q", timeline)
	}
	if doc.Find(`[data-testid="cancel-link"]`).AttrOr("href", "") != "/runs/"+uuid+"/cancel" {
		t.Error("admin is not offered Cancel on a waiting run")
	}
	if doc.Find(`[data-live]`).Length() != 0 {
		t.Error("a waiting run's page is marked live")
	}

	support := app.login(runtime.RoleSupport)
	sdoc := support.get("/runs/" + uuid).doc(t)
	if sdoc.Find(`[data-testid="approval-form"], [data-testid="cancel-link"], main form:not([data-testid="comment-form"]) input[name="_csrf"]`).Length() != 0 {
		t.Error("support sees forms or Cancel on the run page")
	}
	if sdoc.Find(`[data-testid="comment-form"]`).Length() != 1 {
		t.Error("support is not offered the comment form")
	}
	if !strings.Contains(sdoc.Find(`[data-testid="call-arguments"]`).Text(), deskSecret) {
		t.Error("support does not see the pending call")
	}
}

func TestRunPageTimelineNamesWhoSubmittedAndTools(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	uuid := app.pause(runtime.RoleAdmin, "refund")
	ada := app.login(runtime.RoleAdmin)
	wantSeeOther(t, "approve", ada.postForm("/runs/"+uuid+"/approval", ada.approvalFormOf(uuid, "approve")), "/runs/"+uuid)
	app.rt.Wait()
	doc := ada.get("/runs/" + uuid).doc(t)
	tl := doc.Find(`[data-testid="timeline"]`).Text()
	for _, want := range []string{"Approved by ada", "Tool lookup ran", "Tool issue_refund ran"} {
		if !strings.Contains(tl, want) {
			t.Errorf("timeline %q lacks %q", tl, want)
		}
	}
	if doc.Find(`[data-testid="summary-reason"]`).Length() != 0 {
		t.Error("a completed run repeats \"Completed\" as its reason")
	}
	if doc.Find(`[data-testid="run-pending"], [data-testid="cancel-link"]`).Length() != 0 {
		t.Error("a finished run shows a pending decision or Cancel")
	}

	ask := app.pause(runtime.RoleAdmin, "ask")
	page := ada.get("/runs/" + ask).doc(t)
	form := page.Find(`[data-testid="input-form"]`)
	if form.Length() != 1 || form.AttrOr("action", "") != "/runs/"+ask+"/input" {
		t.Fatalf("input run page: %d input forms (action %q)", form.Length(), form.AttrOr("action", ""))
	}
	v := url.Values{"_csrf": {ada.token()}}
	form.Find(`input[type="hidden"]`).Each(func(_ int, s *goquery.Selection) { v.Set(s.AttrOr("name", ""), s.AttrOr("value", "")) })
	v.Set("input/city", "Berlin")
	wantSeeOther(t, "submit input", ada.postForm("/runs/"+ask+"/input", v), "/runs/"+ask)
	app.rt.Wait()
	if tl := ada.get("/runs/" + ask).doc(t).Find(`[data-testid="timeline"]`).Text(); !strings.Contains(tl, "Input submitted by ada") || strings.Contains(tl, "Berlin") {
		t.Errorf("timeline %q: want who submitted, never the value", tl)
	}
}

func TestRunPageOfAQueuedRunIsLive(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	run, err := app.rt.Start(t.Context(), app.deskActor(runtime.RoleAdmin), "plain", "hi")
	if err != nil {
		t.Fatal(err)
	}
	doc := app.login(runtime.RoleSupport).get("/runs/" + run.UUID).doc(t)
	live := doc.Find(`[data-live]`)
	if live.Length() != 1 || doc.Find(`[data-testid="refresh"]`).AttrOr("href", "") != "/runs/"+run.UUID {
		t.Errorf("queued run page: %d live markers, refresh link %q", live.Length(), doc.Find(`[data-testid="refresh"]`).AttrOr("href", ""))
	}
	if doc.Find(`meta[http-equiv]`).Length() != 0 {
		t.Error("the page refreshes itself with a meta tag")
	}
}

func TestRunPageOfUnknownRunIs404(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	c := app.login(runtime.RoleReviewer)
	for _, path := range []string{"/runs/0a6e2b58-1234-4abc-9def-000000000000", "/runs/not-a-run", "/runs/%3Cscript%3E"} {
		res := c.get(path)
		if res.status != http.StatusNotFound || res.doc(t).Find(`[data-testid="error-page"]`).Length() != 1 {
			t.Errorf("GET %s: %d, want the 404 page", path, res.status)
		}
	}
}

// TestRunPageShowsRetryTime: a queued run handed back after a provider failure says, in the
// live notice and the summary, when it is retried.
func TestRunPageShowsRetryTime(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	run, err := app.rt.Start(t.Context(), app.deskActor(runtime.RoleAdmin), "plain", "please help")
	if err != nil {
		t.Fatal(err)
	}
	ada := app.login(runtime.RoleAdmin)
	if doc := ada.get("/runs/" + run.UUID).doc(t); doc.Find(`[data-testid="summary-retry-at"]`).Length() != 0 {
		t.Error("a queued run that is not retrying shows a retry time")
	}
	at := time.Now().Add(90 * time.Second).Truncate(time.Second)
	if _, err := app.pool.ExecContext(t.Context(), `UPDATE tx_nrllm_agentrun SET retry_at = ? WHERE uuid = ?`, at.Unix(), run.UUID); err != nil {
		t.Fatal(err)
	}
	doc := ada.get("/runs/" + run.UUID).doc(t)
	if live := doc.Find(`[data-testid="live"]`).Text(); !strings.Contains(live, "retrying after a provider failure") {
		t.Errorf("live notice %q does not say the run is retrying", live)
	}
	retry := doc.Find(`[data-testid="summary-retry-at"] time`)
	if got, want := retry.AttrOr("datetime", ""), views.MachineTime(at); got != want {
		t.Errorf("retry time %q, want %q", got, want)
	}
}

// TestRunPageSaysWhenContentIsRemoved: a finished run's summary says when its output and
// transcript go, by its configuration's retention, and that they went once that day passed;
// a run that has not finished says nothing.
func TestRunPageSaysWhenContentIsRemoved(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	run, err := app.rt.Start(t.Context(), app.deskActor(runtime.RoleAdmin), "plain", "please help")
	if err != nil {
		t.Fatal(err)
	}
	ada := app.login(runtime.RoleAdmin)
	if n := ada.get("/runs/" + run.UUID).doc(t).Find(`[data-testid="summary-retention"]`).Length(); n != 0 {
		t.Error("a queued run says when its content is removed")
	}
	finished := time.Now().Add(-10 * 24 * time.Hour)
	if _, err := app.pool.ExecContext(t.Context(), `UPDATE tx_nrllm_agentrun SET status = 'completed', finished_at = ? WHERE uuid = ?`,
		finished.Unix(), run.UUID); err != nil {
		t.Fatal(err)
	}
	want := "Output and transcript removed on " + finished.Add(30*24*time.Hour).UTC().Format("2006-01-02") + " (retention 30 days)"
	if got := ada.get("/runs/" + run.UUID).doc(t).Find(`[data-testid="summary-retention"]`).Text(); got != want {
		t.Errorf("retention line %q, want %q", got, want)
	}
	if _, err := app.pool.ExecContext(t.Context(), `UPDATE tx_nrllm_agentrun SET finished_at = ? WHERE uuid = ?`,
		finished.Add(-30*24*time.Hour).Unix(), run.UUID); err != nil {
		t.Fatal(err)
	}
	if got := ada.get("/runs/" + run.UUID).doc(t).Find(`[data-testid="summary-retention"]`).Text(); !strings.HasPrefix(got, "Output and transcript were removed on ") {
		t.Errorf("retention line of a run past it %q", got)
	}
}
