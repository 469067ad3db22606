package api

import (
	"encoding/json"

	"runsdesk/runtime"
)

// runJSON is a run as the API shows it. Times are unix seconds; null when not (yet) set.
// RetryAt is set only while a queued run waits to be retried after a provider failure;
// ExpiresAt (null: the pause never expires) and Escalated only while the run waits (null and
// false otherwise). Expired is set when one of the run's pauses expired, and ExpiryAction is
// what its latest expiry did (deny, answer, cancel; null when none expired). Assignee is the
// username of the person the run is assigned to (null: nobody, and for a finished run).
type runJSON struct {
	UUID              string       `json:"uuid"`
	Status            string       `json:"status"`
	Configuration     string       `json:"configuration"`
	TerminationReason string       `json:"termination_reason"`
	ErrorClass        string       `json:"error_class"`
	Iterations        int          `json:"iterations"`
	Truncated         bool         `json:"truncated"`
	PromptTokens      int64        `json:"prompt_tokens"`
	CompletionTokens  int64        `json:"completion_tokens"`
	TotalTokens       int64        `json:"total_tokens"`
	EstimatedCost     float64      `json:"estimated_cost"`
	Created           int64        `json:"created"`
	Started           *int64       `json:"started"`
	WaitingSince      *int64       `json:"waiting_since"`
	Finished          *int64       `json:"finished"`
	RetryAt           *int64       `json:"retry_at"`
	ExpiresAt         *int64       `json:"expires_at"`
	Escalated         bool         `json:"escalated"`
	Expired           bool         `json:"expired"`
	ExpiryAction      *string      `json:"expiry_action"`
	Assignee          *string      `json:"assignee"`
	Pending           *pendingJSON `json:"pending,omitempty"`
	PendingError      string       `json:"pending_error,omitempty"`
}

// runDetailJSON is one run as GET /runs/{id} shows it: the run with its output (null while
// it is not finished, when it keeps none, or when it is withheld, then OutputWithheld says
// why: privacy, retention or scope).
type runDetailJSON struct {
	runJSON
	Output         *outputJSON `json:"output"`
	OutputWithheld string      `json:"output_withheld,omitempty"`
}

// outputJSON is a finished run's output: its text and when the run finished (unix seconds).
type outputJSON struct {
	Text     string `json:"text"`
	Finished int64  `json:"finished"`
}

func toRunDetailJSON(v runtime.RunView, a runtime.Answer) runDetailJSON {
	out := runDetailJSON{runJSON: toRunJSON(v), OutputWithheld: a.Withheld}
	if a.Output != nil {
		out.Output = &outputJSON{Text: a.Output.Text, Finished: a.Output.Finished}
	}
	return out
}

// pendingJSON is what a waiting run waits for: the turn's calls, for an input pause the
// target tool and its schema, and the digest a decision must echo as turn_digest. PinDigest
// is the digest of the tools' definitions and the decision policy as they are now (a
// decision may echo it as pin_digest); DefinitionChanges is how they differ from those
// pinned when the run paused.
type pendingJSON struct {
	Kind              string          `json:"kind"`
	TurnDigest        string          `json:"turn_digest"`
	Calls             []callJSON      `json:"calls"`
	InputTool         string          `json:"input_tool,omitempty"`
	InputSchema       json.RawMessage `json:"input_schema,omitempty"`
	PinDigest         string          `json:"pin_digest"`
	DefinitionChanges []changeJSON    `json:"definition_changes,omitempty"`
	Elicitation       *elicitJSON     `json:"elicitation,omitempty"`
}

// changeJSON is one change since the pause: tool ("" for the configuration's policy),
// field, and the values then and now as words (never a schema's text).
type changeJSON struct {
	Tool  string `json:"tool"`
	Field string `json:"field"`
	Was   string `json:"was"`
	Now   string `json:"now"`
}

// elicitJSON is a remote server's request for input: its message and when it expires (unix
// seconds), after which the desk answers it cancel.
type elicitJSON struct {
	Message   string `json:"message"`
	ExpiresAt int64  `json:"expires_at"`
}

