package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"runsdesk/views"
)

// home is the start page after signing in.
func (h *Handlers) home(c echo.Context) error {
	return h.render(c, http.StatusOK, views.HomePage(h.page(c, "Start", views.NavNone)))
}
