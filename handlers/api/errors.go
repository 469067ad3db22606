package api

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"runsdesk/handlers/refusal"
	"runsdesk/runtime"
)

// problem is an API error: the HTTP status and the body {"error":{"code","message"}}.
// Handlers return it; the respond middleware writes it.
type problem struct {
	Status  int
	Code    string
	Message string
	Fields  []fieldJSON
	Err     error
}

func (e *problem) Error() string { return e.Code + ": " + e.Message }

func (e *problem) Unwrap() error { return e.Err }

func apiError(status int, code, message string) *problem {
	return &problem{Status: status, Code: code, Message: message}
}

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string      `json:"code"`
	Message string      `json:"message"`
	Fields  []fieldJSON `json:"fields,omitempty"`
}

// fieldJSON is one per-field error of a refused edit: the call, the JSON pointer into its
// arguments ("" for the patch or the call as a whole) and the fixed message (never a value).
type fieldJSON struct {
	CallID  string `json:"call_id"`
	Pointer string `json:"pointer"`
	Message string `json:"message"`
}

// fromRuntime maps an error of a runtime operation to an API error: its code's status and
// message in the refusal table (package refusal), and for a refused edit its per-field errors.
func fromRuntime(err error) *problem {
	if runtime.Unavailable(err) {
		return unavailable(err)
	}
	re, row := refusal.OfError(err)
	if re == nil {
		return &problem{Status: http.StatusInternalServerError, Code: "internal_error", Message: "internal error", Err: err}
	}
	p := &problem{Status: row.Status, Code: string(re.Code), Message: row.Message, Err: err}
	if re.Code == runtime.CodeAlreadyAssigned && re.Holder != "" {
		p.Message = fmt.Sprintf("the run is assigned to %s; an admin may take it over with force", re.Holder)
	}
	if re.Code == runtime.CodeInvalidEdit {
		for _, f := range re.Fields {
			p.Fields = append(p.Fields, fieldJSON{CallID: re.CallID, Pointer: f.Pointer, Message: f.Message})
		}
	}
	return p
}

// respond is the outermost API middleware: it gives the request an id (X-Request-Id, kept
// when an earlier middleware set one on the response), marks the response no-store, and
// writes any error the chain returns in the API's shape, logging it by code (5xx with the
// cause; never a submitted value or token).
func (a *API) respond(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		if h.Get(echo.HeaderXRequestID) == "" {
			h.Set(echo.HeaderXRequestID, newRequestID())
		}
		h.Set(echo.HeaderCacheControl, "no-store")
		err := next(c)
		if err == nil || c.Response().Committed {
			return err
		}
		e := toError(err)
		a.logError(c, e)
		a.auditRefusal(c, e)
		return writeProblem(c, e)
	}
}

// WriteError answers err in the API's shape, {"error":{"code","message"}}: the one JSON error
// writer of /api/ paths, for the API's own errors and for those of the middleware before it
// (a body over the limit is 413 body_too_large wherever it is caught).
func WriteError(c echo.Context, err error) error { return writeProblem(c, toError(err)) }

func writeProblem(c echo.Context, e *problem) error {
	return c.JSON(e.Status, errorBody{Error: errorDetail{Code: e.Code, Message: e.Message, Fields: e.Fields}})
}

// publicError is an error of the middleware before the API that says how it is answered.
type publicError interface {
	PublicError() (status int, code, message string)
}

// unavailable is the 503 of a store that did not answer in time (runtime.Unavailable).
func unavailable(err error) *problem {
	return &problem{Status: http.StatusServiceUnavailable, Code: "unavailable", Message: "the store is temporarily unavailable; try again", Err: err}
}

func toError(err error) *problem {
	var e *problem
	if errors.As(err, &e) {
		return e
	}
	if runtime.Unavailable(err) {
		return unavailable(err)
	}
	var pe publicError
	if errors.As(err, &pe) {
		status, code, message := pe.PublicError()
		return &problem{Status: status, Code: code, Message: message, Err: err}
	}
	if re, _ := refusal.OfError(err); re != nil {
		return fromRuntime(err)
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		switch he.Code {
		case http.StatusNotFound:
			return &problem{Status: he.Code, Code: "not_found", Message: "no such resource", Err: err}
		case http.StatusMethodNotAllowed:
			return &problem{Status: he.Code, Code: "method_not_allowed", Message: "this method is not allowed here", Err: err}
		case http.StatusRequestEntityTooLarge:
			p := tooLarge()
			p.Err = err
			return p
		}
		if he.Code >= 400 && he.Code < 500 {
			return &problem{Status: he.Code, Code: "invalid_request", Message: http.StatusText(he.Code), Err: err}
		}
	}
	return &problem{Status: http.StatusInternalServerError, Code: "internal_error", Message: "internal error", Err: err}
}

func (a *API) logError(c echo.Context, e *problem) {
	attrs := []any{
		"request_id", c.Response().Header().Get(echo.HeaderXRequestID),
		"route", c.Path(), "method", c.Request().Method, "status", e.Status, "code", e.Code,
	}
	if actor, ok := c.Get(actorKey).(runtime.Actor); ok {
		attrs = append(attrs, "service_account", actor.Name)
	}
	if e.Status >= 500 {
		a.log.Error("api request failed", append(attrs, "err", e.Err, "cause", errors.Unwrap(e.Err))...)
		return
	}
	a.log.Info("api request refused", attrs...)
}

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
