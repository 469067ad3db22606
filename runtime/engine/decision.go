package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"runsdesk/runtime"
	"runsdesk/runtime/quorum"
	"runsdesk/runtime/schema"
	"runsdesk/runtime/tool"
)

// decisionKind is one kind of decision on a waiting run (approval, input).
// decide runs the steps every kind shares; a kind supplies only what differs: what it is
// (spec), its own checks of the stored pause (prepare), the decider gate's rule (gate), what
// its event records (event) and how its continuation answers the pending calls (answer). A
// new kind is a type implementing it, added to decisionKinds.
type decisionKind interface {
	// spec describes the kind and this decision's caller-supplied fields.
	spec() kindSpec
	// prepare checks the decision against the pause d holds as read, before the digest check,
	// and leaves in d what its continuation carries (d.data, d.input).
	prepare(ctx context.Context, r *Runtime, d *decision) *runtime.Error
	// gate is the decider tool gate's rule for this decision; ok is false when it is not gated.
	gate(st runtime.SuspendedState, reg *tool.Registry) (rule gateRule, ok bool)
	// event is the payload of the event an accepted decision records (never submitted values).
	event(d *decision) map[string]any
	// answer plans how a continuation c of this kind answers each pending call of st when the
	// run resumes; validated is the schema its data was checked against by the decision (nil:
	// check again). An error fails the run as policy_denied with spec().resumeFailure.
	answer(s *segment, st runtime.SuspendedState, c continuation, validated *schema.Schema) (func(runtime.PendingCall) planStep, error)
}

// decisionKinds registers every kind, by the name its decisions, events and continuations
// store.
func decisionKinds() []decisionKind {
	return []decisionKind{approval{}, changeRequest{}, input{}, elicitation{}, expiry{}}
}

// decisionKindNamed returns the registered kind stored as name.
func decisionKindNamed(name string) (decisionKind, bool) {
	for _, k := range decisionKinds() {
		if k.spec().name == name {
			return k, true
		}
	}
	return nil, false
}

// kindSpec is what the shared steps of decide need to know about a decision.
type kindSpec struct {
	// name is stored with the decision, its event and its continuation.
	name string
	// waitsIn is the status a run waits in for it; action is the role matrix's action.
	waitsIn runtime.Status
	action  runtime.Action
	// notAwaiting and stale are its refusals of a run not waiting in waitsIn, and of a digest
	// that is not the pause's.
	notAwaiting, stale runtime.Code
	// key, digest, approved and audit are the caller's idempotency key, turn digest, verdict
	// (false but for an approval) and audit note; pinDigest binds the decision to the
	// definitions it was shown ("" = those pinned with the pause).
	key, digest string
	pinDigest   string
	approved    bool
	audit       *runtime.AuditNote
	// reason is the decider's reason, stored with the decision ("" for none).
	reason string
	// fourEyes: under RequireSecondApprover the run's initiator may not make this decision.
	fourEyes bool
	// unrecorded is the refusal when the claim's event cannot be written.
	unrecorded runtime.Code
	// resumeFailure is the error class of a run whose continuation no longer holds at resume.
	resumeFailure string
	// answer and expired are what an elicitation decision tells the remote server (decline,
	// cancel; "" for other kinds) and whether the desk answers an expired request.
	answer  string
	expired bool
	// afterDeadline: this kind may decide a pause past its expiry (no person may).
	afterDeadline bool
	// counted is the kind label runsdesk_decisions_total counts its attempts under (approval,
	// input, expiry, elicitation_expiry) and accepted the outcome label of an accepted one
	// (decisionMetrics).
	counted, accepted string
	// refusalAudit shapes the audit row of an attempt refused or replayed from the caller's
	// note (audit); ok false: no row. nil for a kind only the desk decides (decisionAudit).
	refusalAudit func(n runtime.AuditNote, out runtime.Outcome, err error) (row runtime.AuditNote, ok bool)
	// supersede, when set, is the refusal of any later decision on a run whose latest
	// decision is of this kind (nil: the usual ones).
	supersede func(run runtime.Run, latest runtime.Decision) *runtime.Error
	// quorum: the kind decides a turn under its approvals_required (runtime/quorum); when it
	// also approves, it is one vote toward a turn that needs several (vote).
	quorum bool
}

