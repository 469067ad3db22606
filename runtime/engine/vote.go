package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"runsdesk/runtime"
	"runsdesk/runtime/quorum"
	"runsdesk/runtime/tool"
)

// maxVoteAttempts bounds how often one approval reads its run again because a concurrent vote
// moved the pause's vote count between its read and its write: each round counts one vote, so
// a quorum of quorum.MaxRequired settles within it.
const maxVoteAttempts = quorum.MaxRequired + 3

// errVoteRaced is a vote whose guard missed only because another vote on the same pause was
// counted first: decide reads the run again and counts it anew.
var errVoteRaced = errors.New("a concurrent vote was counted first")

// automaticVoter is the voter of the one automatic approval (a service account's or a
// standing approval's) a turn may count: a second one is refused as already voted.
const automaticVoter = "automatic"

// turnQuorum is what a turn calling the tools names needs under cfg (runtime/quorum): the
// largest approvals_required among the tools as reg has them, the configuration's for a tool
// that sets none.
func turnQuorum(cfg runtime.Configuration, names []string, reg *tool.Registry) quorum.Policy {
	tools := make([]quorum.Policy, 0, len(names))
	for _, name := range names {
		t, _ := reg.Get(name)
		tools = append(tools, tool.QuorumOf(t))
	}
	return quorum.Of(cfg.Quorum, tools)
}

// voterOf is the voter key actor's approval is counted under, and whether it is automatic.
func voterOf(actor runtime.Actor) (string, bool) {
	if actor.UserUID > 0 && actor.Role != runtime.RoleRule {
		return "user:" + strconv.FormatInt(actor.UserUID, 10), false
	}
	return automaticVoter, true
}

// vote counts d, an approval of a turn that needs need's approvals (more than one), as one
// vote: refused for an automatic approver unless need allows one, and for a voter who already
// voted on the pause. The votes counted are those of this pause for the same turn and pin
// digests. The vote that completes the quorum is the decision: its plan resumes the run
// (claim) and writes its vote beside the decision row; every other vote's plan only records
// (the vote row, a `vote` event and its audit row). Both are guarded by the pause's vote count
// as read, so of concurrent votes exactly one counts at a time (errVoteRaced: read again). An
// approval with edits is never the final vote: it voids the others and counts as the first
// (editVote), whoever cast it.
func (r *Runtime) vote(ctx context.Context, d *decision, h *handoff, need quorum.Policy, reg *tool.Registry) (runtime.Outcome, error) {
	run, actor := d.run, d.actor
	voter, automatic := voterOf(actor)
	edit := d.edit != nil
	if automatic && !need.AutomaticVote {
		return runtime.Outcome{}, newError(runtime.CodeApproverNotPermitted, run.UUID,
			"this turn needs %d approvals by people; %s may not be one of them (the configuration does not set allow_automatic_vote)", need.Required, actorLabel(actor))
	}
	votes, err := r.votesRecorded(ctx, run)
	if err != nil {
		return runtime.Outcome{}, storeError(run.UUID, err)
	}
	if len(votes) != run.Approvals {
		return runtime.Outcome{}, errVoteRaced
	}
	pin := definitionPin(d.state.ToolNames(), reg, policyOf(d.cfg), r.digests).Digest()
	counted := 1
	for _, v := range votes {
		if v.Voter == voter && !edit {
			return runtime.Outcome{}, alreadyVoted(run, v)
		}
		if v.TurnDigest == d.digest && v.PinDigest == pin {
			counted++
		}
	}
	key := d.spec.key
	if key == "" {
		key = randomKey()
		d.spec.key = key
	}
	d.vote = &runtime.Vote{Run: run.UID, Pause: run.PauseNumber, Voter: voter, VoterName: actor.Shown(), DecidedBy: actor.UserUID,
		DecidedByService: actor.Decider(), IdempotencyKey: key, TurnDigest: d.digest, PinDigest: pin, Required: need.Required}
	if edit {
		return r.editVote(ctx, d, need, len(votes))
	}
	if need.Quorate(counted) {
		if d.eventExtra == nil {
			d.eventExtra = map[string]any{}
		}
		d.eventExtra["votes"], d.eventExtra["required"] = counted, need.Required
		out, err := r.claim(ctx, d, h)
		out.Votes, out.Required = counted, need.Required
		return out, err
	}
	return r.recordVote(ctx, d, counted, need, r.unix(), nil)
}

