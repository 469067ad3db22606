package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"runsdesk/runtime"
	"runsdesk/runtime/jsonpatch"
	"runsdesk/runtime/schema"
	"runsdesk/runtime/tool"
)

// prepareEdits checks an approval's edits against the pause d read, in this order: an edit
// comes only with an approval; the turn digest and then the patch digest (when given) must be
// the pause's (else stale, whatever the edits hold); each edited call must be editable by
// the decider (editableCall); each patch must apply to the model's arguments and the result
// validate against the tool's parameters (InvalidEdit, per-field errors). It leaves in d the
// edited arguments by call id (the continuation's data), the decision row's arguments
// record and what the approval event adds (edited, patchDigest, changedPaths: never values).
func (r *Runtime) prepareEdits(ctx context.Context, d *decision, a runtime.ApprovalDecision) *runtime.Error {
	uuid := d.run.UUID
	if !a.Approved {
		return newError(runtime.CodeInvalidRequest, uuid, "edits come only with an approval")
	}
	if !schema.DigestEqual(a.TurnDigest, d.digest) {
		return staleError(d.spec, uuid)
	}
	digest := schema.PatchDigest(d.digest, a.Edits)
	if a.PatchDigest != "" && !schema.DigestEqual(a.PatchDigest, digest) {
		return staleError(d.spec, uuid)
	}
	reg, err := r.toolset(ctx)
	if err != nil {
		return storeError(uuid, err)
	}
	offered := offeredSet(d.cfg, reg)
	data := map[string]any{}
	records := []runtime.CallEdit{}
	changed := []string{}
	for _, id := range slices.Sorted(maps.Keys(a.Edits)) {
		pc, t, e := editableCall(d.actor, uuid, d.state.PauseState, reg, offered, id)
		if e != nil {
			return e
		}
		sch, e := r.parametersOf(uuid, pc, t)
		if e != nil {
			return e
		}
		patch := a.Edits[id]
		edited, e := applyEdit(uuid, pc, t, patch, sch)
		if e != nil {
			return e
		}
		data[id] = edited
		enc := mustJSON(edited)
		paths := patch.Paths()
		records = append(records, runtime.CallEdit{CallID: id, Tool: pc.Function.Name, Proposed: proposedJSON(pc), Approved: enc,
			Patch: patch, PatchDigest: digest, ChangedPaths: paths})
		for _, p := range paths {
			changed = append(changed, jsonpatch.Pointer(id)+p)
		}
	}
	d.data = data
	d.arguments = string(mustJSON(records))
	d.eventExtra = map[string]any{"edited": true, "patchDigest": digest, "changedPaths": changed}
	d.edit = &runtime.PauseEdit{PatchDigest: digest, ChangedPaths: changed}
	return nil
}

// editableCall finds the pending call id of st and checks that actor may edit it: its tool
// is registered, still offered by the configuration and editable (tool.IsEditable), and an
// admin-only tool is edited by an admin. An id no call has is InvalidEdit, a refusal of the
// others EditNotPermitted; both carry the call id.
func editableCall(actor runtime.Actor, uuid string, st runtime.PauseState, reg *tool.Registry, offered map[string]bool, id string) (runtime.PendingCall, tool.Tool, *runtime.Error) {
	i := slices.IndexFunc(st.PendingCalls, func(c runtime.PendingCall) bool { return c.ID == id })
	if i < 0 {
		return runtime.PendingCall{}, nil, invalidEdit(uuid, id, []schema.FieldError{{Message: "No pending call of this turn has this id."}})
	}
	pc := st.PendingCalls[i]
	name := pc.Function.Name
	refuse := func(format string, args ...any) (runtime.PendingCall, tool.Tool, *runtime.Error) {
		e := newError(runtime.CodeEditNotPermitted, uuid, format, args...)
		e.CallID = id
		return runtime.PendingCall{}, nil, e
	}
	t, known := reg.Get(name)
	switch {
	case !known:
		return refuse("tool %q is not registered", name)
	case !offered[name]:
		return refuse("tool %q is no longer enabled for this configuration", name)
	case !tool.IsEditable(t):
		return refuse("tool %q is not editable", name)
	case tool.IsAdminOnly(t) && actor.Role != runtime.RoleAdmin:
		return refuse("tool %q is admin-only: only an admin may edit its calls", name)
	}
	return pc, t, nil
}

