package handlers

import (
	"net/http"
	"testing"

	"runsdesk/runtime"
	"runsdesk/views"
)

// TestEditPagesPassTheNuHTMLChecker: the pages of "Edit and approve" (the card with its
// link and the model's words, the form, the rejected form, the review, the run page with
// edited calls) are valid HTML.
func TestEditPagesPassTheNuHTMLChecker(t *testing.T) {
	t.Parallel()
	vnuCommand(t)
	app := newEditApp(t)
	rita := app.login(runtime.RoleReviewer)
	m := &markupPages{t: t, pages: map[string]string{}}
	uuid := app.pause(runtime.RoleAdmin, "edit")
	href := views.EditCallPath(uuid, app.callID(uuid))
	m.add("edit-card", rita.get(views.RunPath(uuid)), http.StatusOK)
	form := rita.get(href)
	m.add("edit-form", form, http.StatusOK)
	values := formValues(form.doc(t).Find(`[data-testid="input-form"]`))
	values.Set("input/amount", "9999")
	m.add("edit-form-rejected", rita.postForm(href, values), http.StatusUnprocessableEntity)
	values.Set("input/amount", "40")
	review := rita.postForm(href, values)
	m.add("edit-review", review, http.StatusOK)
	confirm := formValues(review.doc(t).Find(`[data-testid="edit-approve-form"]`))
	confirm.Set(views.FieldDecision, views.DecisionApprove)
	wantSeeOther(t, "approve", rita.postForm(views.RunPath(uuid)+"/approval", confirm), views.RunPath(uuid))
	app.row(uuid)
	m.add("run-edited", rita.get(views.RunPath(uuid)), http.StatusOK)
	checkMarkup(t, m.pages)
}
