package engine

import (
	"context"
	"maps"
	"slices"

	"runsdesk/runtime"
	"runsdesk/runtime/jsonpatch"
	"runsdesk/runtime/quorum"
)

// editVote commits d, an approval with edits of a turn that needs need's approvals (more than
// one), as a vote for the edited calls by a record-only plan (EditOnPause): the edited calls
// become the pending turn (their model's arguments kept, their previews dropped, the edit
// recorded in PauseState.Edit), so later voters see them and bind to the new turn digest;
// the voided earlier votes of the pause (they approved other arguments) are removed and the
// editor's vote is the first of the new count. An edit therefore never completes a quorum.
// The plan is guarded by the pause (its state) and vote count as read, as every vote's is.
func (r *Runtime) editVote(ctx context.Context, d *decision, need quorum.Policy, voided int) (runtime.Outcome, error) {
	now := r.unix()
	st := editedState(d, now)
	enc, err := st.Encode()
	if err != nil {
		return runtime.Outcome{}, storeError(d.run.UUID, err)
	}
	d.vote.TurnDigest = digestWith(st.PauseState, r.facts.InputDigest)
	d.eventExtra["voided"] = voided
	replace := &runtime.PauseReplacement{State: enc, Subject: runtime.SubjectOf(d.cfg.Subject, st.PendingCalls)}
	return r.recordVote(ctx, d, 1, need, now, replace)
}

// editedState is the suspended state d read with d's edited arguments (d.data) as the
// pending calls' arguments: each edited call keeps the model's arguments (ModelArguments,
// set by the first edit only) and loses its refusal and its preview (it described other
// arguments); Edit names the editor, when, and the edit's digest and changed pointers.
func editedState(d *decision, now int64) runtime.SuspendedState {
	st := d.state
	st.PendingCalls = slices.Clone(st.PendingCalls)
	for i, pc := range st.PendingCalls {
		edited, ok := d.data[pc.ID]
		if !ok {
			continue
		}
		if pc.ModelArguments == nil {
			pc.ModelArguments = proposedJSON(pc)
		}
		pc.Function.Arguments, pc.ArgumentsError = mustJSON(edited), ""
		st.PendingCalls[i] = pc
	}
	st.CallPreviews = slices.DeleteFunc(slices.Clone(st.CallPreviews), func(p runtime.CallPreview) bool {
		return p.Index < len(st.PendingCalls) && d.data[st.PendingCalls[p.Index].ID] != nil
	})
	edit := *d.edit
	edit.By, edit.ByName, edit.At = d.actor.UserUID, d.actor.Shown(), now
	st.Edit = &edit
	return st
}

// carryEdit makes d, an approval without edits of a pending turn an earlier edit rewrote
// (PauseState.Edit), approve the edited calls as an approval with those edits would: the
// continuation runs each with its edited arguments (d.data), the decision row records each
// call's model and approved arguments with the patch between them and the editor (d.arguments),
// and the approval event adds edited, editedBy, patchDigest and changedPaths. Anything else
// is left as it is.
func carryEdit(d *decision) {
	e := d.state.Edit
	if e == nil || d.data != nil {
		return
	}
	data := map[string]any{}
	records := []runtime.CallEdit{}
	changed := []string{}
	for _, pc := range d.state.PendingCalls {
		if pc.ModelArguments == nil {
			continue
		}
		var model, approved map[string]any
		if unmarshalNumber(pc.ModelArguments, &model) != nil || unmarshalNumber(pc.Function.Arguments, &approved) != nil {
			continue
		}
		patch := jsonpatch.Diff(model, approved)
		paths := patch.Paths()
		data[pc.ID] = approved
		records = append(records, runtime.CallEdit{CallID: pc.ID, Tool: pc.Function.Name, Proposed: mustJSON(model), Approved: mustJSON(approved),
			Patch: patch, PatchDigest: e.PatchDigest, ChangedPaths: paths, EditedBy: e.By})
		for _, p := range paths {
			changed = append(changed, jsonpatch.Pointer(pc.ID)+p)
		}
	}
	if len(data) == 0 {
		return
	}
	d.data, d.arguments = data, string(mustJSON(records))
	extra := map[string]any{"edited": true, "editedBy": e.By, "patchDigest": e.PatchDigest, "changedPaths": changed}
	if d.eventExtra == nil {
		d.eventExtra = extra
		return
	}
	maps.Copy(d.eventExtra, extra)
}
