package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"runsdesk/runtime"
	"runsdesk/views"
)

// TestTimeZoneOnTheAccountPage: a person chooses a time zone on their account page; from then
// on every page writes absolute times in it ("1 Dec 2026, 19:57 CET") while the datetime stays
// in UTC, and others still see UTC; a name that is no IANA zone (or the machine's "Local") is
// refused with 422, what was typed kept, and changes nothing; an empty field is UTC again.
func TestTimeZoneOnTheAccountPage(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	uuid := app.pause(runtime.RoleAdmin, "mail")
	ada, rita := app.login(runtime.RoleAdmin), app.login(runtime.RoleReviewer)
	since := time.Unix(app.row(uuid).SuspendedAt, 0)
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	title := func(c *client) (string, string) {
		el := c.get("/runs").doc(t).Find(`[data-testid="inbox-row-since"] time`)
		return el.AttrOr("title", ""), el.AttrOr("datetime", "")
	}
	if got, _ := title(ada); got != views.AbsoluteTime(since, nil) || !strings.HasSuffix(got, " UTC") {
		t.Errorf("before choosing: title %q, want %q", got, views.AbsoluteTime(since, nil))
	}
	if href := ada.get("/runs").doc(t).Find(`[data-testid="signed-in-user"]`).AttrOr("href", ""); href != views.AccountPath {
		t.Errorf("the signed-in name links to %q, want the account page", href)
	}
	page := ada.get(views.AccountPath)
	if page.status != http.StatusOK || page.doc(t).Find(`[data-testid="account-time-zone"]`).AttrOr("value", "x") != "" {
		t.Fatalf("account page: %d, time zone field %q", page.status, page.doc(t).Find(`[data-testid="account-time-zone"]`).AttrOr("value", "x"))
	}
	for _, bad := range []string{"Mars/Olympus", "Local", "../etc/passwd", strings.Repeat("A", 80)} {
		res := ada.postForm(views.AccountTimeZonePath, url.Values{"_csrf": {ada.token()}, "time_zone": {bad}})
		doc := res.doc(t)
		if res.status != http.StatusUnprocessableEntity || doc.Find(`[data-testid="account-time-zone"]`).AttrOr("value", "") != bad ||
			!strings.Contains(doc.Find(`[data-testid="error-account-time-zone-error"]`).Text(), "not a time zone name") {
			t.Errorf("time zone %q: %d, field %q, error %q; want 422 keeping it with the reason", bad, res.status,
				doc.Find(`[data-testid="account-time-zone"]`).AttrOr("value", ""), doc.Find(`[data-testid="error-account-time-zone-error"]`).Text())
		}
	}
	if got, _ := title(ada); !strings.HasSuffix(got, " UTC") {
		t.Errorf("a refused zone changed the times: %q", got)
	}
	wantSeeOther(t, "save Europe/Berlin", ada.postForm(views.AccountTimeZonePath, url.Values{"_csrf": {ada.token()}, "time_zone": {" Europe/Berlin "}}), views.AccountPath)
	if got := ada.flashTexts(); got != msgTimeZoneSaved {
		t.Errorf("flash %q", got)
	}
	if got := ada.get(views.AccountPath).doc(t).Find(`[data-testid="account-time-zone"]`).AttrOr("value", ""); got != "Europe/Berlin" {
		t.Errorf("account page shows %q, want the saved zone", got)
	}
	got, datetime := title(ada)
	if want := views.AbsoluteTime(since, berlin); got != want || strings.HasSuffix(got, "UTC") || datetime != views.MachineTime(since) {
		t.Errorf("in Europe/Berlin: title %q datetime %q, want %q and %q", got, datetime, want, views.MachineTime(since))
	}
	if got := ada.get("/runs/"+uuid).doc(t).Find(`[data-testid="timeline"] time`).First().AttrOr("title", ""); !strings.HasSuffix(got, strings.Fields(views.AbsoluteTime(time.Now(), berlin))[4]) {
		t.Errorf("run page timeline time %q, want it in the chosen zone", got)
	}
	if got, _ := title(rita); !strings.HasSuffix(got, " UTC") {
		t.Errorf("another person's page: %q, want UTC", got)
	}
	wantSeeOther(t, "back to UTC", ada.postForm(views.AccountTimeZonePath, url.Values{"_csrf": {ada.token()}, "time_zone": {""}}), views.AccountPath)
	if got, _ := title(ada); got != views.AbsoluteTime(since, nil) {
		t.Errorf("after clearing: %q, want UTC", got)
	}
}
