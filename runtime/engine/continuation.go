package engine

import (
	"encoding/json"
	"fmt"

	"runsdesk/runtime"
	"runsdesk/runtime/tool"
)

// Continuation kinds stored in tx_nrllm_agentrun.queued_request: what a worker that claims
// the run from the queue must do. A start runs the prompt; a decision's continuation (its
// kind's name: approval, input) resumes the stored suspended_state with the decision; a plan continues from the
// last checkpoint (transcript and counters in suspended_state, the calls still to answer
// here); a request pauses an external request for its call. So a claimed run whose process died is recovered from stored state, and a step that
// finished is not repeated.
const (
	contStart    = "start"
	contApproval = "approval"
	contInput    = "input"
	contPlan     = "plan"
	contElicit   = runtime.EventElicitation
	// contRequest pauses an external request for its one call (Steps[0]): nothing runs
	// before the pause.
	contRequest = "request"
)

type continuation struct {
	Kind        string         `json:"kind"`
	Prompt      string         `json:"prompt,omitempty"`
	Approved    bool           `json:"approved,omitempty"`
	Data        map[string]any `json:"data,omitempty"`
	DecidedBy   int64          `json:"decidedBy,omitempty"`
	RequestedBy int64          `json:"requestedBy,omitempty"`
	Steps       []planStep     `json:"steps,omitempty"`
	// Answer and Expired are an elicitation decision's: decline or cancel, and whether the
	// desk cancelled an expired request.
	Answer  string `json:"answer,omitempty"`
	Expired bool   `json:"expired,omitempty"`
	// Note is the tool result a denying expiry answers each pending call with, and for a
	// denial who denied and why (deniedBy).
	Note string `json:"note,omitempty"`
	// Title, Message and Schema are an external request's (runtime.NewRequest).
	Title   string          `json:"title,omitempty"`
	Message string          `json:"message,omitempty"`
	Schema  json.RawMessage `json:"schema,omitempty"`
}

// planStep is how one pending call will be answered: executed with Args (nil = the model's
// arguments) or refused with Refusal, which a gate's refusal records in the governance log
// (Governance). The answers are decided once, when the turn's calls are planned, so a
// recovered segment answers the remaining calls the same way.
//
// Elicited, when set, answers a remote server's request for input made in the middle of the
// call: the call is finished by the tool's Answer (see tool.Elicitor) with Args as made.
//
// Approved marks a call an approval let run, with Args (edited) or as the model proposed it;
// the executed call's record says so (runtime.ExecutedCall.Approved).
// Held marks a call held open in-session: Elicited is sent on the held session (nil: the
// request ended before an answer; see segment.callHeld).
type planStep struct {
	Call       runtime.PendingCall     `json:"call"`
	Args       json.RawMessage         `json:"args,omitempty"`
	Refusal    string                  `json:"refusal,omitempty"`
	Governance *governanceNote         `json:"governance,omitempty"`
	Elicited   *tool.ElicitationAnswer `json:"elicited,omitempty"`
	Approved   bool                    `json:"approved,omitempty"`
	Held       bool                    `json:"held,omitempty"`
}

func (c continuation) encode() (string, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("encode continuation: %w", err)
	}
	return string(b), nil
}

func decodeContinuation(raw string) (continuation, error) {
	var c continuation
	if raw == "" {
		return c, fmt.Errorf("no stored request")
	}
	if err := unmarshalNumber([]byte(raw), &c); err != nil {
		return c, fmt.Errorf("stored request is corrupt: %w", err)
	}
	if _, decided := decisionKindNamed(c.Kind); decided || c.Kind == contStart || c.Kind == contPlan || c.Kind == contRequest {
		return c, nil
	}
	return c, fmt.Errorf("stored request has unknown kind %q", c.Kind)
}
