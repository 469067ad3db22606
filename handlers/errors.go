package handlers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"runsdesk/handlers/api"
	"runsdesk/handlers/refusal"
	"runsdesk/runtime"
	"runsdesk/views"
)

// userError is an error whose Text may be shown to the person (HTML) or the client (API). Use
// it through publicError.
type userError struct {
	Status int
	Code   string
	Text   string
}

func (e *userError) Error() string { return e.Code + ": " + e.Text }

// PublicError is the status, code and text the error is answered with (api.WriteError).
func (e *userError) PublicError() (int, string, string) { return e.Status, e.Code, e.Text }

// storeFailure is an error of a store a request depends on (accounts, sessions): the request
// fails with 503, the cause goes to the log only.
type storeFailure struct{ err error }

func (e *storeFailure) Error() string { return "store failure: " + e.err.Error() }

func (e *storeFailure) Unwrap() error { return e.err }

// PublicError is the 503 the failure is answered with (api.WriteError).
func (e *storeFailure) PublicError() (int, string, string) {
	return http.StatusServiceUnavailable, codeFor(http.StatusServiceUnavailable), statusText(http.StatusServiceUnavailable)
}

// unavailable marks err as a store failure (503).
func unavailable(err error) error { return &storeFailure{err: err} }

// busy is the 503 of a page request whose deadline passed while it waited for an admission
// slot (Config.Gate); the log names the wait, not a store.
func busy(err error) error {
	return &userError{Status: http.StatusServiceUnavailable, Code: "busy",
		Text: fmt.Sprintf("no admission slot before the request's deadline: %v", err)}
}

// publicError returns an error the error handler answers with status, showing text and, to
// API clients, code. For status >= 500 the text is replaced by the generic one.
func publicError(status int, code, text string) error {
	return &userError{Status: status, Code: code, Text: text}
}

// handleError is echo's HTTPErrorHandler, the one place errors become responses. HTML requests
// get the error page (with the request id), /api/ requests get {"error":{"code","message"}}.
// 5xx responses never show error text; the error goes to the log.
func (h *Handlers) handleError(err error, c echo.Context) {
	status, _, text := classify(err)
	level := slog.LevelInfo
	if status >= http.StatusInternalServerError {
		level = slog.LevelError
	}
	h.log.Log(c.Request().Context(), level, "request failed", "request_id", requestID(c),
		"status", status, "error", err.Error())
	if c.Response().Committed {
		return
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(status)
		return
	}
	if isAPI(c) {
		_ = api.WriteError(c, err)
		return
	}
	c.SetRequest(c.Request().WithContext(context.WithoutCancel(c.Request().Context())))
	p := h.page(c, titleFor(status), views.NavNone)
	ev := views.ErrorView{Status: status, Title: titleFor(status), Text: text, RequestID: requestID(c)}
	if rerr := h.render(c, status, views.ErrorPage(p, ev)); rerr != nil {
		h.log.ErrorContext(c.Request().Context(), "render error page", "request_id", requestID(c), "error", rerr)
		_ = c.String(status, text)
	}
}

// classify maps err to a status, an API code and the text a person may see. A *runtime.Error
// gets its code's status in the refusal table and the text of that status (its own message may
// repeat what was submitted, a configuration name); a form's own sentence is h.refused's.
func classify(err error) (int, string, string) {
	var ue *userError
	var he *echo.HTTPError
	var sf *storeFailure
	re, row := refusal.OfError(err)
	status, code, text := http.StatusInternalServerError, "", ""
	switch {
	case errors.As(err, &sf), runtime.Unavailable(err):
		status = http.StatusServiceUnavailable
	case errors.As(err, &ue):
		status, code, text = ue.Status, ue.Code, ue.Text
	case re != nil:
		status, code = row.Status, string(re.Code)
	case errors.As(err, &he):
		status = he.Code
	}
	if code == "" {
		code = codeFor(status)
	}
	if text == "" || status >= http.StatusInternalServerError {
		text = statusText(status)
	}
	return status, code, text
}

func isAPI(c echo.Context) bool {
	p := c.Request().URL.Path
	return p == "/api" || strings.HasPrefix(p, "/api/")
}

// statusWords is what a page and an API client are told for a status when nothing more specific
// is said: the page's title, its sentence and the API's code.
type statusWords struct{ title, text, code string }

// wordsByStatus holds the statuses with words of their own; wordsFor falls back for the rest.
var wordsByStatus = map[int]statusWords{
	http.StatusBadRequest:            {"", "The request could not be understood.", "bad_request"},
	http.StatusUnauthorized:          {"", "Sign in, or send a valid API token, to continue.", "unauthorized"},
	http.StatusForbidden:             {"Not allowed", "You may not do this.", "forbidden"},
	http.StatusNotFound:              {"Page not found", "There is nothing at this address. Check it, or go to the start page.", "not_found"},
	http.StatusMethodNotAllowed:      {"", "This address does not accept this kind of request.", "method_not_allowed"},
	http.StatusRequestEntityTooLarge: {"", "The request is too large.", "body_too_large"},
	http.StatusUnsupportedMediaType:  {"", "The request's content type is not supported.", "unsupported_media_type"},
	http.StatusUnprocessableEntity:   {"", "", "invalid_request"},
	http.StatusTooManyRequests:       {"Too many attempts", "Too many requests. Wait a little and try again.", "too_many_requests"},
	http.StatusServiceUnavailable:    {"Temporarily unavailable", "The service is temporarily unavailable. Try again in a moment.", "unavailable"},
}

// wordsFor is the title, sentence and code of status: its own where wordsByStatus has them, else
// those of a server error (5xx) or of a refusal; a title defaults to http.StatusText.
func wordsFor(status int) statusWords {
	w := wordsByStatus[status]
	fallback := statusWords{http.StatusText(status), "The request was not accepted.", "error"}
	if status >= http.StatusInternalServerError {
		fallback = statusWords{"Something went wrong",
			"Something went wrong on our side. It has been logged; quote the request id if you report it.", "internal_error"}
	}
	return statusWords{cmp.Or(w.title, fallback.title), cmp.Or(w.text, fallback.text), cmp.Or(w.code, fallback.code)}
}

func titleFor(status int) string { return wordsFor(status).title }

// statusText is the sentence shown for status when there is nothing more specific to say.
func statusText(status int) string { return wordsFor(status).text }

func codeFor(status int) string { return wordsFor(status).code }
