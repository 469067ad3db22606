package runtime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
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

// decision is what approve and submitInput have in common; the differences are data.
type decision struct {
	kind        string
	from        Status
	action      Action
	notAwaiting Code
	stale       Code
	key         string
	digest      string
	approved    bool
	data        map[string]any
	form        url.Values
	audit       *AuditNote
}

func (d decision) digestOf(st PauseState) string {
	if d.kind == contInput {
		return schema.InputDigest(st.PendingCalls, st.InputTool(), st.InputSchema)
	}
	return schema.ApprovalDigest(st.PendingCalls)
}

func (d decision) staleError(uuid string) *Error {
	return newError(d.stale, uuid, "the pending action changed since it was reviewed; please re-review")
}

// decide is the shared order of an approval and an input submission: load; access;
// then decideRun. A refused request whose idempotency key matches a decision already
// accepted for this run gets that first outcome instead (a replay), so the key is looked up
// only when something refuses: the first use of a key costs no lookup, and a reused key
// can never claim twice (the decision's unique key refuses it in the claim). A refusal by the
// tool gate that stands writes its governance row.
func (r *Runtime) decide(ctx context.Context, actor Actor, uuid string, d decision) (Outcome, error) {
	run, e := r.loadRun(ctx, uuid)
	if e != nil {
		return Outcome{}, e
	}
	if !visible(actor, d.action, run) {
		return Outcome{}, newError(CodeRunNotFound, uuid, "no such run")
	}
	switch {
	case len(d.key) > MaxIdempotencyKey:
		return Outcome{}, newError(CodeInvalidRequest, uuid, "the idempotency key is longer than %d characters", MaxIdempotencyKey)
	case !utf8.ValidString(d.key):
		return Outcome{}, newError(CodeInvalidRequest, uuid, "the idempotency key is not valid UTF-8")
	}
	out, err := r.decideRun(ctx, actor, run, d)
	var re *Error
	if err == nil || !errors.As(err, &re) || re.Code == CodeRunStateUnavailable {
		return out, err
	}
	if prior, ok, rerr := r.replay(ctx, run, d.key); rerr != nil || ok {
		return prior, rerr
	}
	r.recordGateDenial(ctx, re)
	return out, err
}

// decideRun checks d against run as read: status; access; configuration; four-eyes; rehydrate;
// (input) coerce a posted form and validate; digest; decider gate. Then one transaction claims
// the pause exactly as read (so every check holds for the claimed row) and records the
// decision and its event. A refusal at any point leaves the run unchanged.
func (r *Runtime) decideRun(ctx context.Context, actor Actor, run Run, d decision) (Outcome, error) {
	uuid := run.UUID
	if run.Status != d.from {
		return Outcome{}, r.notAwaiting(ctx, run, d)
	}
	if !MayAct(actor, d.action, run) {
		return Outcome{}, newError(CodeRunAccessDenied, uuid, "%s may not %s this run", actorLabel(actor), d.action)
	}
	cfg, err := r.catalog.ConfigurationByUID(ctx, run.ConfigurationUID)
	if errors.Is(err, ErrNotFound) {
		return Outcome{}, newError(CodeRunConfigurationGone, uuid, "the run's configuration no longer exists")
	}
	if err != nil {
		return Outcome{}, storeError(uuid, err)
	}
	if d.kind == contApproval && d.approved && cfg.RequireSecondApprover && actor.UserUID > 0 && actor.UserUID == run.BeUser {
		return Outcome{}, newError(CodeSelfApprovalDenied, uuid, "this configuration requires a second person: the run's initiator may deny but not approve it")
	}
	st, e := rehydrate(run, d.kind)
	if e != nil {
		return Outcome{}, e
	}
	digest := d.digestOf(st.PauseState)
	h := &handoff{cfg: cfg, state: st}
	if d.kind == contInput {
		if d.data, h.input, e = r.inputData(uuid, st, d, digest); e != nil {
			return Outcome{}, e
		}
		if err := r.hook(HookAfterValidation, run.UID); err != nil {
			return Outcome{}, storeError(uuid, err)
		}
	}
	if !schema.DigestEqual(d.digest, digest) {
		return Outcome{}, d.staleError(uuid)
	}
	if h.reg, err = r.toolset(ctx); err != nil {
		return Outcome{}, storeError(uuid, err)
	}
	if e := gate(actor, uuid, d, st, h.reg, offeredSet(cfg, h.reg)); e != nil {
		r.describeGateDenial(e.governance, actor, run, cfg)
		return Outcome{}, e
	}
	return r.claim(ctx, actor, run, d, h)
}

