package handlers

import (
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"runsdesk/views"
)

// msgTimeZoneSaved is the flash after a person chose their time zone.
const msgTimeZoneSaved = "Your time zone has been saved; pages show times in it."

// suggestedZones are the time zones the account page's field suggests; any IANA name is
// accepted.
var suggestedZones = []string{"UTC", "Europe/London", "Europe/Berlin", "Europe/Paris", "Europe/Madrid",
	"America/New_York", "America/Chicago", "America/Denver", "America/Los_Angeles", "America/Sao_Paulo",
	"Asia/Kolkata", "Asia/Singapore", "Asia/Tokyo", "Australia/Sydney"}

// account is GET /account: the signed-in person's account page with their time zone.
func (h *Handlers) account(c echo.Context) error {
	return h.renderAccount(c, http.StatusOK, views.AccountForm{TimeZone: h.actor(c).TimeZone})
}

// accountTimeZone stores the time zone the person chose (form field time_zone): an IANA name
// (time.LoadLocation), or empty for UTC. A name that is none is 422 with the form showing
// what was typed and why; on success the account page follows (303) with a flash.
func (h *Handlers) accountTimeZone(c echo.Context) error {
	name := strings.TrimSpace(c.FormValue("time_zone"))
	if _, err := loadZone(name); err != nil {
		return h.renderAccount(c, http.StatusUnprocessableEntity, views.AccountForm{TimeZone: name, Error: err.Error()})
	}
	if name == "UTC" {
		name = ""
	}
	if err := h.accounts.SetTimeZone(c.Request().Context(), h.actor(c).UserUID, name); err != nil {
		if reason, ok := policyReason(err); ok {
			return h.renderAccount(c, http.StatusUnprocessableEntity, views.AccountForm{TimeZone: name, Error: reason})
		}
		return err
	}
	h.flash(c, flashTimeZoneSaved)
	return c.Redirect(http.StatusSeeOther, views.AccountPath)
}

func (h *Handlers) renderAccount(c echo.Context, status int, form views.AccountForm) error {
	form.Security = h.mfa.Factors != nil
	return h.render(c, status, views.AccountPage(h.page(c, "Your account", views.NavNone), form, suggestedZones))
}

// zoneError is why a time zone name was refused, in words for the person who typed it.
type zoneError struct{ name string }

func (e zoneError) Error() string {
	return "“" + e.name + "” is not a time zone name. Use a name such as Europe/Berlin or America/New_York, or leave the field empty for UTC."
}

// loadZone is the time zone named name: UTC for "", else the IANA zone of that name; the
// machine's own zone ("Local") and anything that is not a zone name are a zoneError.
func loadZone(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	if name == "Local" {
		return nil, zoneError{name}
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, zoneError{name}
	}
	return loc, nil
}
