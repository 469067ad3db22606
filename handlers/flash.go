package handlers

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"runsdesk/views"
)

// flashCode names one message of flashCatalogue. The flash cookie carries codes, never text.
type flashCode string

// The flash catalogue: every message h.flash can queue, by the code its cookie carries. Codes
// are stable (a cookie set by one build may be read by the next, or by another process behind
// the same load balancer): add codes, never rename or reuse one. A code is a few lower-case
// letters, digits and dashes; one (kind, text) has one code.
const (
	flashApproved        flashCode = "approved"
	flashDenied          flashCode = "denied"
	flashInputSubmitted  flashCode = "input-ok"
	flashRunStarted      flashCode = "started"
	flashCancelled       flashCode = "cancelled"
	flashSignedOut       flashCode = "signed-out"
	flashPasswordChanged flashCode = "password"
	flashNotCancellable  flashCode = "finished"
	flashFourEyes        flashCode = "four-eyes"
	flashStaleTurn       flashCode = "stale-turn"
	flashNotAwaiting     flashCode = "not-awaiting"
	flashConfigGone      flashCode = "config-gone"
	flashUnreadable      flashCode = "unreadable"
	flashNotAuditable    flashCode = "not-audited"
	flashMayNotDecide    flashCode = "may-not-decide"
	flashMayNotApprove   flashCode = "may-not-approve"
	flashAlreadyDecided  flashCode = "decided"
	flashInputStale      flashCode = "input-stale"
	flashInputHandled    flashCode = "input-handled"
	flashInputHandledYou flashCode = "input-yours"
	flashInputNotWaiting flashCode = "input-late"
	flashInputNotAllowed flashCode = "input-denied"
)

// flashCatalogue gives each code its kind and fixed text: the only texts a flash can show.
var flashCatalogue = map[flashCode]views.Flash{
	flashApproved:        {Kind: views.FlashSuccess, Text: msgApproved},
	flashDenied:          {Kind: views.FlashSuccess, Text: msgDenied},
	flashInputSubmitted:  {Kind: views.FlashSuccess, Text: msgInputSubmitted},
	flashRunStarted:      {Kind: views.FlashSuccess, Text: msgRunStarted},
	flashCancelled:       {Kind: views.FlashSuccess, Text: msgCancelled},
	flashSignedOut:       {Kind: views.FlashSuccess, Text: msgSignedOut},
	flashPasswordChanged: {Kind: views.FlashSuccess, Text: msgPasswordChanged},
	flashNotCancellable:  {Kind: views.FlashInfo, Text: msgNotCancellable},
	flashFourEyes:        {Kind: views.FlashError, Text: msgFourEyes},
	flashStaleTurn:       {Kind: views.FlashError, Text: msgStaleTurn},
	flashNotAwaiting:     {Kind: views.FlashError, Text: msgNotAwaiting},
	flashConfigGone:      {Kind: views.FlashError, Text: msgConfigGone},
	flashUnreadable:      {Kind: views.FlashError, Text: views.InputUnreadableText},
	flashNotAuditable:    {Kind: views.FlashError, Text: msgNotAuditable},
	flashMayNotDecide:    {Kind: views.FlashError, Text: msgMayNotDecide},
	flashMayNotApprove:   {Kind: views.FlashError, Text: msgMayNotApprove},
	flashAlreadyDecided:  {Kind: views.FlashError, Text: msgAlreadyDecided},
	flashInputStale:      {Kind: views.FlashError, Text: msgInputStale},
	flashInputHandled:    {Kind: views.FlashError, Text: msgInputHandled},
	flashInputHandledYou: {Kind: views.FlashError, Text: msgInputHandledYou},
	flashInputNotWaiting: {Kind: views.FlashError, Text: msgInputNotWaiting},
	flashInputNotAllowed: {Kind: views.FlashError, Text: msgInputNotAllowed},
}

// Flash cookie: __Host- (Secure, Path=/, no Domain) whenever cookies are Secure, like the
// session cookie. It lives long enough to survive a redirect, holds at most flashMax codes
// joined by flashSep (more are dropped), and is HttpOnly and SameSite=Lax.
const (
	flashCookieSecure   = "__Host-runsdesk_flash"
	flashCookieInsecure = "runsdesk_flash"
	flashMaxAge         = 60 // seconds
	flashMax            = 4
	flashSep            = "."
)