// claim claims the pause run (as read and checked) for d's continuation, then dispatches the
// continuation with h completed by the claimed run.
func (r *Runtime) claim(ctx context.Context, actor Actor, run Run, d decision, h *handoff) (Outcome, error) {
	key := d.key
	if key == "" {
		key = randomKey()
	}
	svc := actor.ServiceName()
	cont := continuation{Kind: d.kind, Approved: d.approved, Data: d.data, DecidedBy: actor.UserUID}
	enc, err := cont.encode()
	if err != nil {
		return Outcome{}, storeError(run.UUID, err)
	}
	payload := map[string]any{"submittedBy": actor.UserUID}
	if d.kind == contApproval {
		payload = map[string]any{"approved": d.approved, "decidedBy": actor.UserUID}
		if svc != "" {
			payload["decidedByService"] = svc
		}
	}
	lease := r.newLease("resume")
	dec := Decision{Run: run.UID, IdempotencyKey: key, Kind: d.kind, Approved: d.approved, DecidedBy: actor.UserUID,
		DecidedByService: svc, Crdate: lease.Now}
	c := ResumeClaim{
		Read: run, Lease: lease, Continuation: enc, Decision: dec,
		Event: NewEvent{Run: run.UID, Kind: d.kind, Payload: mustJSON(payload), Now: lease.Now},
	}
	if d.audit != nil {
		c.Audit = &AuditRecord{Actor: actor, AuditNote: *d.audit}
	}
	claimed, _, err := r.store.ClaimForResume(ctx, c)
	switch {
	case errors.Is(err, ErrGuard):
		return Outcome{}, r.lostClaim(ctx, run, d)
	case errors.Is(err, ErrEventNotRecorded) && d.kind == contApproval && d.approved:
		return Outcome{}, &Error{Code: CodeApprovalNotAuditable, RunUUID: run.UUID, Message: "the approval could not be recorded, so it was not applied", Err: err}
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
func (r *Runtime) lostClaim(ctx context.Context, read Run, d decision) error {
	now, err := r.store.FindByUID(ctx, read.UID)
	switch {
	case err != nil:
		return r.alreadyResuming(ctx, read)
	case now.Status == d.from:
		return d.staleError(read.UUID)
	default:
		return r.notAwaiting(ctx, now, d)
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

func (r *Runtime) notAwaiting(ctx context.Context, run Run, d decision) error {
	if dec, err := r.store.LatestDecision(ctx, run.UID); err == nil && dec.Kind == d.kind && !run.Status.Waiting() {
		return &Error{Code: CodeRunAlreadyResuming, RunUUID: run.UUID, DecidedBy: dec.DecidedBy, DecidedAt: dec.Crdate,
			Message: "this run was already handled"}
	}
	return newError(d.notAwaiting, run.UUID, "the run is %s", run.Status)
}

func (r *Runtime) alreadyResuming(ctx context.Context, run Run) error {
	e := &Error{Code: CodeRunAlreadyResuming, RunUUID: run.UUID, Message: "someone else already handled this run"}
	if dec, err := r.store.LatestDecision(ctx, run.UID); err == nil {
		e.DecidedBy, e.DecidedAt = dec.DecidedBy, dec.Crdate
	}
	return e
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

// inputData returns the data d's continuation carries and the compiled schema it was
// validated against: d.data as given, or d.form coerced. A schema that does not compile is a
// corrupt state (rehydrate refused an unusable one). A form is checked against digest (the
// pause's, as read) before its values, so a stale form is stale whatever it holds.
func (r *Runtime) inputData(uuid string, st SuspendedState, d decision, digest string) (map[string]any, *schema.Schema, *Error) {
	sch, err := r.schemas.Compile(st.InputSchema)
	if err != nil {
		return nil, nil, &Error{Code: CodeCorruptSuspendedState, RunUUID: uuid, Message: "the stored input schema does not compile",
			Err: fmt.Errorf("%w: %w", ErrNoInputForm, err)}
	}
	if d.form == nil {
		data := d.data
		if data == nil {
			data = map[string]any{}
		}
		return d.data, sch, invalidInput(uuid, sch.Validate(data))
	}
	if !schema.DigestEqual(d.digest, digest) {
		return nil, nil, d.staleError(uuid)
	}
	if !sch.HasForm() {
		return nil, nil, &Error{Code: CodeCorruptSuspendedState, RunUUID: uuid, Message: "the stored input schema yields no form field", Err: ErrNoInputForm}
	}
	data, errs := sch.CoerceAndValidate(d.form)
	return data, sch, invalidInput(uuid, errs)
}

func unusableSchema(uuid string) *Error {
	return newError(CodeCorruptSuspendedState, uuid, "the stored input schema is not usable")
}

// invalidInput is the InvalidInputSubmission error of errs, nil when there are none.
func invalidInput(uuid string, errs []schema.FieldError) *Error {
	if len(errs) == 0 {
		return nil
	}
	return &Error{Code: CodeInvalidInputSubmission, RunUUID: uuid, Fields: errs,
		Message: fmt.Sprintf("the submitted input did not match the required schema (%d field(s))", len(errs))}
}

// gate is the decider tool gate (docs/state-machine.md): approvals check every call declaring a
// write (an unknown tool counts as one); submissions check every pending call and the
// input target. Service accounts never submit and never approve a write. A refusal carries
// its governance row (tool_denied, the tool and the reason; see describeGateDenial).
func gate(actor Actor, uuid string, d decision, st SuspendedState, reg *tool.Registry, offered map[string]bool) *Error {
	code, kind := CodeSubmitterNotPermitted, "submitter"
	if d.kind == contApproval {
		if !d.approved {
			return nil
		}
		code, kind = CodeApproverNotPermitted, "approver"
	}
	refuse := func(tool, reason, format string, args ...any) *Error {
		e := newError(code, uuid, format, args...)
		e.governance = gateDenial(kind, tool, reason)
		return e
	}
	if actor.Disabled {
		return refuse("", ReasonDeciderDisabled, "%s is disabled", actorLabel(actor))
	}
	if d.kind == contInput && actor.Role == RoleService {
		return refuse("", ReasonServiceAccountSubmit, "a service account may not submit input; a person must")
	}
	names := st.toolNames()
	if d.kind == contInput {
		names = append(names, st.InputTool())
	}
	for _, name := range names {
		t, known := reg.Get(name)
		if d.kind == contApproval && known && !tool.EffectOf(t).IsWrite() {
			continue
		}
		switch {
		case d.kind == contApproval && actor.Role == RoleService:
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