// recordVote commits d's vote by a record-only plan at now: the run keeps waiting for the
// approvals the turn still needs. With replace (an edit's vote, editVote) the plan also voids
// the pause's earlier votes and makes replace the pending turn (EditOnPause).
func (r *Runtime) recordVote(ctx context.Context, d *decision, counted int, need quorum.Policy, now int64, replace *runtime.PauseReplacement) (runtime.Outcome, error) {
	run, actor, v := d.run, d.actor, d.vote
	payload := d.kind.event(d)
	payload["votes"], payload["required"] = counted, need.Required
	plan := runtime.CommitPlan{
		Read: run, Now: now, Vote: v, Configuration: &d.cfg, Replace: replace, DropVotes: replace != nil,
		Event: runtime.NewEvent{Run: run.UID, Kind: runtime.EventVote, Payload: mustJSON(decidedWhileAssigned(payload, run, actor)), Now: now,
			Content: runtime.Keep(d.cfg.Privacy, d.said())},
	}
	if actor.Rule != nil {
		plan.RuleUses = actor.Rule.Names
	}
	if a := d.spec.audit; a != nil {
		note := *a
		note.Outcome = runtime.AuditVoted
		plan.Audit = &runtime.AuditRecord{Actor: actor, AuditNote: note}
	}
	_, _, err := r.store.Commit(ctx, plan)
	if err != nil {
		return runtime.Outcome{}, r.voteNotCommitted(ctx, d, err)
	}
	dec := runtime.Decision{Run: run.UID, IdempotencyKey: v.IdempotencyKey, Kind: d.spec.name, Approved: true, DecidedBy: actor.UserUID,
		DecidedByService: actor.Decider(), Crdate: now, Arguments: d.arguments}
	return runtime.Outcome{RunUUID: run.UUID, Decision: dec, Votes: counted, Required: need.Required}, nil
}

// voteNotCommitted explains a vote's plan the store refused: the voter voted meanwhile, a
// concurrent vote was counted first (the run still waits on the same pause: errVoteRaced), or
// the claim was lost as any decision's is.
func (r *Runtime) voteNotCommitted(ctx context.Context, d *decision, err error) error {
	run := d.run
	switch {
	case errors.Is(err, runtime.ErrAlreadyVoted):
		return alreadyVoted(run, *d.vote)
	case errors.Is(err, runtime.ErrRuleNotInForce):
		return &runtime.Error{Code: runtime.CodeApproverNotPermitted, RunUUID: run.UUID, Message: "the standing approval is no longer in force", Err: err}
	case errors.Is(err, runtime.ErrEventNotRecorded):
		return &runtime.Error{Code: runtime.CodeApprovalNotAuditable, RunUUID: run.UUID, Message: "the approval could not be recorded, so it was not applied", Err: err}
	case !errors.Is(err, runtime.ErrGuard):
		return storeError(run.UUID, err)
	}
	now, ferr := r.store.FindByUID(ctx, run.UID)
	if ferr == nil && now.Status == run.Status && now.PauseNumber == run.PauseNumber && now.SuspendedAt == run.SuspendedAt {
		return errVoteRaced
	}
	return r.lostClaim(ctx, run, d.spec)
}

// pauseVotes is the approvals the approval pause p of run needs under cfg and, when it needs
// several, the votes counted so far and whether viewer cast one of them (nil for a turn one
// approval decides).
func (r *Runtime) pauseVotes(ctx context.Context, run runtime.Run, cfg runtime.Configuration, p runtime.PauseState, reg *tool.Registry, viewer runtime.Actor) (*runtime.PauseQuorum, error) {
	need := turnQuorum(cfg, p.ToolNames(), reg)
	if !need.Multi() {
		return nil, nil
	}
	votes, err := r.votesRecorded(ctx, run)
	if err != nil {
		return nil, err
	}
	q := &runtime.PauseQuorum{Required: need.Required, AutomaticVote: need.AutomaticVote, Votes: votes}
	voter, _ := voterOf(viewer)
	for _, v := range votes {
		q.Voted = q.Voted || v.Voter == voter
	}
	return q, nil
}

// alreadyVoted refuses a second vote of one voter on a pause.
func alreadyVoted(run runtime.Run, v runtime.Vote) error {
	return newError(runtime.CodeAlreadyVoted, run.UUID, "%s already approved this turn; it waits for the other approvals it needs", voterShown(v))
}

// voterShown is who cast v, as a refusal names them.
func voterShown(v runtime.Vote) string {
	if v.VoterName != "" {
		return v.VoterName
	}
	return fmt.Sprintf("voter %s", v.Voter)
}

// voteReplay is how many votes for the same turn v's pause had counted when v was cast (v
// included): what a replay of v answers.
func (r *Runtime) voteReplay(ctx context.Context, run runtime.Run, v runtime.Vote) (votes int, err error) {
	all, err := r.store.Votes(ctx, run.UID, v.Pause)
	if err != nil {
		return 0, err
	}
	for _, o := range all {
		if o.UID <= v.UID && o.TurnDigest == v.TurnDigest && o.PinDigest == v.PinDigest {
			votes++
		}
	}
	return votes, nil
}

// votesRecorded are the votes recorded on run's pause, read only when the run as read counts
// some (a first vote, and the card of a turn nobody approved yet, read none).
func (r *Runtime) votesRecorded(ctx context.Context, run runtime.Run) ([]runtime.Vote, error) {
	if run.Approvals == 0 {
		return nil, nil
	}
	return r.store.Votes(ctx, run.UID, run.PauseNumber)
}
