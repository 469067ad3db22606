package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
)

type requestCreate struct {
	Configuration string          `json:"configuration"`
	Kind          string          `json:"kind"`
	Tool          string          `json:"tool"`
	Arguments     json.RawMessage `json:"arguments"`
	Title         string          `json:"title"`
	Message       string          `json:"message"`
	ExternalID    string          `json:"external_id"`
	OnBehalfOf    string          `json:"on_behalf_of"`
	Schema        json.RawMessage `json:"schema"`
	CallbackURL   string          `json:"callback_url"`
}

// createRequest is POST /requests: it creates a request of the service account in an
// external configuration, waiting for a person at once, and answers 201 with the run and its
// Location. The same Idempotency-Key, or the same external_id within the configuration, with
// the same body answers the request already created; with a different body it is 409. An ad
// hoc question's schema that is unusable or out of bounds is 422 invalid_request; a
// callback_url the configuration does not take is 422 (callbacks_not_enabled,
// callback_not_allowed).
func (a *API) createRequest(c echo.Context) error {
	var req requestCreate
	if err := a.decodeBody(c, &req, false); err != nil {
		return err
	}
	if req.Configuration == "" || req.Kind == "" || req.Tool == "" {
		return invalid(`fields "configuration", "kind" and "tool" are required`)
	}
	key, err := idempotencyKey(c, "")
	if err != nil {
		return err
	}
	run, err := a.rt.CreateRequest(c.Request().Context(), actorOf(c), runtime.NewRequest{
		Configuration: req.Configuration, Kind: req.Kind, Tool: req.Tool, Arguments: req.Arguments,
		Title: req.Title, Message: req.Message, ExternalID: req.ExternalID, IdempotencyKey: key, OnBehalfOf: req.OnBehalfOf,
		Schema: req.Schema, CallbackURL: req.CallbackURL,
	})
	if err != nil {
		a.audit(c, AuditRequestCreate, "", outcomeOf(err), "")
		return requestRefusal(err)
	}
	a.audit(c, AuditRequestCreate, run.UUID, "success", "")
	a.log.Info("api request created", "request_id", requestID(c), "service_account", actorOf(c).Name, "run", run.UUID)
	c.Response().Header().Set(echo.HeaderLocation, strings.Replace(a.requestPath, ":id", run.UUID, 1))
	return c.JSON(http.StatusCreated, toRunJSON(runtime.RunView{Run: run}))
}

// requestRefusal is a refused creation as the API answers it: as the refusal table says, but
// an ad hoc question's unusable schema is 422 with the runtime's words, which name the rule
// or limit it broke and no value.
func requestRefusal(err error) error {
	p := fromRuntime(err)
	var re *runtime.Error
	if errors.Is(err, runtime.ErrUnusableSchema) && errors.As(err, &re) {
		p.Status, p.Message = http.StatusUnprocessableEntity, re.Message
	}
	return p
}
