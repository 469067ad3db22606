package handlers

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"runsdesk/runtime"
)

// browserPassword fills the sign-in form the tab shows and waits for the code form.
func (b *tab) browserPassword(role runtime.Role) {
	b.t.Helper()
	b.do("password of "+string(role),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="login-form"]`)),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="username"]`), testUsers[role]),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="password"]`), testPassword),
		chromedp.Click(chromedp.CSS(`[data-testid="login-submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="code-form"]`)),
	)
}

// browserCode types code into the code form and waits for the signed-in frame.
func (b *tab) browserCode(code string) {
	b.t.Helper()
	b.do("type the code",
		chromedp.SendKeys(chromedp.CSS(`[data-testid="login-code"]`), code),
		chromedp.Click(chromedp.CSS(`[data-testid="code-submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="signed-in-user"]`)),
	)
}

// TestBrowserTOTPEnrolmentAndSignIn: a reviewer enrols from their account page — the QR code
// image loads under the page's Content-Security-Policy, the secret is shown as text, a code
// the test computes from it turns the factor on and ten recovery codes are shown — then signs
// out, opens a deep link, signs in with the password and a fresh code, and lands on it.
func TestBrowserTOTPEnrolmentAndSignIn(t *testing.T) {
	t.Parallel()
	d := newMFADesk(t, appOptions{})
	b := newTab(t, d.app)
	b.signIn(runtime.RoleReviewer)
	b.open("/account")
	b.do("start enrolment",
		chromedp.Click(chromedp.CSS(`[data-testid="account-security-link"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="security-begin"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="security-begin"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="security-qr"]`)),
	)
	b.waitFor("the QR code image loads", "/account/security", func() bool {
		return evalIn[bool](b, `(i => i.complete && i.naturalWidth === 240)(document.querySelector('[data-testid="security-qr"]'))`)
	})
	b.screenshot("mfa-enrol")
	secret := b.text(`[data-testid="security-secret"]`)
	b.do("confirm with a code",
		chromedp.SendKeys(chromedp.CSS(`[data-testid="security-code"]`), d.code(secret)),
		chromedp.Click(chromedp.CSS(`[data-testid="security-confirm"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="recovery-codes"]`)),
	)
	if n := b.count(`[data-testid="recovery-code"]`); n != 10 {
		t.Fatalf("%d recovery codes shown, want 10", n)
	}
	b.screenshot("mfa-recovery-codes")
	b.do("sign out",
		chromedp.Click(chromedp.CSS(`[data-testid="logout"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="login-form"]`)),
	)
	d.nextStep()
	b.open("/runs/recent")
	b.browserPassword(runtime.RoleReviewer)
	b.screenshot("mfa-code")
	b.browserCode(d.code(secret))
	if path := evalIn[string](b, "location.pathname"); path != "/runs/recent" {
		t.Fatalf("signed in to %q, want the deep link /runs/recent", path)
	}
	if got := b.text(`[data-testid="signed-in-user"]`); got != testUsers[runtime.RoleReviewer] {
		t.Fatalf("signed in as %q", got)
	}
}

// TestBrowserRecoveryCodeSignIn: an admin without their app signs in with the password and a
// recovery code typed as printed; the security page then counts one code fewer.
func TestBrowserRecoveryCodeSignIn(t *testing.T) {
	t.Parallel()
	d := newMFADesk(t, appOptions{})
	_, codes := d.enrol(d.app.login(runtime.RoleAdmin))
	b := newTab(t, d.app)
	b.open("/")
	b.browserPassword(runtime.RoleAdmin)
	b.browserCode(codes[0])
	b.open("/account/security")
	if got := b.text(`[data-testid="security-recovery-left"]`); !strings.Contains(got, "9 unused recovery codes") {
		t.Fatalf("security page says %q, want 9 codes left", got)
	}
	if rows := auditReasons(t, d.app, "recovery_code_used"); rows != "a recovery code signed in" {
		t.Fatalf("recovery_code_used audit rows %q", rows)
	}
}
