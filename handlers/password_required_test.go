package handlers

import (
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"

	"runsdesk/runtime"
)

// TestAResetPasswordMustBeChangedFirst: after a reset, sign-in leads to /account/password and
// every other page of a signed-in person redirects there (sign-out excepted) until the person
// has chosen a new password.
func TestAResetPasswordMustBeChangedFirst(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{typo3Runs: true})
	const reset = "a password the admin was given"
	const chosen = "a password the admin chose alone"
	if err := app.accounts.ResetPassword(t.Context(), app.uids[runtime.RoleAdmin], reset, nil); err != nil {
		t.Fatal(err)
	}
	c := app.newClient()
	res := c.postForm("/login", url.Values{"username": {"ada"}, "password": {reset}, "next": {"/runs"}, "_csrf": {c.csrfFrom("/login")}})
	if res.status != http.StatusSeeOther || res.header.Get("Location") != "/account/password" {
		t.Fatalf("sign-in with a reset password: %d Location %q, want 303 /account/password", res.status, res.header.Get("Location"))
	}
	form := c.get("/account/password")
	if form.status != http.StatusOK || form.doc(t).Find(`[data-testid="password-required"]`).Length() != 1 {
		t.Errorf("/account/password: %d, want the form saying a new password is required", form.status)
	}
	csrf := c.token()

	var blocked []string
	for key, a := range routeMatrix {
		if a != accessSignedIn && a != accessDeciders && a != accessAdmins {
			continue
		}
		if key == "GET /account/password" || key == "POST /account/password" || key == "POST /logout" {
			continue
		}
		blocked = append(blocked, key)
	}
	sort.Strings(blocked)
	for _, key := range blocked {
		method, path, _ := strings.Cut(key, " ")
		res := c.request(method, concretePath(path), strings.NewReader(url.Values{"_csrf": {csrf}}.Encode()),
			http.Header{"Content-Type": {"application/x-www-form-urlencoded"}})
		if res.status != http.StatusSeeOther || res.header.Get("Location") != "/account/password" {
			t.Errorf("%s before the change: %d Location %q, want 303 /account/password", key, res.status, res.header.Get("Location"))
		}
	}

	res = c.postForm("/account/password", url.Values{"_csrf": {csrf}, "current": {reset}, "new": {reset}, "confirm": {reset}})
	if res.status != http.StatusUnprocessableEntity || !strings.Contains(res.body, "must differ") {
		t.Errorf("keeping the reset password: %d, want 422 saying it must differ", res.status)
	}
	res = c.postForm("/account/password", url.Values{"_csrf": {csrf}, "current": {reset}, "new": {chosen}, "confirm": {chosen}})
	if res.status != http.StatusSeeOther {
		t.Fatalf("change: %d, want 303", res.status)
	}
	if got := c.get("/runs"); got.status != http.StatusOK {
		t.Errorf("/runs after the change: %d, want 200", got.status)
	}
	if got := c.get("/account/password"); got.doc(t).Find(`[data-testid="password-required"]`).Length() != 0 {
		t.Error("the form still says a new password is required after the change")
	}
}

// TestSignOutWorksBeforeTheRequiredChange: a person who must choose a new password may still
// sign out.
func TestSignOutWorksBeforeTheRequiredChange(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{})
	if err := app.accounts.ResetPassword(t.Context(), app.uids[runtime.RoleSupport], "a password sam was given", nil); err != nil {
		t.Fatal(err)
	}
	c := app.newClient()
	c.postForm("/login", url.Values{"username": {"sam"}, "password": {"a password sam was given"}, "_csrf": {c.csrfFrom("/login")}})
	res := c.postForm("/logout", url.Values{"_csrf": {c.token()}})
	if res.status != http.StatusSeeOther || !strings.HasPrefix(res.header.Get("Location"), "/login") {
		t.Errorf("sign-out: %d Location %q, want 303 /login", res.status, res.header.Get("Location"))
	}
	wantRedirectToLogin(t, "after sign-out", c.get("/account/password"))
}
