package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/tool"
	"runsdesk/runtime/wait"
)

// DefaultExpireInterval is how often each process looks for due pauses (--expire-interval).
const DefaultExpireInterval = 15 * time.Second

// expireBatch bounds the due pauses one expirer pass handles.
const expireBatch = 100

// Observer counts decisions, what the runtime does on its own and how long pauses wait for
// their decisions; *metrics.Metrics implements it.
type Observer interface {
	// ObserveDecision counts one decision attempt by kind (approval, input, expiry,
	// elicitation_expiry) and outcome (decisionMetrics).
	ObserveDecision(kind, outcome string)
	// ObserveExpiry counts one expiry by its action (deny, answer, cancel).
	ObserveExpiry(action string)
	// ObserveReminder counts one reminder recorded.
	ObserveReminder()
	// ObserveEscalation counts one pause escalated.
	ObserveEscalation()
	// ObserveTimeToDecision records that a pause of kind (approval, input, elicitation) of
	// configuration waited seconds for its decision by decidedBy (person, service, rule,
	// expiry).
	ObserveTimeToDecision(kind, configuration, decidedBy string, seconds float64)
}

// ExpireReport counts what one expirer pass did.
type ExpireReport struct {
	Reminded  int
	Escalated int
	Expired   int
	// Elicitations counts remote servers' requests for input answered cancel on their expiry.
	Elicitations int
	// Skipped counts steps another process (or a decision) took first.
	Skipped int
}

// Expire takes, for up to limit waiting runs whose next deadline step is due, the steps due
// now, in order (docs/state-machine.md): a remote server's expired request for input, unless
// the pause's own expiry is due too, is answered cancel (ExpireElicitation) and ends the
// pause; else the reminder (RemindPause), the escalation (EscalatePause), the expiry: deny
// or answer as a decision of kind expiry through the one decision pipeline, cancel as
// ExpirePause. Every step is a guarded transition on the pause as read, so across processes
// each is taken once; a step that lost its guard (another expirer, a person's decision, a
// cancel) counts as skipped. A stored deadline that does not decode is logged and left alone,
// never guessed.
func (r *Runtime) Expire(ctx context.Context, limit int) (ExpireReport, error) {
	var rep ExpireReport
	if limit < 1 {
		return rep, fmt.Errorf("expire limit must be at least 1, got %d", limit)
	}
	now := r.unix()
	due, err := r.store.FindDue(ctx, now, limit)
	if err != nil {
		return rep, fmt.Errorf("find due pauses: %w", err)
	}
	for _, run := range due {
		if err := r.expireRun(ctx, run, now, &rep); err != nil {
			return rep, fmt.Errorf("expire run %s: %w", run.UUID, err)
		}
	}
	return rep, nil
}

// expireRun takes the steps of run's deadline that are due at now.
func (r *Runtime) expireRun(ctx context.Context, run runtime.Run, now int64, rep *ExpireReport) error {
	if elicitationDue(run, now) {
		_, err := r.ExpireElicitation(ctx, run.UUID)
		if done, err := r.stepped(err, rep, &rep.Elicitations); !done {
			return err
		}
		r.log.Info("expired request for input answered cancel", "run", run.UUID)
		return nil
	}
	dl, err := wait.DecodeDeadline(run.WaitPolicy)
	if err != nil {
		r.log.Error("stored wait deadline is corrupt; the pause is left waiting", "run", run.UUID, "err", err)
		rep.Skipped++
		return nil
	}
	dl.ExpiresAt, dl.RemindAt, dl.EscalateAt = run.ExpiresAt, run.RemindAt, run.EscalateAt
	expiring := run.ExpiresAt > 0 && run.ExpiresAt <= now
	if run.RemindAt > 0 && run.RemindAt <= now && !expiring {
		dl.RemindAt = 0
		err := r.store.RemindPause(ctx, r.pauseStep(run, now, wait.Earliest(dl.Due(run.Escalated), run.ElicitationExpires), runtime.EventReminder, "reminder"))
		if done, err := r.stepped(err, rep, &rep.Reminded); !done {
			return err
		}
		r.observeReminder()
	}
	if dl.Action == wait.Escalate && !run.Escalated && run.EscalateAt > 0 && run.EscalateAt <= now {
		err := r.store.EscalatePause(ctx, r.pauseStep(run, now, wait.Earliest(dl.Due(true), run.ElicitationExpires), runtime.EventEscalation, "escalation"))
		if done, err := r.stepped(err, rep, &rep.Escalated); !done {
			return err
		}
		run.Escalated = true
		r.observeEscalation()
	}
	if !expiring {
		return nil
	}
	action := dl.Final(run.Escalated)
	err = r.expirePause(ctx, run, dl, action, now)
	if action == wait.Answer && errors.Is(err, runtime.ErrInvalidInputSubmission) {
		r.log.Warn("the configured expiry answer does not fit the pause; denying instead", "run", run.UUID)
		action = wait.Deny
		err = r.expirePause(ctx, run, dl, action, now)
	}
	if done, err := r.stepped(err, rep, &rep.Expired); !done {
		return err
	}
	r.observeExpiry(string(action))
	r.log.Info("pause expired", "run", run.UUID, "action", action)
	return nil
}

// elicitationDue reports whether run waits on a remote server's request for input that expired
// by now while the pause's own expiry is not yet due (that one decides the pause instead, and
// refuses every other decision as run_expired).
func elicitationDue(run runtime.Run, now int64) bool {
	return run.Status == runtime.StatusWaitingInput && run.ElicitationExpires > 0 && run.ElicitationExpires <= now &&
		(run.ExpiresAt == 0 || now < run.ExpiresAt)
}

