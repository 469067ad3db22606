package handlers

import (
	"fmt"
	"strconv"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
	"runsdesk/views"
)

// render renders component into a buffer first, so a failing template yields a clean error
// page instead of half a page, then writes status and the body as text/html; charset=UTF-8,
// with its Content-Length (one write, not chunks). Times are written in the time zone the
// signed-in person chose (UTC when none, or when the stored name no longer loads).
func (h *Handlers) render(c echo.Context, status int, component templ.Component) error {
	buf := templ.GetBuffer()
	defer templ.ReleaseBuffer(buf)
	ctx := c.Request().Context()
	if name := h.actor(c).TimeZone; name != "" {
		if loc, err := loadZone(name); err == nil {
			ctx = views.WithZone(ctx, loc)
		}
	}
	if err := component.Render(ctx, buf); err != nil {
		return fmt.Errorf("render: %w", err)
	}
	c.Response().Header().Set(echo.HeaderContentLength, strconv.Itoa(buf.Len()))
	return c.HTMLBlob(status, buf.Bytes())
}

// page returns the props every page passes to views.Layout: title, active navigation entry,
// asset paths, request id, the flash messages queued in the flash cookie (cleared by this
// call; see flash.go), and for a signed-in person their name and role, the session's CSRF token
// and the live desk's stream from the desk as this page shows it (views.EventsURL).
func (h *Handlers) page(c echo.Context, title string, nav views.Nav) views.Page {
	p := views.Page{Title: title, Nav: nav, Assets: h.assetPaths(), RequestID: requestID(c)}
	if !hasSession(c) {
		return p
	}
	p.Flashes = h.popFlashes(c)
	if a := h.actor(c); a.UserUID > 0 {
		p.User = &views.User{Name: a.Name, Role: string(a.Role), CanStart: runtime.MayAct(a, runtime.ActionStart, runtime.Run{}),
			SeesQueue: seesQueue(a), TYPO3Runs: h.typo3 != nil}
		p.CSRF = h.csrfToken(c)
		p.Restricted = h.mustEnrol(c)
		p.EventsURL = views.EventsURL(h.waiters.Cursor())
	}
	return p
}

func (h *Handlers) assetPaths() views.Assets {
	return views.Assets{CSS: h.assets.CSS, JS: h.assets.JS, Worker: h.assets.Worker, Favicon: h.assets.Favicon}
}
