package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// msgSignedOut is the flash the sign-in page shows after sign-out.
const msgSignedOut = "You have signed out."

// logout ends the session server-side (the cookie stops working everywhere, its row leaves
// the session index) and redirects to the sign-in page with a confirmation (the flash cookie
// outlives the session).
func (h *Handlers) logout(c echo.Context) error {
	h.audit(c, actionLogout, outcomeSuccess, "")
	if err := h.endSession(c.Request().Context()); err != nil {
		return err
	}
	h.flash(c, flashSignedOut)
	return c.Redirect(http.StatusSeeOther, "/login")
}