// decision is one decision on its way through decide: the kind, who decides, the run and
// what the steps found.
type decision struct {
	kind  decisionKind
	spec  kindSpec
	actor runtime.Actor
	run   runtime.Run
	// catalog is the run's configuration and tools as read with the run; cfg is the
	// configuration once found.
	catalog runtime.DecisionRead
	cfg     runtime.Configuration
	state   runtime.SuspendedState
	// digest is the pause's digest as read.
	digest string
	// data and input are what prepare leaves: the data the continuation carries and the
	// compiled schema it was validated against.
	data  map[string]any
	input *schema.Schema
	// arguments is what the decision row stores beside the verdict (Decision.Arguments) and
	// eventExtra what the kind's event adds; prepare leaves them (both empty for most).
	arguments  string
	eventExtra map[string]any
	// edit is what prepareEdits leaves of an approval with edits (its patch digest and the
	// pointers it changed); nil without edits.
	edit *runtime.PauseEdit
	// note is what a denying continuation answers each pending call with ("": the kind's
	// own words).
	note string
	// vote is the vote this decision casts on a turn that needs several approvals (nil for
	// every other decision); its plan writes it.
	vote *runtime.Vote
	// waited is how long the pause waited, once the decision claimed it.
	waited *pauseWait
}

// decidedWhileAssigned is payload with the uid of the person run was assigned to
// ("assignedTo") when actor, someone else, decided it.
func decidedWhileAssigned(payload map[string]any, run runtime.Run, actor runtime.Actor) map[string]any {
	if holder := run.Assigned(); holder != 0 && holder != actor.UserUID {
		payload["assignedTo"] = holder
	}
	return payload
}

// said is what d says, as its event's content: the values it gives, the arguments it
// edited and the decider's reason.
func (d *decision) said() runtime.EventContent {
	c := runtime.EventContent{Arguments: d.arguments, Note: d.spec.reason}
	if d.data != nil {
		c.Values = string(mustJSON(d.data))
	}
	return c
}

// gateRule is how the decider tool gate checks a decision: the refusal's code and governance
// gate ("approver", "submitter"), the tools the decider must be allowed to use, and, when
// set, the reason (and the refusal's words) why a service account, or a standing approval,
// may not make it at all.
type gateRule struct {
	code          runtime.Code
	decider       string
	tools         []string
	noService     string
	noServiceText string
	noRule        string
	noRuleText    string
}

// pauseDigest is the digest a decision on p must echo: of its pending calls and, for an
// input pause, its target tool and schema, and for an elicitation pause the server's request.
func pauseDigest(p runtime.PauseState) string { return digestWith(p, schema.InputDigest) }

// digestWith is pauseDigest with inputDigest computing an input pause's digest.
func digestWith(p runtime.PauseState, inputDigest func(any, string, json.RawMessage) string) string {
	if e := p.Elicitation; e != nil && p.IsInputPause() {
		return schema.ElicitationDigest(p.PendingCalls, p.InputTool(), p.InputSchema, e.RequestID, e.Message, e.RequestState)
	}
	if p.IsInputPause() {
		return inputDigest(p.PendingCalls, p.InputTool(), p.InputSchema)
	}
	return schema.ApprovalDigest(p.PendingCalls)
}

// decide is the shared order of every decision: load (the run with its catalog); access; then
// decideRun. A refused
// request whose idempotency key matches a decision already accepted for this run gets that
// first outcome instead (a replay), so the key is looked up only when something refuses: the
// first use of a key costs no lookup, and a reused key can never claim twice (the decision's
// unique key refuses it in the claim). A refusal by the tool gate that stands writes its
// governance row. The runtime's decision observers are then told of the attempt once
// (observeAttempt): its metrics and, unless it was accepted, its audit row.
func (r *Runtime) decide(ctx context.Context, actor runtime.Actor, uuid string, k decisionKind) (runtime.Outcome, error) {
	a := decisionAttempt{actor: actor, uuid: uuid, spec: k.spec()}
	a.out, a.waited, a.err = r.attempt(ctx, k, a)
	for n := 1; errors.Is(a.err, errVoteRaced); n++ {
		if n == maxVoteAttempts {
			a.err = newError(runtime.CodeRunStateUnavailable, uuid, "other approvals kept arriving while this one was counted; try again")
			break
		}
		a.out, a.waited, a.err = r.attempt(ctx, k, a)
	}
	r.observeAttempt(ctx, a)
	return a.out, a.err
}

