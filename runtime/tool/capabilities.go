package tool

import "encoding/json"

// Valid reports whether e is the empty (undeclared) effect or one of the three declared
// effects.
func (e Effect) Valid() bool {
	switch e {
	case "", EffectReadOnly, EffectIdempotentWrite, EffectNonIdempotentWrite:
		return true
	}
	return false
}

// EffectOf returns the side effect t declares. A tool that declares nothing, or declares the
// empty effect, is EffectReadOnly. A declared value that is not one of the three known effects
// is treated as EffectNonIdempotentWrite, the most cautious reading (New refuses such a tool).
func EffectOf(t Tool) Effect {
	d, ok := t.(EffectDeclarer)
	if !ok {
		return EffectReadOnly
	}
	e := d.Effect()
	switch {
	case e == "":
		return EffectReadOnly
	case !e.Valid():
		return EffectNonIdempotentWrite
	}
	return e
}

// NeedsApproval reports whether a person must approve every call of t before it runs: for a
// remote tool its server's operator declaration alone decides; otherwise the tool says so
// through ApprovalRequirer, or it declares a write (a write implies approval).
func NeedsApproval(t Tool) bool {
	if r, ok := t.(RemoteTool); ok {
		return r.RemoteApproval()
	}
	if a, ok := t.(ApprovalRequirer); ok && a.RequiresApproval() {
		return true
	}
	return EffectOf(t).IsWrite()
}

// InputSchemaOf returns the JSON Schema of the typed input t needs from a person, and true, when
// t implements InputRequirer; otherwise nil and false. The schema is returned as the tool gives
// it; New refuses a tool whose schema is not usable.
func InputSchemaOf(t Tool) (json.RawMessage, bool) {
	r, ok := t.(InputRequirer)
	if !ok {
		return nil, false
	}
	return r.InputSchema(), true
}

// IsAdminOnly reports whether only admins may approve or submit input to t.
func IsAdminOnly(t Tool) bool {
	a, ok := t.(AdminOnlyTool)
	return ok && a.AdminOnly()
}
