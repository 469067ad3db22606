package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"runsdesk/views"
)

// logout ends the session server-side (the cookie stops working everywhere) and redirects to
// the sign-in page with a confirmation.
func (h *Handlers) logout(c echo.Context) error {
	h.audit(c, actionLogout, outcomeSuccess, "")
	if err := h.sessions.Destroy(c.Request().Context()); err != nil {
		return err
	}
	h.flash(c, views.FlashSuccess, "You have signed out.")
	return c.Redirect(http.StatusSeeOther, "/login")
}