// stepped sorts a step's outcome: taken (counted in n), lost to someone else (skipped, not
// done) or failed (the error, not done).
func (r *Runtime) stepped(err error, rep *ExpireReport, n *int) (bool, error) {
	var re *runtime.Error
	switch {
	case err == nil:
		*n++
		return true, nil
	case errors.Is(err, runtime.ErrGuard),
		errors.As(err, &re) && re.Code != runtime.CodeRunStateUnavailable:
		rep.Skipped++
		return false, nil
	}
	return false, err
}

// expirePause expires run with action: cancel by ExpirePause, deny or answer by a decision of
// kind expiry on the pause as read.
func (r *Runtime) expirePause(ctx context.Context, run runtime.Run, dl wait.Deadline, action wait.Action, now int64) error {
	actor := runtime.ExpiryActor()
	if action == wait.Cancel {
		st := r.pauseStep(run, now, 0, runtime.EventExpiry, string(wait.Cancel))
		st.Decision = &runtime.Decision{Run: run.UID, IdempotencyKey: expiryKey(action, run.SuspendedAt), Kind: contExpiry,
			DecidedByService: actor.ServiceName(), Crdate: now}
		if err := r.store.ExpirePause(ctx, st); err != nil {
			return err
		}
		state, _ := runtime.DecodeState(run.SuspendedState)
		if r.observer != nil {
			decisionMetrics{r.observer}.observeWait(r.waitOf(run, state.PauseState, actor, run.ConfigurationIdentifier))
		}
		return nil
	}
	state, err := runtime.DecodeState(run.SuspendedState)
	if err != nil {
		return unreadableState(run, err)
	}
	k := expiry{status: run.Status, digest: pauseDigest(state.PauseState), pause: run.SuspendedAt, action: action,
		reply: dl.Answer, now: now, note: denialNote(run, now)}
	out, err := r.decide(ctx, actor, run.UUID, k)
	if err == nil && out.Replayed {
		return runtime.ErrGuard
	}
	return err
}

// denialNote is the honest tool result of a denying expiry: how long the run waited and when
// it was denied.
func denialNote(run runtime.Run, now int64) string {
	waited := time.Duration(run.ExpiresAt-run.SuspendedAt) * time.Second
	return fmt.Sprintf("No decision within %s; denied automatically at %s.", humanDuration(waited),
		time.Unix(now, 0).UTC().Format(time.RFC3339))
}

// humanDuration renders d in its largest whole units ("4h", "1h30m", "45s").
func humanDuration(d time.Duration) string {
	s := d.Round(time.Second).String()
	for _, zero := range []string{"m0s", "h0m"} {
		if len(s) > len(zero) && s[len(s)-len(zero):] == zero {
			s = s[:len(s)-len(zero)+1]
		}
	}
	return s
}

// pauseStep is the step kind ("reminder", "escalation", an expiry's action) of run's pause at
// now with its event and audit row, by the expiry actor; due is the run's next step after it.
func (r *Runtime) pauseStep(run runtime.Run, now, due int64, event, what string) runtime.PauseStep {
	actor := runtime.ExpiryActor()
	payload := map[string]any{"by": actor.Name}
	if event == runtime.EventExpiry {
		payload["action"] = what
	}
	return runtime.PauseStep{
		Read: run, Now: now, Due: due,
		Event: runtime.NewEvent{Run: run.UID, Kind: event, Payload: mustJSON(payload), Now: now},
		Audit: &runtime.AuditRecord{Actor: actor, AuditNote: runtime.AuditNote{Action: event, Outcome: what}},
	}
}

func (r *Runtime) observeExpiry(action string) {
	if r.observer != nil {
		r.observer.ObserveExpiry(action)
	}
}

func (r *Runtime) observeReminder() {
	if r.observer != nil {
		r.observer.ObserveReminder()
	}
}

func (r *Runtime) observeEscalation() {
	if r.observer != nil {
		r.observer.ObserveEscalation()
	}
}

// pauseDeadline resolves the waiting policy of the pause the segment is about to store
// (status, calls; in for an input pause) as of since: the configuration's policy and the
// tool's (the input tool's, or for an approval the earliest-expiring policy among the calls
// that need approval), with the floor's facts: whether it is for input, and whether any call
// declares a write (a tool not registered counts as one). nil when no policy applies.
func (s *segment) pauseDeadline(calls []runtime.PendingCall, in *pauseInput, since int64) *wait.Deadline {
	var toolPolicy wait.Policy
	p := wait.Traits{Input: in != nil}
	for _, c := range calls {
		t, ok := s.reg.Get(c.Function.Name)
		if !ok {
			p.Write = true
			continue
		}
		if tool.EffectOf(t).IsWrite() {
			p.Write = true
		}
		relevant := tool.NeedsApproval(t)
		if in != nil {
			relevant = c.Function.Name == in.tool
		}
		w, ok := t.(tool.Waiter)
		if !ok || !relevant {
			continue
		}
		if pol := w.WaitPolicy(); !pol.IsZero() && (toolPolicy.IsZero() || pol.ExpiresAfter < toolPolicy.ExpiresAfter) {
			toolPolicy = pol
		}
	}
	dl, ok := wait.Resolve(s.cfg.Wait, toolPolicy, p, since)
	if !ok {
		return nil
	}
	return &dl
}
