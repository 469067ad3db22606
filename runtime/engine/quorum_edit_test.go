package engine_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/jsonpatch"
	"runsdesk/runtime/model"
	"runsdesk/runtime/quorum"
	"runsdesk/runtime/schema"
	"runsdesk/seal"
)

// editQuorumEnv is a run of refund_edit (editable) for {"order_id":"A1","amount":100} waiting
// for approval under a configuration that needs required approvals.
func editQuorumEnv(t *testing.T, required int, opts ...envOption) (*env, runtime.Run) {
	t.Helper()
	e := newEnv(t, []model.Turn{turn(call("refund_edit", `{"order_id":"A1","amount":100}`)), {Content: "done"}}, append(opts, withEditable())...)
	e.cfg.Quorum = quorum.Policy{Required: required}
	e.saveConfig()
	return e, e.startAndRun(admin)
}

// castEdit approves run uuid's pending call, as digest names the turn, with amount replaced.
func castEdit(e *env, actor runtime.Actor, uuid, digest string, amount int, key string) (runtime.Outcome, error) {
	e.t.Helper()
	id := e.view(uuid).Pause.PendingCalls[0].ID
	edits := map[string]jsonpatch.Patch{id: mustPatch(e.t, fmt.Sprintf(`[{"op":"replace","path":"/amount","value":%d}]`, amount))}
	return e.rt.Approve(e.ctx, actor, uuid, runtime.ApprovalDecision{Approved: true, TurnDigest: digest, Edits: edits,
		PatchDigest: schema.PatchDigest(digest, edits), IdempotencyKey: key})
}

// TestQuorumEditIsAVote: on a 2-of-N turn with one approval, an edit-and-approve is a vote for
// the edited call that voids the approval before it (1 of 2, the run waiting); the pending call
// now carries the edited arguments under a new turn digest. An approval with the old digest is
// stale, the editor's plain approval is already_voted, and another person's approval of the
// new digest resumes the run: the tool runs with the edited arguments, and the run's record
// keeps the model's arguments, the approved ones and who edited them. Sealed at rest too.
func TestQuorumEditIsAVote(t *testing.T) {
	for _, sealed := range []bool{false, true} {
		t.Run(map[bool]string{false: "clear", true: "sealed"}[sealed], func(t *testing.T) {
			var opts []envOption
			if sealed {
				opts = append(opts, withKeys(t))
			}
			e, run := editQuorumEnv(t, 2, opts...)
			ppl := voters(2)
			old := e.view(run.UUID).Pause.Digest
			if out, err := castVote(e, ppl[0], run.UUID, old, "a0"); err != nil || out.Votes != 1 {
				t.Fatalf("first approval: %+v, %v", out, err)
			}
			out, err := castEdit(e, ppl[1], run.UUID, old, 40, "e1")
			if err != nil || out.Resumed || out.Votes != 1 || out.Required != 2 {
				t.Fatalf("edit: %+v, %v; want 1 of 2, not resumed", out, err)
			}
			e.wantStatus(run.UUID, runtime.StatusWaitingApproval)
			if stored := e.storedState(run.UUID); strings.HasPrefix(stored, seal.Prefix) != sealed || sealed && strings.Contains(stored, "amount") {
				t.Errorf("state stored as %.60q; sealed should be %v", stored, sealed)
			}
			v := e.view(run.UUID)
			pc := v.Pause.PendingCalls[0]
			if canonical(t, pc.Function.Arguments) != `{"amount":40,"order_id":"A1"}` || canonical(t, pc.ModelArguments) != `{"amount":100,"order_id":"A1"}` {
				t.Fatalf("pending call after the edit: %s (model %s)", pc.Function.Arguments, pc.ModelArguments)
			}
			if v.Pause.Digest == old || v.Pause.Edit == nil || v.Pause.Edit.ByName != ppl[1].Name {
				t.Fatalf("pause after the edit: digest %s (was %s), edit %+v", v.Pause.Digest, old, v.Pause.Edit)
			}
			if q := v.Pause.Quorum; q == nil || len(q.Votes) != 1 || q.Votes[0].VoterName != ppl[1].Name || q.Votes[0].TurnDigest != v.Pause.Digest {
				t.Fatalf("votes after the edit: %+v", v.Pause.Quorum)
			}
			if n := e.countRows(`SELECT approvals FROM tx_nrllm_agentrun WHERE uid = ?`, run.UID); n != 1 {
				t.Fatalf("approvals = %d, want 1", n)
			}
			_, err = castVote(e, ppl[0], run.UUID, old, "a0-old")
			wantCode(t, err, runtime.CodeStaleApprovalTurn)
			_, err = castVote(e, ppl[1], run.UUID, v.Pause.Digest, "e1-again")
			wantCode(t, err, runtime.CodeAlreadyVoted)
			if again, err := castEdit(e, ppl[1], run.UUID, old, 40, "e1"); err != nil || !again.Replayed || again.Votes != 1 || again.Resumed {
				t.Fatalf("replay of the edit: %+v, %v", again, err)
			}
			out, err = castVote(e, ppl[0], run.UUID, v.Pause.Digest, "a0-new")
			if err != nil || !out.Resumed || out.Votes != 2 {
				t.Fatalf("approval of the edited call: %+v, %v; want 2 of 2, resumed", out, err)
			}
			e.rt.Wait()
			e.wantStatus(run.UUID, runtime.StatusCompleted)
			if got := e.rec.get("refund_edit"); len(got) != 1 || canonical(t, got[0]) != `{"amount":40,"order_id":"A1"}` {
				t.Fatalf("tool received %s, want the edited arguments once", got)
			}
			tl, err := e.rt.Timeline(e.ctx, support, e.run(run.UUID))
			if err != nil {
				t.Fatal(err)
			}
			if len(tl.Edits) != 1 || canonical(t, tl.Edits[0].Proposed) != `{"amount":100,"order_id":"A1"}` ||
				canonical(t, tl.Edits[0].Approved) != `{"amount":40,"order_id":"A1"}` || tl.Edits[0].DecidedBy != ppl[1].UserUID {
				t.Fatalf("timeline edits = %+v", tl.Edits)
			}
			if len(tl.Calls) != 1 || canonical(t, tl.Calls[0].Proposed) != `{"amount":100,"order_id":"A1"}` || canonical(t, tl.Calls[0].Approved) != `{"amount":40,"order_id":"A1"}` {
				t.Fatalf("executed call = %+v", tl.Calls)
			}
			var edit, final string
			for _, ev := range e.events(run.UUID) {
				switch {
				case ev.Kind == runtime.EventVote && strings.Contains(string(ev.Payload), `"edited":true`):
					edit = string(ev.Payload)
				case ev.Kind == runtime.EventApproval:
					final = string(ev.Payload)
				}
			}
			if !strings.Contains(edit, `"voided":1`) || !strings.Contains(edit, `"changedPaths":["/`) || strings.Contains(edit, "40") {
				t.Errorf("edit's vote event = %s", edit)
			}
			if !strings.Contains(final, `"edited":true`) || !strings.Contains(final, `"editedBy":11`) || !strings.Contains(final, `"votes":2`) {
				t.Errorf("final approval event = %s", final)
			}
		})
	}
}

