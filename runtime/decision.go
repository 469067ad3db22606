package runtime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"unicode/utf8"

	"runsdesk/runtime/schema"
	"runsdesk/runtime/tool"
)

// MaxIdempotencyKey bounds the length of a caller's idempotency key.
const MaxIdempotencyKey = 64

// Outcome is what an accepted decision or submission returns. Replayed is set when the
// idempotency key matched an earlier accepted request; Decision is that first decision.
type Outcome struct {
	RunUUID  string
	Decision Decision
	Replayed bool
}

// decisionKind is one kind of decision on a waiting run (ApprovalDecision, InputSubmission).
// decide runs the steps every kind shares; a kind supplies only what differs: what it is
// (spec), its own checks of the stored pause (prepare), the decider gate's rule (gate), what
// its event records (event) and how its continuation answers the pending calls (answer). A
// new kind is a type implementing it, added to decisionKinds.
type decisionKind interface {
	// spec describes the kind and this decision's caller-supplied fields.
	spec() kindSpec
	// prepare checks the decision against the pause d holds as read, before the digest check,
	// and leaves in d what its continuation carries (d.data, d.input).
	prepare(ctx context.Context, r *Runtime, d *decision) *Error
	// gate is the decider tool gate's rule for this decision; ok is false when it is not gated.
	gate(st SuspendedState, reg *tool.Registry) (rule gateRule, ok bool)
	// event is the payload of the event an accepted decision records (never submitted values).
	event(d *decision) map[string]any
	// answer plans how a continuation c of this kind answers each pending call of st when the
	// run resumes; validated is the schema its data was checked against by the decision (nil:
	// check again). An error fails the run as policy_denied with spec().resumeFailure.
	answer(s *segment, st SuspendedState, c continuation, validated *schema.Schema) (func(PendingCall) planStep, error)
}

// decisionKinds registers every kind, by the name its decisions, events and continuations
// store.
func decisionKinds() []decisionKind {
	return []decisionKind{ApprovalDecision{}, InputSubmission{}}
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
	waitsIn Status
	action  Action
	// notAwaiting and stale are its refusals of a run not waiting in waitsIn, and of a digest
	// that is not the pause's.
	notAwaiting, stale Code
	// key, digest, approved and audit are the caller's idempotency key, turn digest, verdict
	// (false but for an approval) and audit note.
	key, digest string
	approved    bool
	audit       *AuditNote
	// fourEyes: under RequireSecondApprover the run's initiator may not make this decision.
	fourEyes bool
	// unrecorded is the refusal when the claim's event cannot be written.
	unrecorded Code
	// resumeFailure is the error class of a run whose continuation no longer holds at resume.
	resumeFailure string
}

// decision is one decision on its way through decide: the kind, who decides, the run and
// what the steps found.
type decision struct {
	kind  decisionKind
	spec  kindSpec
	actor Actor
	run   Run
	cfg   Configuration
	state SuspendedState
	// digest is the pause's digest as read.
	digest string
	// data and input are what prepare leaves: the data the continuation carries and the
	// compiled schema it was validated against.
	data  map[string]any
	input *schema.Schema
}

// gateRule is how the decider tool gate checks a decision: the refusal's code and governance
// gate ("approver", "submitter"), the tools the decider must be allowed to use, and, when
// set, the reason (and the refusal's words) why a service account may not make it at all.
type gateRule struct {
	code          Code
	decider       string
	tools         []string
	noService     string
	noServiceText string
}

// pauseDigest is the digest a decision on p must echo: of its pending calls and, for an
// input pause, its target tool and schema.
func pauseDigest(p PauseState) string {
	if p.IsInputPause() {
		return schema.InputDigest(p.PendingCalls, p.InputTool(), p.InputSchema)
	}
	return schema.ApprovalDigest(p.PendingCalls)
}

// decide is the shared order of every decision: load; access; then decideRun. A refused
// request whose idempotency key matches a decision already accepted for this run gets that
// first outcome instead (a replay), so the key is looked up only when something refuses: the
// first use of a key costs no lookup, and a reused key can never claim twice (the decision's
// unique key refuses it in the claim). A refusal by the tool gate that stands writes its
// governance row.
func (r *Runtime) decide(ctx context.Context, actor Actor, uuid string, k decisionKind) (Outcome, error) {
	spec := k.spec()
	run, e := r.loadRun(ctx, uuid)
	if e != nil {
		return Outcome{}, e
	}
	if !visible(actor, spec.action, run) {
		return Outcome{}, newError(CodeRunNotFound, uuid, "no such run")
	}
	switch {
	case len(spec.key) > MaxIdempotencyKey:
		return Outcome{}, newError(CodeInvalidRequest, uuid, "the idempotency key is longer than %d characters", MaxIdempotencyKey)
	case !utf8.ValidString(spec.key):
		return Outcome{}, newError(CodeInvalidRequest, uuid, "the idempotency key is not valid UTF-8")
	}
	d := &decision{kind: k, spec: spec, actor: actor, run: run}
	out, err := r.decideRun(ctx, d)
	var re *Error
	if err == nil || !errors.As(err, &re) || re.Code == CodeRunStateUnavailable {
		return out, err
	}
	if prior, ok, rerr := r.replay(ctx, run, spec.key); rerr != nil || ok {
		return prior, rerr
	}
	r.recordGateDenial(ctx, re)
	return out, err
}

