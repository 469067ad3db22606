package handlers

import (
	"net/http"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"runsdesk/handlers/refusal"
	"runsdesk/runtime"
	"runsdesk/views"
)

const refusedRun = "0b6f0a52-6a4e-4d8c-9a55-1c2c3e4f5a6b"

// withRefusalRoutes adds routes answering a runtime error of the code in the path: as any
// handler's returned error (/test/refusal/:code), and as form :form's refusal through
// h.refused (/test/refused/:form/:code).
func withRefusalRoutes(h *Handlers, e *echo.Echo) {
	refusalOf := func(c echo.Context) *runtime.Error {
		return &runtime.Error{Code: runtime.Code(c.Param("code")), RunUUID: refusedRun, Message: "names configuration secret-name"}
	}
	e.GET("/test/refusal/:code", func(c echo.Context) error { return refusalOf(c) })
	e.GET("/test/refused/:form/:code", func(c echo.Context) error {
		return h.refused(c, refusedRun, refusal.Form(c.Param("form")), refusalOf(c))
	})
}

// TestWebAnswersTheRefusalTable: through the real router, every runtime code is answered
// with its row's status on the error page (never the runtime's message), and each form's
// refusal with the row's flash (303 to the run page) or else its status, with the form's
// sentence when the row has one.
func TestWebAnswersTheRefusalTable(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, appOptions{extra: withRefusalRoutes})
	c := app.newClient()
	for _, code := range refusal.Codes() {
		row, _ := refusal.Of(code)
		res := c.get("/test/refusal/" + string(code))
		if res.status != row.Status || strings.Contains(res.body, "secret-name") {
			t.Errorf("%s: error page %d (want %d), body %.200q", code, res.status, row.Status, res.body)
		}
		for _, form := range []refusal.Form{refusal.Approval, refusal.Input, refusal.Cancel} {
			res := app.newClient().get("/test/refused/" + string(form) + "/" + string(code))
			fl, flashes := row.FlashOn(form, &runtime.Error{Code: code})
			switch {
			case flashes:
				cookie := flashCookieInsecure + "=" + fl.Code + ";"
				if res.status != http.StatusSeeOther || res.header.Get("Location") != views.RunPath(refusedRun) ||
					!strings.Contains(strings.Join(res.header.Values("Set-Cookie"), "\n"), cookie) {
					t.Errorf("%s on %s: %d to %q with %q, want 303 with flash %s", code, form, res.status,
						res.header.Get("Location"), res.header.Values("Set-Cookie"), fl.Code)
				}
			case res.status != row.Status:
				t.Errorf("%s on %s: status %d, want %d", code, form, res.status, row.Status)
			case row.Page[form] != "" && !strings.Contains(res.body, row.Page[form]):
				t.Errorf("%s on %s: the page lacks %q", code, form, row.Page[form])
			}
		}
	}
}
