package tool

import (
	"encoding/json"
	"slices"

	"runsdesk/runtime/quorum"
	"runsdesk/runtime/wait"
)

// defined answers, for a tool built from a stored Definition (an HTTP tool, a remote MCP
// tool), what the definition alone says.
type defined struct{ def Definition }

// Name returns the definition's name.
func (t defined) Name() string { return t.def.Name }

// Description returns the definition's description (a remote tool's as its server listed it
// when applied).
func (t defined) Description() string { return t.def.Description }

// Parameters returns the definition's parameter schema (a remote tool's input schema as its
// server listed it), or an empty object schema when it has none.
func (t defined) Parameters() json.RawMessage {
	if emptyJSON(t.def.Parameters) {
		return json.RawMessage(emptyParameters)
	}
	return slices.Clone(t.def.Parameters)
}

// RequiresApproval returns the definition's requires_approval flag (a remote tool's server
// operator declaration; a write effect implies approval too, see NeedsApproval).
func (t defined) RequiresApproval() bool { return t.def.RequiresApproval }

// AdminOnly returns the definition's admin_only flag.
func (t defined) AdminOnly() bool { return t.def.AdminOnly }

// WaitPolicy is the tool's `wait:` policy (zero: none).
func (t defined) WaitPolicy() wait.Policy { return t.def.Wait }

// MaxArgumentsBytes is the definition's bound on a call's arguments (0: the default).
func (t defined) MaxArgumentsBytes() int { return t.def.MaxArgumentsBytes }

// Editable returns the definition's editable flag.
func (t defined) Editable() bool { return t.def.Editable }

// Quorum returns the definition's quorum keys.
func (t defined) Quorum() quorum.Policy { return t.def.Quorum }