// decideRun checks d against its run as read: status; access; configuration; four-eyes;
// rehydrate; the kind's own checks; digest; decider gate. Then one transaction claims the
// pause exactly as read (so every check holds for the claimed row) and records the decision
// and its event. A refusal at any point leaves the run unchanged.
func (r *Runtime) decideRun(ctx context.Context, d *decision) (Outcome, error) {
	run, spec, actor := d.run, d.spec, d.actor
	uuid := run.UUID
	if run.Status != spec.waitsIn {
		return Outcome{}, r.notAwaiting(ctx, run, spec)
	}
	if !MayAct(actor, spec.action, run) {
		return Outcome{}, newError(CodeRunAccessDenied, uuid, "%s may not %s this run", actorLabel(actor), spec.action)
	}
	cfg, err := r.catalog.ConfigurationByUID(ctx, run.ConfigurationUID)
	if errors.Is(err, ErrNotFound) {
		return Outcome{}, newError(CodeRunConfigurationGone, uuid, "the run's configuration no longer exists")
	}
	if err != nil {
		return Outcome{}, storeError(uuid, err)
	}
	if spec.fourEyes && cfg.RequireSecondApprover && actor.UserUID > 0 && actor.UserUID == run.BeUser {
		return Outcome{}, newError(CodeSelfApprovalDenied, uuid, "this configuration requires a second person: the run's initiator may deny but not approve it")
	}
	d.cfg = cfg
	var e *Error
	if d.state, e = rehydrate(run, pauseKind(spec.waitsIn)); e != nil {
		return Outcome{}, e
	}
	d.digest = pauseDigest(d.state.PauseState)
	if e := d.kind.prepare(ctx, r, d); e != nil {
		return Outcome{}, e
	}
	if !schema.DigestEqual(spec.digest, d.digest) {
		return Outcome{}, staleError(spec, uuid)
	}
	reg, err := r.toolset(ctx)
	if err != nil {
		return Outcome{}, storeError(uuid, err)
	}
	if rule, gated := d.kind.gate(d.state, reg); gated {
		if e := gate(actor, uuid, rule, reg, offeredSet(cfg, reg)); e != nil {
			r.describeGateDenial(e.governance, actor, run, cfg)
			return Outcome{}, e
		}
	}
	return r.claim(ctx, d, &handoff{cfg: cfg, state: d.state, reg: reg, input: d.input})
}

// claim claims the pause d read (and checked) for its continuation, recording the decision,
// its event and its audit row in the claim's transaction, then dispatches the continuation
// with h completed by the claimed run.
func (r *Runtime) claim(ctx context.Context, d *decision, h *handoff) (Outcome, error) {
	run, spec, actor := d.run, d.spec, d.actor
	key := spec.key
	if key == "" {
		key = randomKey()
	}
	cont := continuation{Kind: spec.name, Approved: spec.approved, Data: d.data, DecidedBy: actor.UserUID}
	enc, err := cont.encode()
	if err != nil {
		return Outcome{}, storeError(run.UUID, err)
	}
	lease := r.newLease("resume")
	dec := Decision{Run: run.UID, IdempotencyKey: key, Kind: spec.name, Approved: spec.approved, DecidedBy: actor.UserUID,
		DecidedByService: actor.ServiceName(), Crdate: lease.Now}
	c := ResumeClaim{
		Read: run, Lease: lease, Continuation: enc, Decision: dec,
		Event: NewEvent{Run: run.UID, Kind: spec.name, Payload: mustJSON(d.kind.event(d)), Now: lease.Now},
	}
	if spec.audit != nil {
		c.Audit = &AuditRecord{Actor: actor, AuditNote: *spec.audit}
	}
	claimed, _, err := r.store.ClaimForResume(ctx, c)
	switch {
	case errors.Is(err, ErrGuard):
		return Outcome{}, r.lostClaim(ctx, run, spec)
	case errors.Is(err, ErrEventNotRecorded) && spec.unrecorded != CodeRunStateUnavailable:
		return Outcome{}, &Error{Code: spec.unrecorded, RunUUID: run.UUID, Message: fmt.Sprintf("the %s could not be recorded, so it was not applied", spec.name), Err: err}
	case err != nil:
		return Outcome{}, storeError(run.UUID, err)
	}
	out := Outcome{RunUUID: run.UUID, Decision: dec}
	if err := r.hook(HookAfterClaim, run.UID); err != nil {
		return out, nil
	}
	h.run = claimed
	r.dispatch(run.UID, lease, h)
	return out, nil
}

