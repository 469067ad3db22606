package extruns

import (
	"encoding/json"
	"fmt"
	"strings"

	"runsdesk/runtime"
	"runsdesk/runtime/schema"
)

// Kind is what a run's suspended_state turned out to be.
type Kind string

// Kinds of payload.
const (
	// PayloadNone: the run does not wait, so nothing is pending (its payload is not read).
	PayloadNone Kind = ""
	// PayloadSealed: the extension sealed the state; runsdesk does not open it.
	PayloadSealed Kind = "sealed"
	// PayloadCleartext: the state is cleartext JSON, decoded into Calls and, for an input
	// pause, Input.
	PayloadCleartext Kind = "cleartext"
	// PayloadUnreadable: cleartext that DecodePause (or the input schema's compiler) refuses;
	// Reason says why.
	PayloadUnreadable Kind = "unreadable"
)

// SealPrefixes start a value the TYPO3 extension sealed with its own envelope: "nrv1:" and the
// legacy "v2:". A value without one is cleartext.
var SealPrefixes = []string{"nrv1:", "v2:"}

// Payload is a waiting run's suspended_state, classified.
type Payload struct {
	Kind Kind
	// Reason is why an unreadable state was refused (never a value of the state).
	Reason string
	// Calls are the pending calls of a cleartext state, in order.
	Calls []Call
	// Input is set for a cleartext input pause (inputToolName set).
	Input *Input
}

// Call is one pending tool call: its id, the tool's name and its arguments (a JSON object).
type Call struct {
	ID        string
	Tool      string
	Arguments json.RawMessage
}

// Input is what an input pause asks for: the tool the input is for, its JSON Schema as stored,
// and the form derived from it (schema.Schema.Fields). A schema that compiles but yields no
// form has no Fields and says why in NoForm.
type Input struct {
	Tool   string
	Schema json.RawMessage
	Fields []schema.Field
	NoForm string
}

// Sealed reports whether the extension sealed raw (it starts with one of SealPrefixes).
func Sealed(raw string) bool {
	for _, p := range SealPrefixes {
		if strings.HasPrefix(raw, p) {
			return true
		}
	}
	return false
}

// Classify reads a waiting run's suspended_state: sealed when the extension sealed it,
// otherwise cleartext decoded by runtime.DecodePause, whose input schema must compile
// (schema.Compile); anything DecodePause or the compiler refuses is unreadable, with the
// reason. It never panics and never guesses.
func Classify(raw string) Payload {
	if Sealed(raw) {
		return Payload{Kind: PayloadSealed}
	}
	p, err := runtime.DecodePause(raw)
	if err != nil {
		return Payload{Kind: PayloadUnreadable, Reason: err.Error()}
	}
	out := Payload{Kind: PayloadCleartext, Calls: make([]Call, len(p.PendingCalls))}
	for i, c := range p.PendingCalls {
		out.Calls[i] = Call{ID: c.ID, Tool: c.Function.Name, Arguments: c.Function.Arguments}
	}
	if !p.IsInputPause() {
		return out
	}
	compiled, err := schema.Compile(p.InputSchema)
	if err != nil {
		return Payload{Kind: PayloadUnreadable, Reason: fmt.Sprintf("the input schema of tool %q does not compile: %v", p.InputTool(), err)}
	}
	out.Input = &Input{Tool: p.InputTool(), Schema: p.InputSchema, Fields: compiled.Fields(), NoForm: compiled.NoFormReason()}
	return out
}