// TestQuorumSecondEditVoidsFirst: on a 3-of-N turn, an edit, an approval of it, then a second
// edit: the second voids both (1 of 3 again, only its vote stored), the first edit's digest is
// stale, and two more approvals of the second edit resume the run with its arguments; the
// record keeps the model's arguments, not the first edit's.
func TestQuorumSecondEditVoidsFirst(t *testing.T) {
	e, run := editQuorumEnv(t, 3)
	ppl := voters(3)
	d0 := e.view(run.UUID).Pause.Digest
	if out, err := castEdit(e, ppl[0], run.UUID, d0, 40, ""); err != nil || out.Votes != 1 {
		t.Fatalf("first edit: %+v, %v", out, err)
	}
	d1 := e.view(run.UUID).Pause.Digest
	if out, err := castVote(e, ppl[1], run.UUID, d1, ""); err != nil || out.Votes != 2 || out.Resumed {
		t.Fatalf("approval of the first edit: %+v, %v", out, err)
	}
	if out, err := castEdit(e, ppl[2], run.UUID, d1, 30, ""); err != nil || out.Votes != 1 || out.Resumed {
		t.Fatalf("second edit: %+v, %v", out, err)
	}
	if n := e.countRows(`SELECT COUNT(*) FROM tx_runsdesk_vote WHERE run = ?`, run.UID); n != 1 {
		t.Fatalf("%d votes stored after the second edit, want 1", n)
	}
	_, err := castVote(e, ppl[0], run.UUID, d1, "")
	wantCode(t, err, runtime.CodeStaleApprovalTurn)
	v := e.view(run.UUID)
	if canonical(t, v.Pause.PendingCalls[0].ModelArguments) != `{"amount":100,"order_id":"A1"}` {
		t.Fatalf("model's arguments after two edits: %s", v.Pause.PendingCalls[0].ModelArguments)
	}
	for i, p := range ppl[:2] {
		out, err := castVote(e, p, run.UUID, v.Pause.Digest, "")
		if err != nil || out.Votes != 2+i || out.Resumed != (i == 1) {
			t.Fatalf("approval %d of the second edit: %+v, %v", i, out, err)
		}
	}
	e.rt.Wait()
	if got := e.rec.get("refund_edit"); len(got) != 1 || canonical(t, got[0]) != `{"amount":30,"order_id":"A1"}` {
		t.Fatalf("tool received %s, want the second edit's arguments once", got)
	}
	tl, err := e.rt.Timeline(e.ctx, support, e.run(run.UUID))
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.Edits) != 1 || canonical(t, tl.Edits[0].Proposed) != `{"amount":100,"order_id":"A1"}` || tl.Edits[0].DecidedBy != ppl[2].UserUID {
		t.Fatalf("timeline edits = %+v", tl.Edits)
	}
}