// attempt is one attempt of decide at a's decision, with the wait of the pause it decided
// (nil when it decided none).
func (r *Runtime) attempt(ctx context.Context, k decisionKind, a decisionAttempt) (runtime.Outcome, *pauseWait, error) {
	actor, uuid, spec := a.actor, a.uuid, a.spec
	run, catalog, e := r.loadForDecision(ctx, uuid)
	if e != nil {
		return runtime.Outcome{}, nil, e
	}
	if !runtime.MayKnow(actor, spec.action, run) {
		return runtime.Outcome{}, nil, newError(runtime.CodeRunNotFound, uuid, "no such run")
	}
	switch {
	case len(spec.key) > runtime.MaxIdempotencyKey:
		return runtime.Outcome{}, nil, newError(runtime.CodeInvalidRequest, uuid, "the idempotency key is longer than %d characters", runtime.MaxIdempotencyKey)
	case !utf8.ValidString(spec.key):
		return runtime.Outcome{}, nil, newError(runtime.CodeInvalidRequest, uuid, "the idempotency key is not valid UTF-8")
	case utf8.RuneCountInString(spec.reason) > runtime.MaxReasonCharacters:
		return runtime.Outcome{}, nil, newError(runtime.CodeInvalidRequest, uuid, "the reason is longer than %d characters", runtime.MaxReasonCharacters)
	case !utf8.ValidString(spec.reason):
		return runtime.Outcome{}, nil, newError(runtime.CodeInvalidRequest, uuid, "the reason is not valid UTF-8")
	}
	d := &decision{kind: k, spec: spec, actor: actor, run: run, catalog: catalog}
	out, err := r.decideRun(ctx, d)
	var re *runtime.Error
	if err == nil || !errors.As(err, &re) || re.Code == runtime.CodeRunStateUnavailable {
		return out, d.waited, err
	}
	if prior, ok, rerr := r.replay(ctx, run, spec); rerr != nil || ok {
		prior.Request = prior.Resumed && catalog.Err == nil && catalog.Configuration.IsExternal()
		return prior, nil, rerr
	}
	r.recordGateDenial(ctx, re)
	r.decidedSince(ctx, run, spec, re)
	return out, nil, err
}

// decidedSince completes re, a stale refusal of run, with the run's latest decision (which
// decided the turn the caller reviewed, or one after it), when there is one.
func (r *Runtime) decidedSince(ctx context.Context, run runtime.Run, spec kindSpec, re *runtime.Error) {
	if re.Code != spec.stale || re.Decided != nil {
		return
	}
	if dec, err := r.store.LatestDecision(ctx, run.UID); err == nil {
		re.Decided = &dec
	}
}

