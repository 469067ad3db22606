package handlers

import (
	"testing"

	"github.com/chromedp/chromedp"

	"runsdesk/runtime"
)

// TestBrowserAdminAddsAPersonAndRevokesAToken: in a browser, an admin opens People from the
// header, adds a person (the generated password shown on the answer, and it signs them in),
// then opens API tokens and revokes a token, which the API refuses from then on.
func TestBrowserAdminAddsAPersonAndRevokesAToken(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{})
	token, err := app.tokens.CreateToken(t.Context(), "ci", []string{runtime.ScopeRead})
	if err != nil {
		t.Fatal(err)
	}
	b := newTab(t, app)
	b.signIn(runtime.RoleAdmin)
	b.do("open People from the header",
		chromedp.Click(chromedp.CSS(`[data-testid="nav-people"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="people-table"]`)),
	)
	b.do("add nina as a support person",
		chromedp.SendKeys(chromedp.CSS(`[data-testid="add-username"]`), "nina"),
		chromedp.SetValue(chromedp.CSS(`[data-testid="person-add-role"]`), "support"),
		chromedp.Click(chromedp.CSS(`[data-testid="person-add-submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="secret-value"]`)),
	)
	b.screenshot("people-added")
	password := b.text(`[data-testid="secret-value"]`)
	if actor, _, err := app.accounts.Authenticate(t.Context(), "nina", password); err != nil || actor.Role != runtime.RoleSupport {
		t.Fatalf("nina with the shown password: %+v, %v", actor, err)
	}
	if got := b.text(`[data-testid="person-row"][data-username="nina"] [data-testid="person-state"]`); got != "Enabled" {
		t.Errorf("nina's state %q", got)
	}

	b.do("open API tokens from the header and revoke ci",
		chromedp.Click(chromedp.CSS(`[data-testid="nav-tokens"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="tokens-table"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="token-row"][data-name="ci"] [data-testid="token-revoke"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="flash"]`)),
	)
	b.screenshot("token-revoked")
	if got := b.text(`[data-testid="flash"] span:not(.alert__icon)`); got != msgTokenRevoked {
		t.Errorf("flash %q", got)
	}
	if got := b.text(`[data-testid="token-row"][data-name="ci"] [data-testid="token-state"]`); got != "Revoked" {
		t.Errorf("ci's state %q, want Revoked", got)
	}
	if _, err := app.tokens.ActorForToken(t.Context(), token); err == nil {
		t.Error("the revoked token still works")
	}
}
