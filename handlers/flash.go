package handlers

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"runsdesk/handlers/refusal"
	"runsdesk/views"
)

// flashCode names one message of flashCatalogue. The flash cookie carries codes, never text.
type flashCode string

// The flashes of accepted actions. Codes are stable (a cookie set by one build may be read by
// the next, or by another process behind the same load balancer): add codes, never rename or
// reuse one. A code is a few lower-case letters, digits and dashes; one (kind, text) has one
// code. The flashes of refused forms are the refusal table's (package refusal).
const (
	flashApproved         flashCode = "approved"
	flashDenied           flashCode = "denied"
	flashInputSubmitted   flashCode = "input-ok"
	flashRequestApproved  flashCode = "request-approved"
	flashRequestDenied    flashCode = "request-denied"
	flashRequestAnswered  flashCode = "request-answered"
	flashRunStarted       flashCode = "started"
	flashCancelled        flashCode = "cancelled"
	flashSignedOut        flashCode = "signed-out"
	flashPasswordChanged  flashCode = "password"
	flashDraftSaved       flashCode = "draft-saved"
	flashElicitDeclined   flashCode = "elicit-declined"
	flashElicitCancelled  flashCode = "elicit-cancelled"
	flashTimeZoneSaved    flashCode = "time-zone"
	flashAssigned         flashCode = "assigned"
	flashVoted            flashCode = "voted"
	flashChangesRequested flashCode = "changes-asked"
	flashCommented        flashCode = "commented"
	flashSessionEnded     flashCode = "session-ended"
	flashOthersEnded      flashCode = "others-ended"
	flashPersonDisabled   flashCode = "person-disabled"
	flashPersonEnabled    flashCode = "person-enabled"
	flashPersonRole       flashCode = "person-role"
	flashPersonSessions   flashCode = "person-sessions"
	flashPersonFactor     flashCode = "person-mfa"
	flashTokenRevoked     flashCode = "token-revoked"
	flashUnchanged        flashCode = "unchanged"
)

// flashCatalogue gives each code its kind and fixed text: the only texts a flash can show,
// those of accepted actions and the refusal table's.
var flashCatalogue = newFlashCatalogue()

func newFlashCatalogue() map[flashCode]views.Flash {
	m := map[flashCode]views.Flash{
		flashApproved:         {Kind: views.FlashSuccess, Text: msgApproved},
		flashDenied:           {Kind: views.FlashSuccess, Text: msgDenied},
		flashInputSubmitted:   {Kind: views.FlashSuccess, Text: msgInputSubmitted},
		flashRequestApproved:  {Kind: views.FlashSuccess, Text: msgRequestApproved},
		flashRequestDenied:    {Kind: views.FlashSuccess, Text: msgRequestDenied},
		flashRequestAnswered:  {Kind: views.FlashSuccess, Text: msgRequestAnswered},
		flashRunStarted:       {Kind: views.FlashSuccess, Text: msgRunStarted},
		flashCancelled:        {Kind: views.FlashSuccess, Text: msgCancelled},
		flashSignedOut:        {Kind: views.FlashSuccess, Text: msgSignedOut},
		flashPasswordChanged:  {Kind: views.FlashSuccess, Text: msgPasswordChanged},
		flashDraftSaved:       {Kind: views.FlashSuccess, Text: msgDraftSaved},
		flashElicitDeclined:   {Kind: views.FlashSuccess, Text: msgElicitDeclined},
		flashElicitCancelled:  {Kind: views.FlashSuccess, Text: msgElicitCancelled},
		flashTimeZoneSaved:    {Kind: views.FlashSuccess, Text: msgTimeZoneSaved},
		flashAssigned:         {Kind: views.FlashSuccess, Text: msgAssigned},
		flashVoted:            {Kind: views.FlashSuccess, Text: msgVoted},
		flashChangesRequested: {Kind: views.FlashSuccess, Text: msgChangesRequested},
		flashCommented:        {Kind: views.FlashSuccess, Text: msgCommented},
		flashSessionEnded:     {Kind: views.FlashSuccess, Text: msgSessionEnded},
		flashOthersEnded:      {Kind: views.FlashSuccess, Text: msgOthersEnded},
		flashPersonDisabled:   {Kind: views.FlashSuccess, Text: msgPersonDisabled},
		flashPersonEnabled:    {Kind: views.FlashSuccess, Text: msgPersonEnabled},
		flashPersonRole:       {Kind: views.FlashSuccess, Text: msgPersonRole},
		flashPersonSessions:   {Kind: views.FlashSuccess, Text: msgPersonSessions},
		flashPersonFactor:     {Kind: views.FlashSuccess, Text: msgPersonFactor},
		flashTokenRevoked:     {Kind: views.FlashSuccess, Text: msgTokenRevoked},
		flashUnchanged:        {Kind: views.FlashInfo, Text: msgUnchanged},
	}
	for _, fl := range refusal.Flashes() {
		m[flashCode(fl.Code)] = fl.Flash
	}
	return m
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

// refused answers err, a refusal of form on run uuid, from the refusal table: the form's
// flash and a 303 to the run page, else the error page (with the form's sentence when the
// table has one).
func (h *Handlers) refused(c echo.Context, uuid string, form refusal.Form, err error) error {
	re, row := refusal.OfError(err)
	if re == nil {
		return err
	}
	if fl, ok := row.FlashOn(form, re); ok {
		h.flash(c, flashCode(fl.Code))
		return c.Redirect(http.StatusSeeOther, views.RunPath(uuid))
	}
	if text, ok := row.Page[form]; ok {
		return publicError(row.Status, string(re.Code), text)
	}
	return err
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
