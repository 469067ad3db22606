package handlers

import (
	"testing"

	"github.com/chromedp/chromedp"

	"runsdesk/runtime"
)

// TestBrowserConfigurationPage: in a browser, an admin opens Configuration from the header
// and sees every section with its download link; on a 390×844 phone the page does not scroll
// sideways.
func TestBrowserConfigurationPage(t *testing.T) {
	app := newTestApp(t, appOptions{})
	applyTo(t, app)
	b := newTab(t, app)
	b.signIn(runtime.RoleAdmin)
	b.do("open Configuration from the header",
		chromedp.Click(chromedp.CSS(`[data-testid="nav-configuration"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="configuration-download-link"]`)),
	)
	b.screenshot("configuration-1280x900")
	for _, section := range []string{"configuration-configurations", "configuration-notify", "configuration-tools", "configuration-servers", "configuration-rules"} {
		if n := b.count(`[data-testid="` + section + `"] tbody tr`); n == 0 {
			t.Errorf("section %s shows no row", section)
		}
	}
	b.emulateSize(390, 844, "light")
	b.open("/admin/configuration")
	b.screenshot("configuration-phone")
	if w := evalIn[int](b, `document.documentElement.scrollWidth`); w > 392 {
		t.Errorf("the configuration page is %d px wide on a 390 px phone", w)
	}
}