// decideRun checks d against its run as read: status; access; configuration; four-eyes;
// rehydrate; decider gate (before any of the kind's own work, an edit's patch included); the
// kind's own checks; digest; definitions (pinHolds). Then one
// transaction claims the pause exactly as read (so every check holds for the claimed row) and
// records the decision and its event (and, for a rule actor, each rule's use). A refusal at
// any point leaves the run unchanged.
func (r *Runtime) decideRun(ctx context.Context, d *decision) (runtime.Outcome, error) {
	run, spec, actor := d.run, d.spec, d.actor
	uuid := run.UUID
	if run.Status != spec.waitsIn {
		return runtime.Outcome{}, r.notAwaiting(ctx, run, spec)
	}
	if e := mayDecide(actor, spec, run); e != nil {
		return runtime.Outcome{}, e
	}
	if !spec.afterDeadline && run.ExpiresAt > 0 && r.unix() >= run.ExpiresAt {
		return runtime.Outcome{}, expiredError(run, "")
	}
	cfg, tools, err := d.catalog.Configuration, d.catalog.Tools, d.catalog.Err
	if errors.Is(err, runtime.ErrNotFound) {
		return runtime.Outcome{}, newError(runtime.CodeRunConfigurationGone, uuid, "the run's configuration no longer exists")
	}
	if err != nil {
		return runtime.Outcome{}, storeError(uuid, err)
	}
	if e := selfApproval(cfg, actor, run); spec.fourEyes && e != nil {
		return runtime.Outcome{}, e
	}
	if e := assignedElsewhere(cfg, actor, run); e != nil {
		return runtime.Outcome{}, e
	}
	d.cfg = cfg
	var e *runtime.Error
	if d.state, e = rehydrateWith(run, pauseKind(spec.waitsIn), r.facts.Usable); e != nil {
		return runtime.Outcome{}, e
	}
	d.digest = digestWith(d.state.PauseState, r.facts.InputDigest)
	reg, err := r.decisionToolset(ctx, tools)
	if err != nil {
		return runtime.Outcome{}, storeError(uuid, err)
	}
	if cfg, reg, err = withAdHoc(cfg, reg, d.state.PauseState); err != nil {
		return runtime.Outcome{}, &runtime.Error{Code: runtime.CodeCorruptSuspendedState, RunUUID: uuid, Message: "the request's ad hoc tool is unusable", Err: err}
	}
	d.cfg = cfg
	if rule, gated := d.kind.gate(d.state, reg); gated {
		if refused := gate(actor, uuid, rule, reg, offeredSet(cfg, reg)); len(refused) > 0 {
			r.describeGateDenial(refused[0].GateDenial, actor, run, cfg)
			return runtime.Outcome{}, refused[0]
		}
	}
	if e := d.kind.prepare(ctx, r, d); e != nil {
		return runtime.Outcome{}, e
	}
	if !schema.DigestEqual(spec.digest, d.digest) {
		return runtime.Outcome{}, staleError(spec, uuid)
	}
	if e := pinHolds(uuid, spec.pinDigest, d.state.Definitions, definitionPin(d.state.ToolNames(), reg, policyOf(cfg), r.digests)); e != nil {
		return runtime.Outcome{}, e
	}
	h := &handoff{cfg: cfg, state: d.state, reg: reg, input: d.input}
	need := quorum.Policy{Required: 1}
	if spec.quorum {
		need = turnQuorum(cfg, d.state.ToolNames(), reg)
	}
	if spec.approved && need.Multi() {
		return r.vote(ctx, d, h, need, reg)
	}
	out, err := r.claim(ctx, d, h)
	out.Votes, out.Required = 1, need.Required
	if !spec.approved {
		out.Votes = run.Approvals
	}
	return out, err
}

