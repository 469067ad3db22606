package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"runsdesk/runtime"
	"runsdesk/views"
)

// auditSince returns "actor action outcome reason" of the audit rows after row uid after,
// oldest first, and the uid of the newest row.
func (a *testApp) auditSince(after int64) ([]string, int64) {
	a.t.Helper()
	rows, err := a.audit.RecentAudit(a.t.Context(), 1000)
	if err != nil {
		a.t.Fatal(err)
	}
	var out []string
	last := after
	for _, r := range slices.Backward(rows) {
		if r.UID <= after {
			continue
		}
		if r.IP == "" && r.ActorUID > 0 {
			a.t.Errorf("audit row %+v of a person has no address", r)
		}
		out = append(out, r.ActorName+" "+r.Action+" "+r.Outcome+" "+r.Reason)
		last = r.UID
	}
	return out, last
}

// changesBy is the rows of actor without the listings' rows (user_list, token_list) every
// page view adds.
func changesBy(actor string, rows []string) []string {
	return slices.DeleteFunc(slices.Clone(rows), func(r string) bool {
		return !strings.HasPrefix(r, actor+" ") || strings.Contains(r, " user_list ") || strings.Contains(r, " token_list ")
	})
}

// secretOf returns the one-time secret a page shows, failing when it shows none.
func secretOf(t *testing.T, what string, res response) string {
	t.Helper()
	if res.status != http.StatusOK {
		t.Fatalf("%s: %d, want 200; body %.400s", what, res.status, res.body)
	}
	secret := strings.TrimSpace(res.doc(t).Find(`[data-testid="secret-value"]`).Text())
	if secret == "" {
		t.Fatalf("%s: no secret shown", what)
	}
	return secret
}

// wantRefused fails unless res is the 422 page saying why (want, a part of the message).
func wantRefused(t *testing.T, what string, res response, want string) {
	t.Helper()
	if res.status != http.StatusUnprocessableEntity {
		t.Fatalf("%s: %d, want 422; body %.400s", what, res.status, res.body)
	}
	if got := res.doc(t).Find(`[data-testid="error-summary"]`).Text(); !strings.Contains(got, want) {
		t.Errorf("%s: error summary %q, want it to say %q", what, got, want)
	}
}

