package handlers

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

	"runsdesk/runtime"
	"runsdesk/runtime/apply"
	"runsdesk/runtime/demo"
)

// rectOf is where an element is in the viewport, the viewport's height, and whether what
// the screen shows at the element's middle is the element (not something over it).
type rectOf struct {
	Top, Bottom, Viewport float64
	Found, OnTop          bool
}

// visible reports whether the element is wholly on the screen, not covered.
func (r rectOf) visible() bool { return r.Found && r.OnTop && r.Top >= 0 && r.Bottom <= r.Viewport }

// rect measures the first element matching css.
func (b *tab) rect(css string) rectOf {
	b.t.Helper()
	return evalIn[rectOf](b, fmt.Sprintf(`(e => e ? (r => ({Top: r.top, Bottom: r.bottom, Viewport: innerHeight, Found: true,
		OnTop: e.contains(document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2))}))(e.getBoundingClientRect())
		: {Found: false})(document.querySelector(%s))`, jsString(css)))
}

// TestBrowserInputFormIsOnTheFirstScreen: the run page of a run of the demo desk file waiting
// for the refund details shows the form's first field and its submit button without scrolling at 1280×900,
// and the first field on the first screen of a 390×844 phone.
func TestBrowserInputFormIsOnTheFirstScreen(t *testing.T) {
	t.Parallel()
	tools := demo.Tools()
	app := newTestApp(t, appOptions{tools: tools})
	applier := apply.New(apply.Config{Catalog: app.store, Builtin: tools, Getenv: func(string) string { return "" }})
	plan, err := applier.Plan(t.Context(), demo.Config())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := applier.Apply(t.Context(), plan); err != nil {
		t.Fatal(err)
	}
	uuid := app.pause(runtime.RoleAdmin, "refunds")
	b := newTab(t, app)
	b.signIn(runtime.RoleAdmin)
	const first, submit = `[data-testid="input-form"] input:not([type="hidden"]), [data-testid="input-form"] select, [data-testid="input-form"] textarea`, `[data-testid="input-submit"]`
	for _, screen := range []struct {
		name          string
		width, height int64
		submitToo     bool
	}{
		{"1280×900", 1280, 900, true},
		{"390×844", 390, 844, false},
	} {
		b.do("size "+screen.name, chromedp.EmulateViewport(screen.width, screen.height))
		b.open("/runs/" + uuid)
		f := b.rect(first)
		t.Logf("%s: first field at %.0f–%.0f px", screen.name, f.Top, f.Bottom)
		if !f.visible() {
			b.screenshot("input-form-" + screen.name)
			t.Errorf("%s: the first field is at %.0f–%.0f px of a %.0f px screen (uncovered: %v)", screen.name, f.Top, f.Bottom, f.Viewport, f.OnTop)
		}
		if s := b.rect(submit); screen.submitToo && !s.visible() {
			b.screenshot("input-submit-" + screen.name)
			t.Errorf("%s: the submit button is at %.0f–%.0f px of a %.0f px screen (uncovered: %v)", screen.name, s.Top, s.Bottom, s.Viewport, s.OnTop)
		}
	}
}
