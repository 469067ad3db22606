package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"runsdesk/runtime"
)

// The outcome label of an accepted input (or elicitation) decision, and the audit outcomes
// of a refused one.
const (
	outcomeSubmitted = "submitted"
	auditFailure     = "failure"
	auditDenied      = "denied"
)

// decisionAttempt is one decision attempt as the pipeline (decide) finished it, after its
// retries: who asked, on which run, the kind's spec, how it ended and, when it decided its
// pause, how long the pause waited. Each of the runtime's decision observers is told of it
// once.
type decisionAttempt struct {
	actor  runtime.Actor
	uuid   string
	spec   kindSpec
	out    runtime.Outcome
	err    error
	waited *pauseWait
}

// accepted reports whether the attempt was newly accepted: neither refused nor replayed.
func (a decisionAttempt) accepted() bool { return a.err == nil && !a.out.Replayed }

// lost reports whether the attempt is an automatic one (a standing approval, an expiry, the
// desk's answer to an expired request for input) that was refused or replayed: it lost to a
// decision or process that came first, which the expirer reports as skipped and the decider
// gate as its governance row. No observer counts or audits it.
func (a decisionAttempt) lost() bool {
	role := a.actor.Role
	automatic := role == runtime.RoleRule || role == runtime.RoleSystem || role == runtime.RoleDesk
	return automatic && !a.accepted()
}

// outcome is the attempt's outcome label: the kind's accepted label, or runtime.NotAccepted's
// word.
func (a decisionAttempt) outcome() string {
	if a.accepted() {
		return a.spec.accepted
	}
	return runtime.NotAccepted(a.out, a.err)
}

// decisionObserver is told of every decision attempt the pipeline finishes, of every kind
// and decider.
type decisionObserver interface {
	observeAttempt(ctx context.Context, a decisionAttempt)
}

// newDecisionObservers are the observers of the decision pipeline: the metrics of obs (none
// when nil) and the audit rows written to audits.
func newDecisionObservers(obs Observer, audits runtime.Audits, now func() time.Time, log *slog.Logger) []decisionObserver {
	out := []decisionObserver{decisionAudit{audits: audits, now: now, log: log}}
	if obs != nil {
		out = append(out, decisionMetrics{obs})
	}
	return out
}

// observeAttempt tells each decision observer of a.
func (r *Runtime) observeAttempt(ctx context.Context, a decisionAttempt) {
	for _, o := range r.decisionObservers {
		o.observeAttempt(ctx, a)
	}
}

// decisionMetrics counts every attempt in runsdesk_decisions_total{kind,outcome}
// (Observer.ObserveDecision) and records the time to decision of each pause one decided
// (Observer.ObserveTimeToDecision); a lost automatic attempt is not counted.
type decisionMetrics struct{ obs Observer }

func (m decisionMetrics) observeAttempt(_ context.Context, a decisionAttempt) {
	if a.lost() {
		return
	}
	m.obs.ObserveDecision(a.spec.counted, a.outcome())
	m.observeWait(a.waited)
}

// observeWait records w, a decided pause's wait (nil: none).
func (m decisionMetrics) observeWait(w *pauseWait) {
	if w != nil {
		m.obs.ObserveTimeToDecision(w.kind, w.configuration, w.decidedBy, w.seconds)
	}
}

// decisionAudit writes the audit row of every attempt refused or replayed that its caller
// asked to audit (kindSpec.audit), as the kind shapes it (kindSpec.refusalAudit); an
// accepted attempt's row commits with its claim, and a lost automatic attempt has none. A
// failed write is logged: the attempt's own outcome stands.
type decisionAudit struct {
	audits runtime.Audits
	now    func() time.Time
	log    *slog.Logger
}

func (d decisionAudit) observeAttempt(ctx context.Context, a decisionAttempt) {
	if a.accepted() || a.lost() || a.spec.audit == nil || a.spec.refusalAudit == nil {
		return
	}
	note, ok := a.spec.refusalAudit(*a.spec.audit, a.out, a.err)
	if !ok {
		return
	}
	if err := d.audits.AppendAudit(ctx, a.uuid, d.now().Unix(), runtime.AuditRecord{Actor: a.actor, AuditNote: note}); err != nil {
		d.log.ErrorContext(ctx, "audit write failed", "run", a.uuid, "action", note.Action, "err", err)
	}
}

// approvalRefusal is the audit row of an approval (or a request for changes) refused or
// replayed: the caller's note n with runtime.NotAccepted's word for outcome.
func approvalRefusal(n runtime.AuditNote, out runtime.Outcome, err error) (runtime.AuditNote, bool) {
	n.Outcome = runtime.NotAccepted(out, err)
	return n, true
}

// inputRefusal is the audit row of a submission (or an answer to a server's request for
// input) refused or replayed, from the caller's note n: a replay keeps n's outcome with
// reason "replayed"; a refusal is "denied" when it refuses who asks (Code.DeniesAsker), else
// "failure", its reason the code, "invalid input: N field(s)" for values the schema refused
// or "input schema not renderable". A refusal that says nothing of the run (not found, an
// invalid request, the store unavailable) and a failure that is no refusal write no row.
func inputRefusal(n runtime.AuditNote, _ runtime.Outcome, err error) (runtime.AuditNote, bool) {
	var re *runtime.Error
	switch {
	case err == nil:
		n.Reason = "replayed"
		return n, true
	case !errors.As(err, &re):
		return n, false
	}
	n.Outcome, n.Reason = auditFailure, string(re.Code)
	switch {
	case re.Code == runtime.CodeRunNotFound, re.Code == runtime.CodeInvalidRequest, re.Code == runtime.CodeRunStateUnavailable:
		return n, false
	case re.Code.DeniesAsker():
		n.Outcome = auditDenied
	case re.Code == runtime.CodeInvalidInputSubmission:
		n.Reason = fmt.Sprintf("invalid input: %d field(s)", len(re.Fields))
	case errors.Is(re, runtime.ErrNoInputForm):
		n.Reason = "input schema not renderable"
	}
	return n, true
}