// TestAdminPeoplePage: an admin lists, adds (the password shown once, in the answer only),
// disables, enables, changes the role of, resets the password of and ends the sessions of
// people through /admin/people; each writes the audit row `runsdesk user …` writes, with the
// admin as actor; the last enabled admin cannot be disabled or demoted; refused forms keep
// what was typed.
func TestAdminPeoplePage(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{})
	ada := app.login(runtime.RoleAdmin)
	_, mark := app.auditSince(0)

	page := ada.get(views.AdminPeoplePath)
	if page.status != http.StatusOK {
		t.Fatalf("GET /admin/people: %d", page.status)
	}
	names := page.doc(t).Find(`[data-testid="person-row"]`).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("data-username", "") })
	if !slices.Equal(names, []string{"ada", "rita", "sam"}) {
		t.Errorf("people listed %q, want ada, rita, sam", names)
	}
	got, mark := app.auditSince(mark)
	if !slices.Equal(got, []string{"ada user_list success users listed: 3"}) {
		t.Errorf("listing audit = %q", got)
	}

	added := ada.postForm(views.AdminPeoplePath, url.Values{"_csrf": {ada.token()}, "username": {"Nina"}, "role": {"reviewer"}, "email": {"nina@example.com"}})
	password := secretOf(t, "add", added)
	if _, _, err := app.accounts.Authenticate(t.Context(), "nina", password); err != nil {
		t.Fatalf("the shown password does not sign nina in: %v", err)
	}
	nina, err := app.accounts.AccountByUsername(t.Context(), "nina")
	if err != nil || nina.Role != runtime.RoleReviewer || nina.Email != "nina@example.com" {
		t.Fatalf("nina = %+v, %v", nina, err)
	}
	got, mark = app.auditSince(mark)
	want := []string{fmt.Sprintf(`ada user_add success user "nina" (uid %d): role reviewer`, nina.UID), "ada user_list success users listed: 4"}
	if !slices.Equal(got, want) {
		t.Errorf("add audit = %q, want %q", got, want)
	}
	if again := ada.get(views.AdminPeoplePath); strings.Contains(again.body, password) {
		t.Error("the password is shown again")
	}
	if strings.Contains(strings.Join(got, "\n"), password) || strings.Contains(app.logs.String(), password) {
		t.Error("the password is in the audit trail or the log")
	}
	_, mark = app.auditSince(0)

	for _, tc := range []struct {
		name, username, role, email, field, want string
	}{
		{"duplicate username", "NINA", "support", "n2@example.com", "add-username", `The username "NINA" is already taken.`},
		{"bad role", "otto", "root", "otto@example.com", "add-role", `The role must be admin, reviewer or support, got "root".`},
		{"bad email", "otto", "support", "not an address", "add-email", `"not an address" is not an email address`},
		{"no username", "", "support", "", "add-username", "The username is required."},
	} {
		res := ada.postForm(views.AdminPeoplePath, url.Values{"_csrf": {ada.token()}, "username": {tc.username}, "role": {tc.role}, "email": {tc.email}})
		wantRefused(t, tc.name, res, tc.want)
		doc := res.doc(t)
		if v := doc.Find(`#add-username`).AttrOr("value", ""); v != tc.username {
			t.Errorf("%s: username field %q, want %q as typed", tc.name, v, tc.username)
		}
		if v := doc.Find(`#add-email`).AttrOr("value", ""); v != tc.email {
			t.Errorf("%s: email field %q, want %q as typed", tc.name, v, tc.email)
		}
		if doc.Find(`#`+tc.field).AttrOr("aria-invalid", "") != "true" && tc.field != "add-role" {
			t.Errorf("%s: field %s not marked invalid", tc.name, tc.field)
		}
		if strings.Contains(res.body, `data-testid="secret"`) {
			t.Errorf("%s: a refused form shows a secret", tc.name)
		}
	}
	if _, err := app.accounts.AccountByUsername(t.Context(), "otto"); err == nil {
		t.Error("a refused add stored otto")
	}

	sam := app.login(runtime.RoleSupport)
	samUID := app.uids[runtime.RoleSupport]
	post := func(action, username string, extra ...string) response {
		form := url.Values{"_csrf": {ada.token()}, "username": {username}}
		for i := 0; i+1 < len(extra); i += 2 {
			form.Set(extra[i], extra[i+1])
		}
		return ada.postForm(views.PersonActionPath(action), form)
	}
	wantSeeOther(t, "disable", post("disable", "sam"), views.AdminPeoplePath)
	wantRedirectToLogin(t, "sam after being disabled", sam.get("/runs"))
	wantSeeOther(t, "enable", post("enable", "sam"), views.AdminPeoplePath)
	wantSeeOther(t, "enable again", post("enable", "sam"), views.AdminPeoplePath)
	wantSeeOther(t, "role", post("role", "sam", "role", "reviewer"), views.AdminPeoplePath)
	if u, _ := app.accounts.UserByUID(t.Context(), samUID); u.Role != runtime.RoleReviewer || u.Disabled {
		t.Errorf("sam after enable and role = %+v", u)
	}
	sam = app.login(runtime.RoleSupport)
	wantSeeOther(t, "end sessions", post("sessions", "sam"), views.AdminPeoplePath)
	wantRedirectToLogin(t, "sam after his sessions ended", sam.get("/runs"))
	reset := secretOf(t, "reset password", post("password", "sam"))
	if _, _, err := app.accounts.Authenticate(t.Context(), "sam", reset); err != nil {
		t.Fatalf("the reset password does not sign sam in: %v", err)
	}
	if u, _ := app.accounts.UserByUID(t.Context(), samUID); !u.PasswordChangeRequired {
		t.Error("a reset password does not have to be changed")
	}
	got, mark = app.auditSince(mark)
	who := fmt.Sprintf(`user "sam" (uid %d)`, samUID)
	want = []string{
		"ada user_disable success " + who,
		"ada user_enable success " + who,
		"ada user_role success " + who + ": role support → reviewer",
		"ada user_end_sessions success " + who,
		"ada user_reset_password success " + who,
	}
	if changes := changesBy("ada", got); !slices.Equal(changes, want) {
		t.Errorf("change audit = %q, want %q", changes, want)
	}
	if strings.Contains(strings.Join(got, "\n"), reset) || strings.Contains(app.logs.String(), reset) {
		t.Error("the reset password is in the audit trail or the log")
	}

	ada.get(views.AdminPeoplePath)
	wantRefused(t, "disable the last admin", post("disable", "ada"), "no enabled admin")
	demote := post("role", "ada", "role", "support")
	wantRefused(t, "demote the last admin", demote, "no enabled admin")
	if v := demote.doc(t).Find(`#role-ada option[selected]`).AttrOr("value", ""); v != "support" {
		t.Errorf("the refused role form shows %q, want support as chosen", v)
	}
	if u, _ := app.accounts.UserByUID(t.Context(), app.uids[runtime.RoleAdmin]); u.Disabled || u.Role != runtime.RoleAdmin {
		t.Errorf("ada after the refusals = %+v", u)
	}
	wantRefused(t, "unknown person", post("disable", "nobody"), `User "nobody" not found.`)
	got, _ = app.auditSince(mark)
	if !slices.Contains(got, `ada user_disable failure user "nobody" not found`) {
		t.Errorf("audit %q lacks the refused disable of nobody", got)
	}
	if u, _ := app.accounts.UserByUID(t.Context(), samUID); u.Role != runtime.RoleReviewer {
		t.Fatal(u)
	}
	wantSeeOther(t, "a second admin", post("role", "sam", "role", "admin"), views.AdminPeoplePath)
	wantSeeOther(t, "disable an admin while another remains", post("disable", "sam"), views.AdminPeoplePath)

	rita := app.login(runtime.RoleReviewer)
	if res := rita.get(views.AdminPeoplePath); res.status != http.StatusForbidden {
		t.Errorf("a reviewer on /admin/people: %d, want 403", res.status)
	}
	if res := rita.postForm(views.PersonActionPath("disable"), url.Values{"_csrf": {rita.token()}, "username": {"ada"}}); res.status != http.StatusForbidden {
		t.Errorf("a reviewer disabling ada: %d, want 403", res.status)
	}
	got, _ = app.auditSince(mark)
	if n := len(slices.DeleteFunc(got, func(r string) bool { return !strings.HasPrefix(r, "rita "+actionAccessDenied+" ") })); n != 2 {
		t.Errorf("%d access denials of rita audited, want 2", n)
	}
}