// claim commits d by a plan that resumes the run (runtime.CommitPlan): the pause d read (and
// checked) claimed for its continuation, with the decision, its event and its audit row, then dispatches the continuation
// with h completed by the claimed run; an answer to a held request is claimed for its
// holder instead, whose poll continues it (heldBy).
func (r *Runtime) claim(ctx context.Context, d *decision, h *handoff) (runtime.Outcome, error) {
	run, spec, actor := d.run, d.spec, d.actor
	key := spec.key
	if key == "" {
		key = randomKey()
	}
	if spec.approved {
		carryEdit(d)
	}
	cont := continuation{Kind: spec.name, Approved: spec.approved, Data: d.data, DecidedBy: actor.UserUID, Answer: spec.answer, Expired: spec.expired, Note: d.note}
	enc, err := cont.encode()
	if err != nil {
		return runtime.Outcome{}, storeError(run.UUID, err)
	}
	lease := r.newLease("resume")
	holder := heldBy(d)
	if holder != "" {
		lease.Owner = holder
	}
	dec := runtime.Decision{Run: run.UID, IdempotencyKey: key, Kind: spec.name, Approved: spec.approved, DecidedBy: actor.UserUID,
		DecidedByService: actor.Decider(), Crdate: lease.Now, Arguments: d.arguments, Reason: spec.reason}
	plan := runtime.CommitPlan{
		Read: run, Now: lease.Now, Resume: &runtime.Resume{Lease: lease, Continuation: enc}, Decision: dec, Vote: d.vote,
		Event: runtime.NewEvent{Run: run.UID, Kind: spec.name, Payload: mustJSON(decidedWhileAssigned(d.kind.event(d), run, actor)), Now: lease.Now,
			Content: runtime.Keep(d.cfg.Privacy, d.said())},
		Notify: runtime.NotifyDecided, Configuration: &d.cfg,
	}
	if dec.Kind == runtime.DecisionExpiry {
		plan.Notify, plan.DropVotes = runtime.NotifyExpired, true
	}
	if actor.Rule != nil {
		plan.RuleUses = actor.Rule.Names
	}
	if spec.audit != nil {
		plan.Audit = &runtime.AuditRecord{Actor: actor, AuditNote: *spec.audit}
	}
	claimed, _, err := r.store.Commit(ctx, plan)
	switch {
	case err != nil && d.vote != nil:
		return runtime.Outcome{}, r.voteNotCommitted(ctx, d, err)
	case errors.Is(err, runtime.ErrGuard):
		return runtime.Outcome{}, r.lostClaim(ctx, run, spec)
	case errors.Is(err, runtime.ErrRuleNotInForce):
		return runtime.Outcome{}, &runtime.Error{Code: runtime.CodeApproverNotPermitted, RunUUID: run.UUID, Message: "the standing approval is no longer in force", Err: err}
	case errors.Is(err, runtime.ErrEventNotRecorded) && spec.unrecorded != runtime.CodeRunStateUnavailable:
		return runtime.Outcome{}, &runtime.Error{Code: spec.unrecorded, RunUUID: run.UUID, Message: fmt.Sprintf("the %s could not be recorded, so it was not applied", spec.name), Err: err}
	case err != nil:
		return runtime.Outcome{}, storeError(run.UUID, err)
	}
	out := runtime.Outcome{RunUUID: run.UUID, Decision: dec, Resumed: true, Request: d.cfg.IsExternal()}
	d.waited = r.waitOf(run, d.state.PauseState, actor, d.cfg.Identifier)
	if err := r.hook(runtime.HookAfterClaim, run.UID); err != nil {
		return out, nil
	}
	if holder != "" {
		r.holds.wake()
		return out, nil
	}
	h.run = claimed
	r.dispatch(run.UID, lease, h)
	return out, nil
}

// heldBy is the holder a decision claims its run for, so the holder sends the answer on the
// session it holds open: the pause's Holder for a person's answer to a held request; "" for
// every other decision, the desk's own end of a held request included (dispatched here).
func heldBy(d *decision) string {
	if p := d.state.Elicitation; p.Held() && !d.spec.expired {
		return p.Holder
	}
	return ""
}

// lostClaim explains a claim its guard refused, from the run as it is now: paused again with
// another state (stale), or claimed or finished by someone else.
func (r *Runtime) lostClaim(ctx context.Context, read runtime.Run, spec kindSpec) error {
	now, err := r.store.FindByUID(ctx, read.UID)
	switch {
	case err != nil:
		return r.alreadyResuming(ctx, read)
	case now.Status == spec.waitsIn:
		return staleError(spec, read.UUID)
	default:
		return r.notAwaiting(ctx, now, spec)
	}
}

// replay returns the first outcome when key matches an accepted decision of this run, or a
// vote counted on one of its pauses (with the votes counted by then).
func (r *Runtime) replay(ctx context.Context, run runtime.Run, spec kindSpec) (runtime.Outcome, bool, error) {
	key := spec.key
	if key == "" {
		return runtime.Outcome{}, false, nil
	}
	out := runtime.Outcome{RunUUID: run.UUID, Replayed: true, Votes: 1, Required: 1, Resumed: true}
	dec, err := r.store.FindDecision(ctx, run.UID, key)
	switch {
	case errors.Is(err, runtime.ErrNotFound):
		out.Resumed = false
	case err != nil:
		return runtime.Outcome{}, false, storeError(run.UUID, err)
	}
	v, err := r.store.FindVote(ctx, run.UID, key)
	switch {
	case errors.Is(err, runtime.ErrNotFound) && out.Resumed:
		out.Decision = dec
		return out, true, nil
	case errors.Is(err, runtime.ErrNotFound):
		return runtime.Outcome{}, false, nil
	case err != nil:
		return runtime.Outcome{}, false, storeError(run.UUID, err)
	}
	if out.Votes, err = r.voteReplay(ctx, run, v); err != nil {
		return runtime.Outcome{}, false, storeError(run.UUID, err)
	}
	out.Required = v.Required
	if !out.Resumed {
		dec = runtime.Decision{Run: run.UID, IdempotencyKey: key, Kind: spec.name, Approved: true, DecidedBy: v.DecidedBy,
			DecidedByService: v.DecidedByService, Crdate: v.Crdate}
	}
	out.Decision = dec
	return out, true, nil
}