// lostClaim explains a claim its guard refused, from the run as it is now: paused again with
// another state (stale), or claimed or finished by someone else.
func (r *Runtime) lostClaim(ctx context.Context, read Run, spec kindSpec) error {
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

// replay returns the first outcome when key matches an accepted decision of this run.
func (r *Runtime) replay(ctx context.Context, run Run, key string) (Outcome, bool, error) {
	if key == "" {
		return Outcome{}, false, nil
	}
	dec, err := r.store.FindDecision(ctx, run.UID, key)
	if errors.Is(err, ErrNotFound) {
		return Outcome{}, false, nil
	}
	if err != nil {
		return Outcome{}, false, storeError(run.UUID, err)
	}
	return Outcome{RunUUID: run.UUID, Decision: dec, Replayed: true}, true, nil
}

// notAwaiting refuses a decision on run, which does not wait in spec.waitsIn: already
// handled when its latest decision is of this kind and it no longer waits, else not awaiting.
func (r *Runtime) notAwaiting(ctx context.Context, run Run, spec kindSpec) error {
	if dec, err := r.store.LatestDecision(ctx, run.UID); err == nil && dec.Kind == spec.name && !run.Status.Waiting() {
		return &Error{Code: CodeRunAlreadyResuming, RunUUID: run.UUID, DecidedBy: dec.DecidedBy, DecidedAt: dec.Crdate,
			Message: "this run was already handled"}
	}
	return newError(spec.notAwaiting, run.UUID, "the run is %s", run.Status)
}

func (r *Runtime) alreadyResuming(ctx context.Context, run Run) error {
	e := &Error{Code: CodeRunAlreadyResuming, RunUUID: run.UUID, Message: "someone else already handled this run"}
	if dec, err := r.store.LatestDecision(ctx, run.UID); err == nil {
		e.DecidedBy, e.DecidedAt = dec.DecidedBy, dec.Crdate
	}
	return e
}

func staleError(spec kindSpec, uuid string) *Error {
	return newError(spec.stale, uuid, "the pending action changed since it was reviewed; please re-review")
}

// rehydrate turns run's stored state into the pause it resumes as kind (contApproval or
// contInput): decoded whole and checked to be that pause, an input pause with a usable schema
// (PauseState.fits with schema.Usable). It is the one way a stored state becomes runnable:
// decisions, the run page and the API (Get) and a continuation a worker takes from the queue
// all go through it. A state it refuses is corrupt (CodeCorruptSuspendedState).
func rehydrate(run Run, kind string) (SuspendedState, *Error) {
	st, err := DecodeState(run.SuspendedState)
	if err != nil {
		return st, unreadableState(run, err)
	}
	return st, st.fits(run, kind, schema.Usable)
}

// gate is the decider tool gate (docs/state-machine.md) by rule: a disabled decider is
// refused; a service account is refused when the rule says so; then every tool of the rule
// must be registered, still offered and, when admin-only, decided by an admin (a service
// account reaching a tool, which the rule lists only when it declares a write, is refused).
// A refusal carries its governance row (tool_denied, the tool and the reason; see
// describeGateDenial).
func gate(actor Actor, uuid string, rule gateRule, reg *tool.Registry, offered map[string]bool) *Error {
	refuse := func(tool, reason, format string, args ...any) *Error {
		e := newError(rule.code, uuid, format, args...)
		e.governance = gateDenial(rule.decider, tool, reason)
		return e
	}
	if actor.Disabled {
		return refuse("", ReasonDeciderDisabled, "%s is disabled", actorLabel(actor))
	}
	if rule.noService != "" && actor.Role == RoleService {
		return refuse("", rule.noService, "%s", rule.noServiceText)
	}
	for _, name := range rule.tools {
		t, known := reg.Get(name)
		switch {
		case actor.Role == RoleService:
			return refuse(name, ReasonServiceAccountWrite, "a service account may not approve a turn that declares a write (tool %q)", name)
		case !known:
			return refuse(name, ReasonToolNotRegistered, "tool %q is not registered", name)
		case !offered[name]:
			return refuse(name, ReasonToolNoLongerPermitted, "tool %q is no longer enabled for this configuration", name)
		case tool.IsAdminOnly(t) && actor.Role != RoleAdmin:
			return refuse(name, ReasonToolAdminOnly, "tool %q is admin-only", name)
		}
	}
	return nil
}

func actorLabel(a Actor) string {
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