// TestAdminTokensPage: an admin creates a service account (its token shown once, only its
// hash stored), with an expiry the CLI reads too, revokes and rotates it (the lifetime kept)
// through /admin/tokens, each audited as `runsdesk token …` is; refused forms keep what was
// typed.
func TestAdminTokensPage(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{})
	ada := app.login(runtime.RoleAdmin)
	if res := ada.get(views.AdminTokensPath); res.status != http.StatusOK || !strings.Contains(res.body, `data-testid="tokens-empty"`) {
		t.Fatalf("GET /admin/tokens: %d", res.status)
	}
	_, mark := app.auditSince(0)

	create := func(name, expires string, scopes ...string) response {
		return ada.postForm(views.AdminTokensPath, url.Values{"_csrf": {ada.token()}, "name": {name}, "expires": {expires}, "scopes": scopes})
	}
	token := secretOf(t, "create", create("ci", "90d", "read", "cancel"))
	actor, err := app.tokens.ActorForToken(t.Context(), token)
	if err != nil || actor.Name != "ci" || !slices.Equal(actor.Scopes, []string{"read", "cancel"}) {
		t.Fatalf("the shown token: %+v, %v", actor, err)
	}
	sa, err := app.tokens.ServiceAccountByName(t.Context(), "ci")
	if want := time.Now().Add(90 * 24 * time.Hour).Unix(); err != nil || sa.Expires < want-60 || sa.Expires > want+60 {
		t.Fatalf("ci expires at %d (%v), want about %d", sa.Expires, err, want)
	}
	got, mark := app.auditSince(mark)
	want := []string{fmt.Sprintf(`ada token_create success service account "ci": scopes read,cancel; expires %s`, time.Unix(sa.Expires, 0).UTC().Format(time.RFC3339)),
		"ada token_list success service accounts listed: 1"}
	if !slices.Equal(got, want) {
		t.Errorf("create audit = %q, want %q", got, want)
	}
	if row := ada.get(views.AdminTokensPath); strings.Contains(row.body, token) || row.doc(t).Find(`[data-testid="token-state"]`).Text() != "Active" {
		t.Errorf("the tokens page after creating: the token shown again, or ci not active")
	}

	for _, tc := range []struct {
		name, token, expires string
		scopes               []string
		field, want          string
	}{
		{"bad expiry", "nightly", "soon", []string{"run", "read"}, "create-expires", `"soon" is not a positive duration`},
		{"past date", "nightly", "2001-01-01", []string{"run"}, "create-expires", "2001-01-01 is not after today."},
		{"no scope", "nightly", "12h", nil, "create-scopes", "At least one scope is required"},
		{"duplicate name", "ci", "", []string{"read"}, "create-name", `A service account named "ci" already exists.`},
	} {
		res := create(tc.token, tc.expires, tc.scopes...)
		wantRefused(t, tc.name, res, tc.want)
		doc := res.doc(t)
		if v := doc.Find(`#create-name`).AttrOr("value", ""); v != tc.token {
			t.Errorf("%s: name field %q, want %q as typed", tc.name, v, tc.token)
		}
		if v := doc.Find(`#create-expires`).AttrOr("value", ""); v != tc.expires {
			t.Errorf("%s: expires field %q, want %q as typed", tc.name, v, tc.expires)
		}
		var ticked []string
		doc.Find(`input[name="scopes"][checked]`).Each(func(_ int, s *goquery.Selection) { ticked = append(ticked, s.AttrOr("value", "")) })
		if !slices.Equal(ticked, tc.scopes) {
			t.Errorf("%s: scopes ticked %q, want %q", tc.name, ticked, tc.scopes)
		}
		if strings.Contains(res.body, `data-testid="secret"`) {
			t.Errorf("%s: a refused form shows a secret", tc.name)
		}
	}
	if _, err := app.tokens.ServiceAccountByName(t.Context(), "nightly"); err == nil {
		t.Error("a refused create stored nightly")
	}
	_, mark = app.auditSince(0)

	act := func(action string) response {
		return ada.postForm(views.TokenActionPath(action), url.Values{"_csrf": {ada.token()}, "name": {"ci"}})
	}
	wantSeeOther(t, "revoke", act("revoke"), views.AdminTokensPath)
	if _, err := app.tokens.ActorForToken(t.Context(), token); err == nil {
		t.Error("the revoked token still works")
	}
	if state := ada.get(views.AdminTokensPath).doc(t).Find(`[data-testid="token-state"]`).Text(); state != "Revoked" {
		t.Errorf("state after revoke %q", state)
	}
	rotated := secretOf(t, "rotate", act("rotate"))
	if _, err := app.tokens.ActorForToken(t.Context(), rotated); err != nil {
		t.Errorf("the rotated token: %v", err)
	}
	if _, err := app.tokens.ActorForToken(t.Context(), token); err == nil {
		t.Error("the old token works after the rotation")
	}
	if sa, _ := app.tokens.ServiceAccountByName(t.Context(), "ci"); sa.Expires < time.Now().Add(90*24*time.Hour).Unix()-60 {
		t.Errorf("the rotated token expires at %d, want 90 days from the rotation", sa.Expires)
	}
	got, _ = app.auditSince(mark)
	changes := changesBy("ada", got)
	if want := []string{`ada token_revoke success service account "ci"`, `ada token_rotate success service account "ci" (was revoked)`}; !slices.Equal(changes, want) {
		t.Errorf("audit = %q, want %q", changes, want)
	}
	for _, secret := range []string{token, rotated} {
		if strings.Contains(strings.Join(got, "\n"), secret) || strings.Contains(app.logs.String(), secret) {
			t.Error("a token is in the audit trail or the log")
		}
	}
	wantRefused(t, "unknown account", ada.postForm(views.TokenActionPath("revoke"), url.Values{"_csrf": {ada.token()}, "name": {"nobody"}}),
		`Service account "nobody" not found.`)
}

