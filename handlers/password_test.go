package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"runsdesk/db"
	"runsdesk/runtime"
)

func TestChangePassword(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{})
	c, other := app.login(runtime.RoleReviewer), app.login(runtime.RoleReviewer)
	const next = "a brand new long passphrase"
	post := func(current, newPass, confirm string) response {
		return c.postForm("/account/password", url.Values{"_csrf": {c.token()}, "current": {current}, "new": {newPass}, "confirm": {confirm}})
	}
	for _, tc := range []struct {
		name, current, newPass, confirm, field, text string
	}{
		{"wrong current password", "not my password", next, next, "password-current", "not correct"},
		{"missing current password", "", next, next, "password-current", "Enter your current password"},
		{"mismatch", testPassword, next, next + "x", "password-confirm", "differ"},
		{"too short", testPassword, "short", "short", "password-new", "at least 15 characters"},
		{"common", testPassword, "passwordpassword", "passwordpassword", "password-new", "too common"},
	} {
		res := post(tc.current, tc.newPass, tc.confirm)
		if res.status != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d, want 422", tc.name, res.status)
			continue
		}
		doc := res.doc(t)
		if got := doc.Find(`[data-testid="error-` + tc.field + `-error"]`).Text(); !strings.Contains(got, tc.text) {
			t.Errorf("%s: field error %q, want it to mention %q", tc.name, got, tc.text)
		}
		if inv, _ := doc.Find("#" + tc.field).Attr("aria-invalid"); inv != "true" {
			t.Errorf("%s: #%s not marked aria-invalid", tc.name, tc.field)
		}
		if doc.Find(`[data-testid="error-summary"] a[href="#`+tc.field+`"]`).Length() != 1 {
			t.Errorf("%s: error summary does not link to #%s", tc.name, tc.field)
		}
		if strings.Contains(res.body, tc.current) && tc.current != "" || strings.Contains(res.body, next) {
			t.Errorf("%s: the page echoes a password", tc.name)
		}
	}

	before := c.cookie()
	res := post(testPassword, next, next)
	if res.status != http.StatusSeeOther || res.header.Get("Location") != "/" {
		t.Fatalf("change: %d Location %q, want 303 /", res.status, res.header.Get("Location"))
	}
	if c.cookie() == before {
		t.Error("session token not renewed after the password change")
	}
	home := c.get("/")
	if home.status != http.StatusOK || !strings.Contains(home.doc(t).Find(`[data-testid="flash"]`).Text(), "password has been changed") {
		t.Errorf("after the change: %d, want the start page with a confirmation", home.status)
	}
	wantRedirectToLogin(t, "the person's other session", other.get("/"))
	if _, _, err := app.accounts.Authenticate(t.Context(), "rita", next); err != nil {
		t.Errorf("new password not accepted: %v", err)
	}
	audit := strings.Join(app.auditActions(), ",")
	if !strings.Contains(audit, "password_change/failure") || !strings.Contains(audit, "password_change/success") {
		t.Errorf("audit %s: want the failed and the successful change", audit)
	}
}

// TestChangePasswordIsThrottled guesses the current password from a signed-in session: after
// the account's allowance the right one is refused with 429 too, every failure is audited, and
// the guesses count against the same account allowance as sign-in.
func TestChangePasswordIsThrottled(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{limits: db.LoginLimits{AccountFailures: 3, IPFailures: 1000}})
	c := app.login(runtime.RoleReviewer)
	const next = "a brand new long passphrase"
	post := func(current string) response {
		return c.postForm("/account/password", url.Values{"_csrf": {c.token()}, "current": {current}, "new": {next}, "confirm": {next}})
	}
	for i := range 3 {
		if res := post("guess number " + string(rune('1'+i))); res.status != http.StatusUnprocessableEntity {
			t.Fatalf("guess %d: %d, want 422", i+1, res.status)
		}
	}
	res := post(testPassword)
	if res.status != http.StatusTooManyRequests {
		t.Fatalf("the right current password after 3 wrong ones: %d, want 429", res.status)
	}
	if ra := res.header.Get("Retry-After"); ra == "" || ra == "0" {
		t.Errorf("Retry-After = %q, want seconds", ra)
	}
	if got := res.doc(t).Find(`[data-testid="error-password-current-error"]`).Text(); !strings.Contains(got, "Too many") {
		t.Errorf("429 form says %q, want the throttle message at the current password", got)
	}
	if _, _, err := app.accounts.Authenticate(t.Context(), "rita", testPassword); err != nil {
		t.Errorf("the throttled change went through: %v", err)
	}
	fresh := app.newClient()
	if res := fresh.postForm("/login", url.Values{"username": {"rita"}, "password": {testPassword}, "_csrf": {fresh.csrfFrom("/login")}}); res.status != http.StatusTooManyRequests {
		t.Errorf("sign-in as rita right after 3 wrong current passwords: %d, want 429 (one allowance per account)", res.status)
	}
	audit := strings.Join(app.auditActions(), ",")
	if strings.Count(audit, "password_change/failure") != 3 || !strings.Contains(audit, "password_change/throttled") {
		t.Errorf("audit %s: want 3 password_change/failure and a password_change/throttled", audit)
	}
}

func TestLayoutShowsNavigationByRole(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{})
	for _, tc := range []struct {
		role     runtime.Role
		label    string
		canStart bool
	}{
		{runtime.RoleAdmin, "Admin", true},
		{runtime.RoleReviewer, "Reviewer", true},
		{runtime.RoleSupport, "Support", false},
	} {
		doc := app.login(tc.role).get("/").doc(t)
		if got := doc.Find(`[data-testid="signed-in-role"]`).Text(); got != tc.label {
			t.Errorf("%s: role label %q", tc.role, got)
		}
		for _, id := range []string{"nav-inbox", "nav-recent"} {
			if doc.Find(`[data-testid="`+id+`"]`).Length() != 1 {
				t.Errorf("%s: no %s", tc.role, id)
			}
		}
		if got := doc.Find(`[data-testid="nav-start"]`).Length() == 1; got != tc.canStart {
			t.Errorf("%s: Start a run shown = %v, want %v", tc.role, got, tc.canStart)
		}
		if got := doc.Find(`[data-testid="home-start"]`).Length() == 1; got != tc.canStart {
			t.Errorf("%s: start card shown = %v, want %v", tc.role, got, tc.canStart)
		}
		if doc.Find(`form[action="/logout"][method="post"] input[name="_csrf"]`).Length() != 1 {
			t.Errorf("%s: no sign-out form with a CSRF token", tc.role)
		}
		if doc.Find("main#main").Length() != 1 || doc.Find(`a.skip-link[href="#main"]`).Length() != 1 {
			t.Errorf("%s: no main landmark with a skip link", tc.role)
		}
	}
	if doc := app.newClient().get("/login").doc(t); doc.Find(`nav`).Length() != 0 || doc.Find(`[data-testid="logout"]`).Length() != 0 {
		t.Error("the anonymous login page shows navigation or a sign-out button")
	}
}