// TestConcurrentEditAndFinalVote: on a 2-of-N turn with one approval, 8 people approve it as
// it is (each the final vote) while 8 others edit it, all at once: exactly one wins. A final
// vote resumes the run with the model's arguments; an edit leaves it waiting, 1 of 2, with the
// edit's arguments. Every other is refused (stale, quorum reached, already handled) and leaves
// nothing behind: no vote row, no event (so no replay of its key can pass for a win).
func TestConcurrentEditAndFinalVote(t *testing.T) {
	e, run := editQuorumEnv(t, 2)
	ppl := voters(17)
	digest := e.view(run.UUID).Pause.Digest
	if _, err := castVote(e, ppl[0], run.UUID, digest, ""); err != nil {
		t.Fatal(err)
	}
	id := e.view(run.UUID).Pause.PendingCalls[0].ID
	const n = 16
	outs, errs := make([]runtime.Outcome, n), make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := runtime.ApprovalDecision{Approved: true, TurnDigest: digest, IdempotencyKey: fmt.Sprintf("k%d", i)}
			if i%2 == 1 {
				d.Edits = map[string]jsonpatch.Patch{id: mustPatch(t, fmt.Sprintf(`[{"op":"replace","path":"/amount","value":%d}]`, i))}
				d.PatchDigest = schema.PatchDigest(digest, d.Edits)
			}
			<-start
			outs[i], errs[i] = e.rt.Approve(e.ctx, ppl[i+1], run.UUID, d)
		}()
	}
	close(start)
	wg.Wait()
	e.rt.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("approvals %d and %d both won", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, runtime.ErrStaleApprovalTurn) && !errors.Is(err, runtime.ErrRunAlreadyResuming) &&
			!errors.Is(err, runtime.ErrRunNotAwaitingApproval) && !isCode(err, runtime.CodeQuorumReached):
			t.Fatalf("approval %d: %v", i, err)
		}
	}
	if winner < 0 {
		t.Fatalf("nobody won: %v", errs)
	}
	t.Logf("winner: approval %d (an edit: %v)", winner, winner%2 == 1)
	if outs[winner].Replayed {
		t.Fatalf("approval %d won as a replay of its own key: %+v", winner, outs[winner])
	}
	votes := e.countRows(`SELECT COUNT(*) FROM tx_runsdesk_vote WHERE run = ?`, run.UID)
	voteEvents := 0
	for _, ev := range e.events(run.UUID) {
		if ev.Kind == runtime.EventVote {
			voteEvents++
		}
	}
	if want := 1 + winner%2; voteEvents != want {
		t.Fatalf("%d vote events, want %d: a refused approval left its event", voteEvents, want)
	}
	if winner%2 == 0 {
		e.wantStatus(run.UUID, runtime.StatusCompleted)
		if got := e.rec.get("refund_edit"); !outs[winner].Resumed || votes != 2 || len(got) != 1 || canonical(t, got[0]) != `{"amount":100,"order_id":"A1"}` {
			t.Fatalf("final vote won: %+v, %d votes, tool received %s", outs[winner], votes, got)
		}
		return
	}
	e.wantStatus(run.UUID, runtime.StatusWaitingApproval)
	args := e.view(run.UUID).Pause.PendingCalls[0].Function.Arguments
	key := fmt.Sprintf("k%d", winner)
	if n := e.countRows(`SELECT COUNT(*) FROM tx_runsdesk_vote WHERE run = ? AND idempotency_key = ?`, run.UID, key); n != 1 {
		t.Fatalf("the stored vote is not the winning edit's (%s)", key)
	}
	if outs[winner].Resumed || outs[winner].Votes != 1 || votes != 1 || len(e.rec.get("refund_edit")) != 0 ||
		canonical(t, args) != fmt.Sprintf(`{"amount":%d,"order_id":"A1"}`, winner) {
		t.Fatalf("edit won: %+v, %d votes, pending %s", outs[winner], votes, args)
	}
}

// isCode reports whether err is a *runtime.Error with code.
func isCode(err error, code runtime.Code) bool {
	var re *runtime.Error
	return errors.As(err, &re) && re.Code == code
}
