package runtime

import "context"

// InputSubmission is typed data a person supplies to a run waiting for input. Data must be
// JSON-typed (as produced by schema.Coerce or encoding/json). TurnDigest binds it to the
// form that was shown; "" is stale.
type InputSubmission struct {
	Data           map[string]any
	TurnDigest     string
	IdempotencyKey string
}

// SubmitInput validates s against the stored schema before anything is claimed (an invalid
// submission changes nothing and returns InvalidInputSubmission with per-field errors), then
// claims the run, records the input event (never the values) and hands the continuation,
// which overlays the values onto the tool call, to a worker.
func (r *Runtime) SubmitInput(ctx context.Context, actor Actor, uuid string, s InputSubmission) (Outcome, error) {
	return r.decide(ctx, actor, uuid, decision{
		kind: contInput, from: StatusWaitingInput, action: ActionSubmit,
		notAwaiting: CodeRunNotAwaitingInput, stale: CodeStaleInputTurn,
		key: s.IdempotencyKey, digest: s.TurnDigest, data: s.Data,
	})
}
