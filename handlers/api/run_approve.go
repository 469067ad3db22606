package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"runsdesk/runtime"
)

// HeaderIdempotencyKey carries an approval's idempotency key (the body field works too).
const HeaderIdempotencyKey = "Idempotency-Key"

type approvalRequest struct {
	Approved       *bool                      `json:"approved"`
	TurnDigest     string                     `json:"turn_digest"`
	IdempotencyKey string                     `json:"idempotency_key"`
	Edits          map[string]json.RawMessage `json:"edits"`
	PatchDigest    string                     `json:"patch_digest"`
	PinDigest      string                     `json:"pin_digest"`
	Reason         string                     `json:"reason"`
	// RequestChanges, instead of Approved, sends these instructions back to the model.
	RequestChanges *string `json:"request_changes"`
}

// approvalJSON is the answer to an accepted (or replayed) decision. DecidedBy is the deciding
// person's uid, 0 for a service account, which DecidedByService names ("" for a person).
type approvalJSON struct {
	UUID             string `json:"uuid"`
	Approved         bool   `json:"approved"`
	Decided          int64  `json:"decided"`
	DecidedBy        int64  `json:"decided_by"`
	DecidedByService string `json:"decided_by_service"`
	Replayed         bool   `json:"replayed"`
	// Votes and Required are the distinct approvals the turn has counted and needs
	// (approvals_required); Resumed is false for a vote that leaves the run waiting for more.
	Votes    int  `json:"votes"`
	Required int  `json:"required"`
	Resumed  bool `json:"resumed"`
	// ChangesRequested marks a request for changes (approved is then false).
	ChangesRequested bool `json:"changes_requested"`
}

// approveRun is POST /runs/:uuid/approval {approved, turn_digest, idempotency_key?,
// pin_digest?, edits?, patch_digest?, reason?}: it records the verdict on the pending turn (turn_digest
// from GET /runs/:uuid; a missing or changed digest is 409; pin_digest, from the same GET,
// binds it to the tools' definitions as they are now, absent to those pinned with the pause:
// changed since is 409 tool_changed) and hands the continuation to a worker: 202 with
// Location. edits maps a pending call id to an RFC 6902 patch over the model's arguments; a
// patch that does not decode is 422 invalid_edit, like one the runtime refuses (each with
// per-field errors). reason (at most runtime.MaxReasonCharacters characters) is stored with
// the decision and, for a denial, told to the model. The same key (body or Idempotency-Key header; both must agree) replays
// the first answer.
func (a *API) approveRun(c echo.Context) error {
	uuid, err := runUUID(c)
	if err != nil {
		return err
	}
	var req approvalRequest
	if err := a.decodeBody(c, &req, false); err != nil {
		return err
	}
	if req.RequestChanges != nil {
		return a.requestChanges(c, uuid, req)
	}
	if req.Approved == nil {
		return invalid(`field "approved" (or "request_changes") is required`)
	}
	if utf8.RuneCountInString(req.Reason) > runtime.MaxReasonCharacters {
		return invalid(fmt.Sprintf(`field "reason" must be at most %d characters`, runtime.MaxReasonCharacters))
	}
	key, err := idempotencyKey(c, req.IdempotencyKey)
	if err != nil {
		return err
	}
	edits, e := runtime.DecodeEdits(uuid, req.Edits)
	if e != nil {
		return fromRuntime(e)
	}
	d := runtime.ApprovalDecision{Approved: *req.Approved, TurnDigest: req.TurnDigest, PinDigest: req.PinDigest, IdempotencyKey: key, Edits: edits, PatchDigest: req.PatchDigest, Reason: req.Reason}
	if a.auditor != nil {
		d.Audit = &runtime.AuditNote{Action: AuditApproval, IP: c.RealIP(), Outcome: runtime.Verdict(d.Approved)}
	}
	out, err := a.rt.Approve(c.Request().Context(), actorOf(c), uuid, d)
	if err != nil {
		return fromRuntime(err)
	}
	a.log.Info("api decision", "request_id", requestID(c), "service_account", actorOf(c).Name, "run", uuid,
		"approved", out.Decision.Approved, "replayed", out.Replayed)
	return a.decided(c, uuid, out)
}

// decided answers an accepted (or replayed) decision on run uuid: 202 with Location.
func (a *API) decided(c echo.Context, uuid string, out runtime.Outcome) error {
	c.Response().Header().Set(echo.HeaderLocation, a.location(uuid))
	dec := out.Decision
	return c.JSON(http.StatusAccepted, approvalJSON{UUID: uuid, Approved: dec.Approved, Decided: dec.Crdate,
		DecidedBy: dec.DecidedBy, DecidedByService: dec.DecidedByService, Replayed: out.Replayed,
		Votes: out.Votes, Required: out.Required, Resumed: out.Resumed, ChangesRequested: dec.Kind == runtime.DecisionRequestChanges})
}

// requestChanges is the approval endpoint's {"request_changes": "<text>", turn_digest,
// pin_digest?, idempotency_key?}: the pending calls are not run, and the model is told to revise
// them as the text says (at most runtime.MaxReasonCharacters characters; "approved", "edits"
// and "reason" are not sent with it).
func (a *API) requestChanges(c echo.Context, uuid string, req approvalRequest) error {
	text := *req.RequestChanges
	switch {
	case req.Approved != nil || len(req.Edits) > 0 || req.Reason != "":
		return invalid(`send "request_changes" instead of "approved", "edits" and "reason"`)
	case strings.TrimSpace(text) == "":
		return invalid(`field "request_changes" must say what should change`)
	case utf8.RuneCountInString(text) > runtime.MaxReasonCharacters:
		return invalid(fmt.Sprintf(`field "request_changes" must be at most %d characters`, runtime.MaxReasonCharacters))
	}
	key, err := idempotencyKey(c, req.IdempotencyKey)
	if err != nil {
		return err
	}
	cr := runtime.ChangeRequest{Text: strings.TrimSpace(text), TurnDigest: req.TurnDigest, PinDigest: req.PinDigest, IdempotencyKey: key}
	if a.auditor != nil {
		cr.Audit = &runtime.AuditNote{Action: AuditApproval, IP: c.RealIP(), Outcome: runtime.DecisionRequestChanges}
	}
	out, err := a.rt.RequestChanges(c.Request().Context(), actorOf(c), uuid, cr)
	if err != nil {
		return fromRuntime(err)
	}
	return a.decided(c, uuid, out)
}

func idempotencyKey(c echo.Context, body string) (string, error) {
	values := c.Request().Header.Values(HeaderIdempotencyKey)
	switch {
	case len(values) > 1:
		return "", invalid("send at most one Idempotency-Key header")
	case len(values) == 1 && body != "" && values[0] != body:
		return "", invalid("the Idempotency-Key header and idempotency_key differ")
	case len(values) == 1:
		return values[0], nil
	}
	return body, nil
}