// callJSON is one call of the pending turn. Effect is what the tool declares now
// (read_only, idempotent_write, non_idempotent_write; an unknown tool counts as a write);
// Preview holds what the tool said the call would do, when it can say; GuardrailReason is why
// a guardrail asked for the call's approval, when one did; Editable says the approval may
// carry edits of the call's arguments (an admin-only tool's by an admin only); EditedBy and
// ModelArguments are set on a call an earlier vote's edit made the pending one: who edited it
// and the model's arguments (Arguments are the edited ones).
type callJSON struct {
	ID              string          `json:"id"`
	Tool            string          `json:"tool"`
	Arguments       json.RawMessage `json:"arguments"`
	Effect          string          `json:"effect"`
	Editable        bool            `json:"editable"`
	Preview         []string        `json:"preview,omitempty"`
	GuardrailReason *string         `json:"guardrail_reason,omitempty"`
	EditedBy        *string         `json:"edited_by,omitempty"`
	ModelArguments  json.RawMessage `json:"model_arguments,omitempty"`
}

// eventJSON is one event of a run's timeline.
type eventJSON struct {
	Sequence   int             `json:"sequence"`
	Kind       string          `json:"kind"`
	Round      int             `json:"round"`
	DurationMS float64         `json:"duration_ms"`
	Payload    json.RawMessage `json:"payload"`
	Crdate     int64           `json:"crdate"`
}

func toRunJSON(v runtime.RunView) runJSON {
	r := v.Run
	out := runJSON{
		UUID: r.UUID, Status: string(r.Status), Configuration: r.ConfigurationIdentifier,
		TerminationReason: r.TerminationReason, ErrorClass: r.ErrorClass, Iterations: r.Iterations,
		Truncated: r.Truncated, PromptTokens: r.PromptTokens, CompletionTokens: r.CompletionTokens,
		TotalTokens: r.TotalTokens, EstimatedCost: r.EstimatedCost, Created: r.Crdate,
		Started: unset(r.StartedAt), WaitingSince: unset(r.SuspendedAt), Finished: unset(r.FinishedAt),
		PendingError: v.Unreadable, Expired: r.Expiry != "",
	}
	if r.Expiry != "" {
		out.ExpiryAction = &r.Expiry
	}
	if r.Assigned() != 0 {
		out.Assignee = &r.AssigneeName
	}
	if r.Status == runtime.StatusQueued {
		out.RetryAt = unset(r.RetryAt)
	}
	if r.Status.Waiting() {
		out.ExpiresAt, out.Escalated = unset(r.ExpiresAt), r.Escalated
	}
	if v.Pause != nil {
		out.Pending = toPendingJSON(*v.Pause)
	}
	return out
}

func toPendingJSON(p runtime.Pause) *pendingJSON {
	out := &pendingJSON{Kind: "approval", TurnDigest: p.Digest, PinDigest: p.PinDigest, Calls: make([]callJSON, len(p.PendingCalls))}
	for _, ch := range p.Changes {
		out.DefinitionChanges = append(out.DefinitionChanges, changeJSON(ch))
	}
	if p.Status == runtime.StatusWaitingInput {
		out.Kind, out.InputTool, out.InputSchema = "input", p.InputTool, p.InputSchema
	}
	if el := p.Elicitation; el != nil {
		out.Elicitation = &elicitJSON{Message: el.Message, ExpiresAt: el.ExpiresAt}
	}
	for i, c := range p.PendingCalls {
		args := c.Function.Arguments
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		out.Calls[i] = callJSON{ID: c.ID, Tool: c.Function.Name, Arguments: args, Effect: string(p.Tools[c.Function.Name].Effect),
			Editable: p.Tools[c.Function.Name].Editable}
		if e := p.Edit; e != nil && c.ModelArguments != nil {
			out.Calls[i].EditedBy, out.Calls[i].ModelArguments = &e.ByName, c.ModelArguments
		}
	}
	for _, pv := range p.Previews {
		if pv.Index >= 0 && pv.Index < len(out.Calls) && !pv.Failed {
			out.Calls[pv.Index].Preview = pv.Lines
		}
	}
	for _, g := range p.Guardrails {
		if g.Index >= 0 && g.Index < len(out.Calls) {
			out.Calls[g.Index].GuardrailReason = &g.Reason
		}
	}
	return out
}

func toEventJSON(e runtime.Event) eventJSON {
	payload := e.Payload
	if len(payload) == 0 {
		payload = json.RawMessage("{}")
	}
	return eventJSON{Sequence: e.Sequence, Kind: e.Kind, Round: e.Round, DurationMS: e.DurationMS, Payload: payload, Crdate: e.Crdate}
}

func unset(t int64) *int64 {
	if t == 0 {
		return nil
	}
	return &t
}
