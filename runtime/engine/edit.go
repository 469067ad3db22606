package engine

import (
	"cmp"
	"context"
	"fmt"
	"net/url"

	"runsdesk/runtime"
	"runsdesk/runtime/jsonpatch"
	"runsdesk/runtime/schema"
)

// EditCall returns pending call callID of run uuid as "Edit and approve" shows it, after the
// checks an approval with that edit would meet first: the actor may read and approve the
// run, it waits for approval, four-eyes, and the call is editable by the actor
// (EditNotPermitted otherwise). With form nil it is the form to fill in; with a posted form,
// turnDigest must be the pending turn's (else StaleApprovalTurn), the form is coerced with
// the tool's parameters, overlaid onto the model's arguments (only the declared keys
// change, schema.Overlay; an optional checkbox the model left out and the person left
// unticked stays out) and checked as an approval's edit is (checkEdited): InvalidEdit with per-field errors (the returned view
// still set, so the form is shown again as posted), or the view with Edited, Patch (from
// the model's arguments to the edited ones; an empty one is InvalidEdit) and PatchDigest.
// Nothing is claimed or recorded.
func (r *Runtime) EditCall(ctx context.Context, actor runtime.Actor, uuid, callID, turnDigest string, form url.Values) (runtime.EditView, error) {
	view, err := r.Get(ctx, actor, uuid)
	if err != nil {
		return runtime.EditView{}, err
	}
	run := view.Run
	switch {
	case !runtime.MayAct(actor, runtime.ActionApprove, run):
		return runtime.EditView{}, newError(runtime.CodeRunAccessDenied, uuid, "%s may not approve this run", actorLabel(actor))
	case run.Status != runtime.StatusWaitingApproval:
		return runtime.EditView{}, newError(runtime.CodeRunNotAwaitingApproval, uuid, "the run is %s", run.Status)
	case view.Pause == nil:
		return runtime.EditView{}, newError(runtime.CodeCorruptSuspendedState, uuid, "%s", view.Unreadable)
	}
	cfg, e := r.runConfiguration(ctx, run)
	if e == nil {
		e = cmp.Or(selfApproval(cfg, actor, run), assignedElsewhere(cfg, actor, run))
	}
	if e != nil {
		return runtime.EditView{}, e
	}
	reg, err := r.toolset(ctx)
	if err != nil {
		return runtime.EditView{}, storeError(uuid, err)
	}
	pause := runtime.PauseState{PendingCalls: view.Pause.PendingCalls}
	pc, t, e := editableCall(actor, uuid, pause, reg, offeredSet(cfg, reg), callID)
	if e != nil {
		return runtime.EditView{}, e
	}
	sch, e := r.parametersOf(uuid, pc, t)
	if e != nil {
		return runtime.EditView{}, e
	}
	ev := runtime.EditView{RunView: view, Call: pc, Form: sch, Proposed: proposedArgs(pc)}
	if form == nil {
		return ev, nil
	}
	if !schema.DigestEqual(turnDigest, view.Pause.Digest) {
		return ev, newError(runtime.CodeStaleApprovalTurn, uuid, "the pending action changed since it was reviewed; please re-review")
	}
	values, errs := sch.Coerce(form)
	if len(errs) > 0 {
		return ev, invalidEdit(uuid, callID, errs)
	}
	dropUnticked(sch, ev.Proposed, values)
	edited := schema.Overlay(ev.Proposed, values, sch.DeclaredKeys())
	if e := checkEdited(uuid, pc, t, edited, sch); e != nil {
		return ev, e
	}
	patch := jsonpatch.Diff(ev.Proposed, edited)
	if len(patch) == 0 {
		return ev, invalidEdit(uuid, callID, []schema.FieldError{{Message: "Nothing was changed: approve the call as proposed instead."}})
	}
	ev.Edited, ev.Patch = edited, patch
	ev.PatchDigest = schema.PatchDigest(view.Pause.Digest, map[string]jsonpatch.Patch{callID: patch})
	return ev, nil
}

// callEdits reads the calls run's approvals edited, oldest first, with who decided and when.
// A stored record that does not decode is a corrupt state, never guessed at.
func (r *Runtime) callEdits(ctx context.Context, run runtime.Run) ([]runtime.CallEdit, error) {
	decs, err := r.store.EditedDecisions(ctx, run.UID)
	if err != nil {
		return nil, storeError(run.UUID, err)
	}
	var out []runtime.CallEdit
	for _, d := range decs {
		var edits []runtime.CallEdit
		if err := unmarshalNumber([]byte(d.Arguments), &edits); err != nil {
			return nil, &runtime.Error{Code: runtime.CodeCorruptSuspendedState, RunUUID: run.UUID,
				Message: fmt.Sprintf("the edits of decision %d could not be read", d.UID), Err: err}
		}
		for i := range edits {
			edits[i].DecidedBy, edits[i].Decided = cmp.Or(edits[i].EditedBy, d.DecidedBy), d.Crdate
		}
		out = append(out, edits...)
	}
	return out, nil
}

// dropUnticked removes from values an optional checkbox or checkbox group the model's
// arguments left out and the person left unticked: a form always reads such a field (false,
// []), but leaving it alone is no edit.
func dropUnticked(sch *schema.Schema, proposed, values map[string]any) {
	for _, f := range sch.Fields() {
		if _, had := proposed[f.Name]; had || f.Required {
			continue
		}
		switch v := values[f.Name].(type) {
		case bool:
			if !v {
				delete(values, f.Name)
			}
		case []any:
			if f.Kind == schema.KindMultiEnum && len(v) == 0 {
				delete(values, f.Name)
			}
		}
	}
}
