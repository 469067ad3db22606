package api

import (
	"encoding/json"
	"fmt"
	"net/http"
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
	if req.Approved == nil {
		return invalid(`field "approved" is required`)
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
	if err != nil || out.Replayed {
		a.audit(c, AuditApproval, uuid, runtime.NotAccepted(out, err), "")
	}
	if err != nil {
		return fromRuntime(err)
	}
	a.log.Info("api decision", "request_id", requestID(c), "service_account", actorOf(c).Name, "run", uuid,
		"approved", out.Decision.Approved, "replayed", out.Replayed)
	c.Response().Header().Set(echo.HeaderLocation, a.location(uuid))
	dec := out.Decision
	return c.JSON(http.StatusAccepted, approvalJSON{UUID: uuid, Approved: dec.Approved, Decided: dec.Crdate,
		DecidedBy: dec.DecidedBy, DecidedByService: dec.DecidedByService, Replayed: out.Replayed,
		Votes: out.Votes, Required: out.Required, Resumed: out.Resumed})
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