// parametersOf compiles t's parameters, which the edited arguments of pc must satisfy; a
// schema that does not compile (or declares no property) cannot be edited through.
func (r *Runtime) parametersOf(uuid string, pc runtime.PendingCall, t tool.Tool) (*schema.Schema, *runtime.Error) {
	sch, err := r.schemas.Compile(t.Parameters())
	if err != nil || len(sch.DeclaredKeys()) == 0 {
		e := newError(runtime.CodeEditNotPermitted, uuid, "the parameters of tool %q cannot be edited", pc.Function.Name)
		e.CallID, e.Err = pc.ID, err
		return nil, e
	}
	return sch, nil
}

// applyEdit applies patch to pc's arguments as the model gave them, within t's bound on a
// call's arguments (tool.MaxArgumentsBytes, checked as the patch grows), and checks the result
// (checkEdited): the edited arguments, or InvalidEdit (the patch's failure at pointer "", or
// the per-field errors).
func applyEdit(uuid string, pc runtime.PendingCall, t tool.Tool, patch jsonpatch.Patch, sch *schema.Schema) (map[string]any, *runtime.Error) {
	out, err := jsonpatch.ApplyWithin(proposedArgs(pc), patch, tool.MaxArgumentsBytes(t))
	if err != nil {
		msg := "The patch does not apply."
		var pe *jsonpatch.Error
		if errors.As(err, &pe) {
			msg = fmt.Sprintf("The patch does not apply: operation %d: %s.", pe.Index, pe.Reason)
		}
		return nil, invalidEdit(uuid, pc.ID, []schema.FieldError{{Message: msg}})
	}
	edited, ok := out.(map[string]any)
	if !ok {
		return nil, invalidEdit(uuid, pc.ID, []schema.FieldError{{Message: "The edited arguments must be a JSON object."}})
	}
	if e := checkEdited(uuid, pc, t, edited, sch); e != nil {
		return nil, e
	}
	return edited, nil
}

// checkEdited is what edited arguments of pc must meet, patched or posted in the form: within
// t's bound on a call's arguments, changing no property t's parameters do not declare
// (schema.Undeclared; removing one the model sent is allowed), and valid against sch; else
// InvalidEdit with the reason.
func checkEdited(uuid string, pc runtime.PendingCall, t tool.Tool, edited map[string]any, sch *schema.Schema) *runtime.Error {
	if n := tool.MaxArgumentsBytes(t); len(mustJSON(edited)) > n {
		return invalidEdit(uuid, pc.ID, []schema.FieldError{{Message: fmt.Sprintf("The edited arguments are larger than %d bytes.", n)}})
	}
	if errs := schema.Undeclared(t.Parameters(), proposedArgs(pc), edited); len(errs) > 0 {
		return invalidEdit(uuid, pc.ID, errs)
	}
	if errs := sch.Validate(edited); len(errs) > 0 {
		return invalidEdit(uuid, pc.ID, errs)
	}
	return nil
}

// invalidEdit is the InvalidEdit error of call id with errs.
func invalidEdit(uuid, id string, errs []schema.FieldError) *runtime.Error {
	return &runtime.Error{Code: runtime.CodeInvalidEdit, RunUUID: uuid, CallID: id, Fields: errs,
		Message: fmt.Sprintf("the edited arguments were refused (%d field(s))", len(errs))}
}

// proposedArgs are pc's arguments as the model gave them, decoded ({} when they are not a
// JSON object, as the pause recorded).
func proposedArgs(pc runtime.PendingCall) map[string]any {
	var args map[string]any
	if pc.ArgumentsError != "" || unmarshalNumber(pc.Function.Arguments, &args) != nil || args == nil {
		return map[string]any{}
	}
	return args
}

// proposedJSON is proposedArgs as JSON text.
func proposedJSON(pc runtime.PendingCall) []byte { return mustJSON(proposedArgs(pc)) }

// editedStep plans an approved call that was edited: executed with the approved arguments,
// which must still satisfy the tool's parameters (a continuation recovered from the queue is
// checked again); else refused, never run with the model's arguments.
func (s *segment) editedStep(pc runtime.PendingCall, t tool.Tool, edited any) planStep {
	sch, err := s.r.schemas.Compile(t.Parameters())
	if err != nil || len(sch.Validate(edited)) > 0 {
		return planStep{Call: pc, Refusal: fmt.Sprintf("Error: the arguments the operator approved for tool %q no longer match its parameters.", pc.Function.Name)}
	}
	return planStep{Call: pc, Args: mustJSON(edited)}
}