// notAwaiting refuses a decision on run, which does not wait in spec.waitsIn: when it no
// longer waits, already handled if its latest decision is of this kind, or that kind's
// supersede refusal (an expiry's: run_expired); else not awaiting.
func (r *Runtime) notAwaiting(ctx context.Context, run runtime.Run, spec kindSpec) error {
	if dec, err := r.store.LatestDecision(ctx, run.UID); err == nil && !run.Status.Waiting() {
		if spec.quorum && spec.approved && dec.Kind == spec.name && dec.Approved && r.votedOn(ctx, run) {
			return &runtime.Error{Code: runtime.CodeQuorumReached, RunUUID: run.UUID, Decided: &dec,
				Message: "the turn already had the approvals it needed; this approval was not counted"}
		}
		if dec.Kind == spec.name {
			return &runtime.Error{Code: runtime.CodeRunAlreadyResuming, RunUUID: run.UUID, Decided: &dec,
				Message: "this run was already handled"}
		}
		if k, ok := decisionKindNamed(dec.Kind); ok && k.spec().supersede != nil {
			return k.spec().supersede(run, dec)
		}
	}
	return newError(spec.notAwaiting, run.UUID, "the run is %s", run.Status)
}

// votedOn reports whether run's latest pause was decided by votes (it needed several).
func (r *Runtime) votedOn(ctx context.Context, run runtime.Run) bool {
	votes, err := r.store.Votes(ctx, run.UID, run.PauseNumber)
	return err == nil && len(votes) > 0
}

func (r *Runtime) alreadyResuming(ctx context.Context, run runtime.Run) error {
	e := &runtime.Error{Code: runtime.CodeRunAlreadyResuming, RunUUID: run.UUID, Message: "someone else already handled this run"}
	if dec, err := r.store.LatestDecision(ctx, run.UID); err == nil {
		e.Decided = &dec
	}
	return e
}

// runConfiguration reads run's configuration: RunConfigurationGone when it no longer exists.
func (r *Runtime) runConfiguration(ctx context.Context, run runtime.Run) (runtime.Configuration, *runtime.Error) {
	cfg, err := r.catalog.ConfigurationByUID(ctx, run.ConfigurationUID)
	if errors.Is(err, runtime.ErrNotFound) {
		return cfg, newError(runtime.CodeRunConfigurationGone, run.UUID, "the run's configuration no longer exists")
	}
	if err != nil {
		return cfg, storeError(run.UUID, err)
	}
	return cfg, nil
}

// mayDecide is the role matrix's check of a decision of spec's kind: nil when actor may make
// it on run, else RunAccessDenied.
func mayDecide(actor runtime.Actor, spec kindSpec, run runtime.Run) *runtime.Error {
	if runtime.MayAct(actor, spec.action, run) {
		return nil
	}
	return newError(runtime.CodeRunAccessDenied, run.UUID, "%s may not %s this run", actorLabel(actor), spec.action)
}

// decisionGate is what decideRun's checks of the decider say of actor deciding st, the pause
// of run, as k (an approval, a submission): the role matrix (mayDecide), then four-eyes when
// k's spec asks for it (selfApproval) and the decider tool gate (gate) against reg and the
// tools cfg offers, each refusal in decideRun's order. The run page shows it (Get, viewerGate).
func decisionGate(actor runtime.Actor, run runtime.Run, cfg runtime.Configuration, st runtime.PauseState, reg *tool.Registry, k decisionKind) runtime.DecisionGate {
	spec := k.spec()
	if e := mayDecide(actor, spec, run); e != nil {
		return runtime.DecisionGate{Access: e}
	}
	var g runtime.DecisionGate
	if e := selfApproval(cfg, actor, run); spec.fourEyes && e != nil {
		g.Refusals = append(g.Refusals, e)
	}
	if e := assignedElsewhere(cfg, actor, run); e != nil {
		g.Refusals = append(g.Refusals, e)
	}
	if rule, gated := k.gate(runtime.SuspendedState{PauseState: st}, reg); gated {
		g.Refusals = append(g.Refusals, gate(actor, run.UUID, rule, reg, offeredSet(cfg, reg))...)
	}
	return g
}

