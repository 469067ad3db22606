package handlers

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"runsdesk/notify"
	"runsdesk/runtime"
	"runsdesk/runtime/model"
)

// notifyingConfiguration notifies a webhook when its runs wait.
var notifyingConfiguration = runtime.Configuration{Identifier: "refunds", Name: "Refund assistant",
	Provider: model.Settings{Kind: model.KindScripted}, Notify: []runtime.NotifyRule{{
		Events: []runtime.NotifyEvent{runtime.NotifyWaiting}, Channel: runtime.ChannelWebhook,
		URL: "https://hooks.example/desk", SecretEnv: "DESK_HOOK_SECRET"}}}

// waitingWithNotification stores a run of configuration identifier waiting for input, which
// writes its waiting notifications.
func (a *testApp) waitingWithNotification(t *testing.T, identifier string) runtime.Run {
	t.Helper()
	ctx := context.Background()
	cfg, err := a.store.ConfigurationByIdentifier(ctx, identifier)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	r, err := a.store.CreateRun(ctx, runtime.NewRun{UUID: uuid.NewString(), ConfigurationUID: cfg.UID, ConfigurationIdentifier: identifier,
		BeUser: a.uids[runtime.RoleAdmin], QueuedRequest: `{}`, Lease: runtime.Lease{Owner: "w", Expires: now + 60, Now: now}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.store.Suspend(ctx, r.UID, "w", runtime.Suspension{Status: runtime.StatusWaitingInput,
		State: `{"messages":[]}`, Tools: []string{"ask"}}, now); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRunPageNotifications: the run page lists the run's notifications with their delivery
// state, attempts and last failure (to every reader, support included); a run without any
// shows no section.
func TestRunPageNotifications(t *testing.T) {
	t.Parallel()
	plain := runtime.Configuration{Identifier: "plain", Name: "Plain", Provider: model.Settings{Kind: model.KindScripted}}
	a := newTestApp(t, appOptions{configurations: []runtime.Configuration{notifyingConfiguration, plain}})
	run := a.waitingWithNotification(t, "refunds")
	c := a.login(runtime.RoleSupport)
	rows := c.get("/runs/" + run.UUID).doc(t).Find(`[data-testid="notification-row"]`)
	if rows.Length() != 1 || rows.AttrOr("data-state", "") != "pending" || !strings.Contains(rows.Text(), "waiting") ||
		!strings.Contains(rows.Text(), "webhook") || !strings.Contains(rows.Text(), "Pending") {
		t.Fatalf("notification rows: %d %q", rows.Length(), rows.Text())
	}
	ns, err := a.store.ClaimNotifications(context.Background(), "d", time.Now().Unix(), time.Now().Unix()+30, 10, runtime.NotifyReach{})
	if err != nil || len(ns) != 1 {
		t.Fatalf("claim: %v %v", ns, err)
	}
	if err := a.store.NotificationFailed(context.Background(), ns[0].UID, "d", "the endpoint answered 410 Gone", time.Now().Unix()); err != nil {
		t.Fatal(err)
	}
	rows = c.get("/runs/" + run.UUID).doc(t).Find(`[data-testid="notification-row"]`)
	if rows.AttrOr("data-state", "") != "failed" || !strings.Contains(rows.Text(), "Failed") ||
		!strings.Contains(rows.Text(), "the endpoint answered 410 Gone") || !strings.Contains(rows.Text(), "1") {
		t.Fatalf("failed row: %q", rows.Text())
	}
	other := a.waitingWithNotification(t, "plain")
	if n := c.get("/runs/" + other.UUID).doc(t).Find(`[data-testid="notifications"]`).Length(); n != 0 {
		t.Fatalf("a run without notifications shows the section (%d)", n)
	}
}

// TestDeepLinkReturnsAfterSignIn: a notification's link opens the run page; signed out, it
// leads to sign-in and back to that exact run; a next that leaves the site is dropped.
func TestDeepLinkReturnsAfterSignIn(t *testing.T) {
	t.Parallel()
	a := newTestApp(t, appOptions{configurations: []runtime.Configuration{notifyingConfiguration}})
	run := a.waitingWithNotification(t, "refunds")
	link, err := url.Parse(notify.RunLink("https://desk.example", run.UUID))
	if err != nil {
		t.Fatal(err)
	}
	c := a.newClient()
	res := c.get(link.Path)
	want := "/login?next=" + url.QueryEscape("/runs/"+run.UUID)
	if res.status != http.StatusSeeOther || res.header.Get("Location") != want {
		t.Fatalf("signed out: %d to %q, want 303 to %q", res.status, res.header.Get("Location"), want)
	}
	form := c.get(want).doc(t)
	next := form.Find(`input[name="next"]`).AttrOr("value", "")
	if next != "/runs/"+run.UUID {
		t.Fatalf("the sign-in form carries next %q", next)
	}
	tok := form.Find(`input[name="_csrf"]`).AttrOr("value", "")
	res = c.postForm("/login", url.Values{"username": {testUsers[runtime.RoleReviewer]}, "password": {testPassword}, "_csrf": {tok}, "next": {next}})
	if res.status != http.StatusSeeOther || res.header.Get("Location") != "/runs/"+run.UUID {
		t.Fatalf("sign-in: %d to %q, want 303 to the run", res.status, res.header.Get("Location"))
	}
	page := c.get(res.header.Get("Location"))
	if page.status != http.StatusOK || page.doc(t).Find(`[data-testid="run-uuid"]`).Text() != run.UUID {
		t.Fatalf("run page after sign-in: %d", page.status)
	}

	evil := a.newClient()
	form = evil.get("/login?next=" + url.QueryEscape("//evil.example/runs/"+run.UUID)).doc(t)
	if got := form.Find(`input[name="next"]`).AttrOr("value", ""); got != "/" {
		t.Fatalf("an off-site next became %q", got)
	}
}