// TestAdminPeopleRemovesASecondFactor: the people page shows who has a second factor and
// removes it (user_mfa_reset, as `runsdesk user mfa-reset` writes it), ending the person's
// sessions; a person without one is offered no removal.
func TestAdminPeopleRemovesASecondFactor(t *testing.T) {
	t.Parallel()
	d := newMFADesk(t, appOptions{})
	rita := d.app.login(runtime.RoleReviewer)
	d.enrol(rita)
	ada := d.app.login(runtime.RoleAdmin)
	row := func(name string) *goquery.Selection {
		return ada.get(views.AdminPeoplePath).doc(t).Find(`[data-testid="person-row"][data-username="` + name + `"]`)
	}
	if r := row("rita"); strings.TrimSpace(r.Find(`[data-testid="person-mfa"]`).Text()) != "On" || r.Find(`[data-testid="person-mfa-reset"]`).Length() != 1 {
		t.Fatal("rita's row does not show her second factor and its removal")
	}
	if row("sam").Find(`[data-testid="person-mfa-reset"]`).Length() != 0 {
		t.Error("sam, without a second factor, is offered its removal")
	}
	_, mark := d.app.auditSince(0)
	wantSeeOther(t, "remove rita's factor", ada.postForm(views.PersonActionPath("mfa-reset"), url.Values{"_csrf": {ada.token()}, "username": {"rita"}}),
		views.AdminPeoplePath)
	if enrolled, err := d.app.factors.Enrolled(t.Context(), d.app.uids[runtime.RoleReviewer]); err != nil || enrolled {
		t.Errorf("rita still enrolled: %v, %v", enrolled, err)
	}
	wantRedirectToLogin(t, "rita after her factor was removed", rita.get("/runs"))
	wantSeeOther(t, "remove it again", ada.postForm(views.PersonActionPath("mfa-reset"), url.Values{"_csrf": {ada.token()}, "username": {"rita"}}),
		views.AdminPeoplePath)
	got, _ := d.app.auditSince(mark)
	who := fmt.Sprintf(`user "rita" (uid %d)`, d.app.uids[runtime.RoleReviewer])
	want := []string{"ada user_mfa_reset success " + who + ": second factor removed", "ada user_mfa_reset failure " + who + " has no second factor"}
	if changes := changesBy("ada", got); !slices.Equal(changes, want) {
		t.Errorf("audit = %q, want %q", changes, want)
	}
}