// selfApproval is the four-eyes rule: under cfg's RequireSecondApprover the run's initiator
// may not approve (SelfApprovalDenied); nil when actor may.
func selfApproval(cfg runtime.Configuration, actor runtime.Actor, run runtime.Run) *runtime.Error {
	if cfg.RequireSecondApprover && actor.MayHaveStarted(run) {
		return newError(runtime.CodeSelfApprovalDenied, run.UUID, "this configuration requires a second person: the run's initiator may deny but not approve it")
	}
	return nil
}

// assignedElsewhere is the strict assignment rule: under cfg's `assignment: {strict: true}` a
// run assigned to someone is decided by its assignee only (AssignedToOther); nil when actor
// may, and always for the expirer and standing approvals.
func assignedElsewhere(cfg runtime.Configuration, actor runtime.Actor, run runtime.Run) *runtime.Error {
	holder := run.Assigned()
	if !cfg.Assignment.Strict || holder == 0 || holder == actor.UserUID || actor.Role == runtime.RoleSystem || actor.Role == runtime.RoleRule {
		return nil
	}
	return newError(runtime.CodeAssignedToOther, run.UUID, "the run is assigned to %s, and only the assignee may decide it (assignment: {strict: true})", run.AssigneeName)
}

func staleError(spec kindSpec, uuid string) *runtime.Error {
	return newError(spec.stale, uuid, "the pending action changed since it was reviewed; please re-review")
}

// gate is the decider tool gate (docs/state-machine.md) by rule: a disabled decider is
// refused; a service account or a standing approval is refused when the rule says so; then
// every tool of the rule must be registered, still offered and, when admin-only, decided by
// an admin or a standing approval (applied with the CLI, an admin's power); a service account
// reaching a tool, which the rule lists only when it declares a write, is refused. It returns
// every refusal (rule.tools are distinct), the one a decision gets first (none: the decider
// passes), each with its governance row (tool_denied, the tool and the reason; see
// describeGateDenial).
func gate(actor runtime.Actor, uuid string, rule gateRule, reg *tool.Registry, offered map[string]bool) []*runtime.Error {
	var out []*runtime.Error
	refuse := func(tool, reason, format string, args ...any) {
		e := newError(rule.code, uuid, format, args...)
		e.GateDenial = gateDenial(rule.decider, tool, reason)
		out = append(out, e)
	}
	switch {
	case actor.Disabled:
		refuse("", runtime.ReasonDeciderDisabled, "%s is disabled", actorLabel(actor))
	case rule.noService != "" && actor.Role == runtime.RoleService:
		refuse("", rule.noService, "%s", rule.noServiceText)
	case rule.noRule != "" && actor.Role == runtime.RoleRule:
		refuse("", rule.noRule, "%s", rule.noRuleText)
	}
	if len(out) > 0 {
		return out
	}
	for _, name := range rule.tools {
		t, known := reg.Get(name)
		switch {
		case actor.Role == runtime.RoleService:
			refuse(name, runtime.ReasonServiceAccountWrite, "a service account may not approve a turn that declares a write (tool %q)", name)
		case !known:
			refuse(name, runtime.ReasonToolNotRegistered, "tool %q is not registered", name)
		case !offered[name]:
			refuse(name, runtime.ReasonToolNoLongerPermitted, "tool %q is no longer enabled for this configuration", name)
		case tool.IsAdminOnly(t) && actor.Role != runtime.RoleAdmin && actor.Role != runtime.RoleRule:
			refuse(name, runtime.ReasonToolAdminOnly, "tool %q is admin-only", name)
		}
	}
	return out
}

func actorLabel(a runtime.Actor) string {
	if a.Name != "" {
		return fmt.Sprintf("%s %q", a.Role, a.Name)
	}
	return string(a.Role)
}

func randomKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "auto-" + hex.EncodeToString(b[:])
}
