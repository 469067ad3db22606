package tool

// EditableTool is implemented by a tool whose calls a reviewer may edit before approving
// them ("Edit and approve"); see IsEditable.
type EditableTool interface{ Editable() bool }

// IsEditable reports whether a reviewer may edit t's arguments when approving a call: t says
// so through EditableTool and needs approval (only an approval pause offers the edit).
func IsEditable(t Tool) bool {
	e, ok := t.(EditableTool)
	return ok && e.Editable() && NeedsApproval(t)
}
