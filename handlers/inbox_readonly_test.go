package handlers

import (
	"strings"
	"testing"

	"runsdesk/runtime"
)

// TestReadOnlyViewerSeesWaitingForInputNotACallToAction: support may look at a run waiting
// for input but not submit, so neither the inbox nor the run page asks them for input.
func TestReadOnlyViewerSeesWaitingForInputNotACallToAction(t *testing.T) {
	t.Parallel()
	app := newDeskApp(t)
	ask := app.pause(runtime.RoleAdmin, "ask")
	support := app.login(runtime.RoleSupport)
	for _, path := range []string{"/runs", "/runs/" + ask} {
		res := support.get(path)
		main := res.doc(t).Find("main")
		text := main.Text()
		for _, cta := range []string{"Needs your input", "Fill in the form"} {
			if strings.Contains(text, cta) {
				t.Errorf("support on %s is told %q", path, cta)
			}
		}
		if n := main.Find(`a.button--primary, button.button--primary:not([data-testid="filter-apply"])`).Length(); n != 0 {
			t.Errorf("support on %s sees %d primary calls to action", path, n)
		}
		if !strings.Contains(text, "Waiting for input") {
			t.Errorf("support on %s is not told the run is waiting for input", path)
		}
	}
	rita := app.login(runtime.RoleReviewer)
	if text := rita.get("/runs/" + ask).doc(t).Find("main").Text(); !strings.Contains(text, "Needs your input") {
		t.Error("a reviewer who may submit is not told the run needs their input")
	}
}
