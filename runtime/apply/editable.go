package apply

import (
	"runsdesk/runtime/schema"
	"runsdesk/runtime/tool"
)

// editable checks a tool's `editable: true` (decoded into def.Editable; default false): only
// an approval pause offers "Edit and approve", so the tool must need approval (requires_approval,
// or a write effect), and its parameters must declare the properties a reviewer edits.
func (v *validator) editable(path string, def tool.Definition) {
	if !def.Editable {
		return
	}
	key := joinKey(path, "editable")
	if !def.RequiresApproval && !def.Effect.IsWrite() {
		v.c.add(key, "only a tool that needs approval can be editable (set requires_approval: true or a write effect)")
		return
	}
	if len(def.Parameters) == 0 {
		v.c.add(key, "an editable tool needs parameters with properties (the reviewer's form is made from them)")
		return
	}
	if sch, err := schema.Compile(def.Parameters); err == nil && len(sch.DeclaredKeys()) == 0 {
		v.c.add(key, "an editable tool needs parameters with properties (the reviewer's form is made from them)")
	}
}
