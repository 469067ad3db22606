package runtime

import (
	"context"
	"errors"
	"net/url"
)

// ErrNoInputForm is wrapped by the CorruptSuspendedState error of a submission to a run whose
// input schema does not compile or, for a posted form, yields no form field: no form can be
// shown or read for it.
var ErrNoInputForm = errors.New("the stored input schema yields no form")

// InputSubmission is what a person supplies to a run waiting for input: typed Data, or the
// posted Form. TurnDigest binds it to the form that was shown; "" is stale.
//
// Data must be JSON-typed (as produced by schema.Coerce or encoding/json); it is used when
// Form is nil.
//
// Form, when not nil, replaces Data: it is a posted form (every value a string) that the
// runtime coerces with the compiled schema the run waits with (schema.Schema.Coerce). For a
// form the digest is checked before its values, so a stale form is refused as
// StaleInputTurn whatever it holds; a schema that yields no form field is
// CorruptSuspendedState; InvalidInputSubmission carries the coercion and validation errors
// of schema.Schema.CoerceAndValidate, one per field in form order.
//
// Audit, when not nil, is the audit row written with an accepted submission (AuditNote).
type InputSubmission struct {
	Data           map[string]any
	Form           url.Values
	TurnDigest     string
	IdempotencyKey string
	Audit          *AuditNote
}

// SubmitInput validates s against the stored schema before anything is claimed (an invalid
// submission changes nothing and returns InvalidInputSubmission with per-field errors), then
// claims the run, records the input event (never the values) and hands the continuation,
// which overlays the values onto the tool call, to a worker.
func (r *Runtime) SubmitInput(ctx context.Context, actor Actor, uuid string, s InputSubmission) (Outcome, error) {
	return r.decide(ctx, actor, uuid, decision{
		kind: contInput, from: StatusWaitingInput, action: ActionSubmit,
		notAwaiting: CodeRunNotAwaitingInput, stale: CodeStaleInputTurn,
		key: s.IdempotencyKey, digest: s.TurnDigest, data: s.Data, form: s.Form, audit: s.Audit,
	})
}