// flash queues the catalogue message code for the next page this browser is shown (after a
// redirect): it appends code to the flash cookie of the response, after the codes the request
// brought or this response already set. The session is not touched, so a POST that flashes
// costs no session write.
func (h *Handlers) flash(c echo.Context, code flashCode) {
	if _, ok := flashCatalogue[code]; !ok {
		h.log.ErrorContext(c.Request().Context(), "flash code not in the catalogue", "request_id", requestID(c), "code", string(code))
		return
	}
	codes, _ := h.queuedFlashes(c)
	if len(codes) >= flashMax {
		return
	}
	h.setFlashCookie(c, joinFlashCodes(append(codes, code)), flashMaxAge)
}

// popFlashes returns the queued messages and clears the flash cookie (only when the request
// brought one). Only codes of flashCatalogue are shown, as the catalogue's fixed text; unknown
// or garbled codes are ignored. That is why the cookie needs no signature: a forged cookie can
// only show one of our own fixed messages. It does not touch the session.
func (h *Handlers) popFlashes(c echo.Context) []views.Flash {
	codes, inRequest := h.queuedFlashes(c)
	if inRequest {
		h.setFlashCookie(c, "", -1)
	} else {
		h.dropFlashCookie(c)
	}
	out := make([]views.Flash, 0, len(codes))
	for _, code := range codes {
		out = append(out, flashCatalogue[code])
	}
	return out
}

func (h *Handlers) flashCookieName() string {
	if h.secure {
		return flashCookieSecure
	}
	return flashCookieInsecure
}

// queuedFlashes returns the known codes queued for the next page: those of the flash cookie
// this response already sets, else those of the request's; inRequest says whether the request
// brought a flash cookie.
func (h *Handlers) queuedFlashes(c echo.Context) (codes []flashCode, inRequest bool) {
	name := h.flashCookieName()
	ck, err := c.Request().Cookie(name)
	inRequest = err == nil
	value := ""
	if inRequest {
		value = ck.Value
	}
	for _, line := range c.Response().Header().Values(echo.HeaderSetCookie) {
		if set, err := http.ParseSetCookie(line); err == nil && set.Name == name {
			value = set.Value
		}
	}
	return parseFlashCodes(value), inRequest
}

// setFlashCookie sets the flash cookie to value, replacing one this response already sets; a
// negative maxAge deletes it.
func (h *Handlers) setFlashCookie(c echo.Context, value string, maxAge int) {
	h.dropFlashCookie(c)
	http.SetCookie(c.Response(), &http.Cookie{Name: h.flashCookieName(), Value: value, Path: "/",
		MaxAge: maxAge, Secure: h.secure, HttpOnly: true, SameSite: http.SameSiteLaxMode})
}

// dropFlashCookie removes the flash cookie this response would set.
func (h *Handlers) dropFlashCookie(c echo.Context) {
	hd := c.Response().Header()
	prefix := h.flashCookieName() + "="
	lines := hd.Values(echo.HeaderSetCookie)
	kept := make([]string, 0, len(lines))
	for _, line := range lines {
		if !strings.HasPrefix(line, prefix) {
			kept = append(kept, line)
		}
	}
	switch {
	case len(kept) == len(lines):
	case len(kept) == 0:
		hd.Del(echo.HeaderSetCookie)
	default:
		hd[echo.HeaderSetCookie] = kept
	}
}

// parseFlashCodes returns the catalogue codes among the first flashMax parts of value.
func parseFlashCodes(value string) []flashCode {
	if value == "" {
		return nil
	}
	parts := strings.SplitN(value, flashSep, flashMax+1)
	var out []flashCode
	for _, part := range parts[:min(len(parts), flashMax)] {
		if _, ok := flashCatalogue[flashCode(part)]; ok {
			out = append(out, flashCode(part))
		}
	}
	return out
}

func joinFlashCodes(codes []flashCode) string {
	parts := make([]string, len(codes))
	for i, code := range codes {
		parts[i] = string(code)
	}
	return strings.Join(parts, flashSep)
}
