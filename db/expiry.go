package db

import (
	"context"
	"fmt"

	"runsdesk/runtime"
)

// sqlDue is the expirer's scan: the waiting runs whose next deadline step is due, read on
// KEY wait_due (status, wait_due) one range per waiting status, so it reads only due rows.
const sqlDue = `SELECT ` + runColumns + ` FROM tx_nrllm_agentrun
	WHERE status IN ('waiting_for_approval', 'waiting_for_input') AND wait_due > 0 AND wait_due <= ?
	ORDER BY wait_due, uid LIMIT ?`

// pauseGuard holds a step to the pause it was read as: same run, same pause status, same
// pause (suspended_at).
// pauseSequenceAfterOne keeps a pause's next event sequence (pause_sequence) past the one
// event a deadline step that leaves the run waiting appends with it.
const pauseSequenceAfterOne = `pause_sequence = IF(pause_sequence >= 0, pause_sequence + 1, -1)`

const pauseGuard = ` WHERE uid = ? AND status = ? AND suspended_at = ?`

const sqlRemindPause = updateRunByUID + ` SET remind_at = 0, wait_due = ?, tstamp = ?, ` + pauseSequenceAfterOne +
	pauseGuard + ` AND remind_at > 0 AND remind_at <= ?`

const sqlEscalatePause = updateRunByUID + ` SET escalated = 1, remind_at = 0, wait_due = ?, tstamp = ?, ` + pauseSequenceAfterOne +
	pauseGuard + ` AND escalated = 0 AND escalate_at > 0 AND escalate_at <= ?`

const sqlExpirePause = updateRunByUID + `
	SET status = 'cancelled', error_class = '', termination_reason = 'expired',
	    suspended_state = '', queued_request = '', claimed_by = '', lease_expires = 0,
	    suspended_at = 0, pending_tools = '', wait_due = 0, finished_at = ?, tstamp = ?` +
	pauseGuard + ` AND expires_at > 0 AND expires_at <= ?`

// FindDue returns up to limit waiting runs whose next deadline step (reminder, escalation or
// expiry, wait_due) is at or before now, the earliest due first.
func (s *Store) FindDue(ctx context.Context, now int64, limit int) ([]runtime.Run, error) {
	out, err := s.queryRuns(ctx, sqlDue, now, clampPage(limit))
	if err != nil {
		return nil, fmt.Errorf("db: find due pauses: %w", err)
	}
	return out, nil
}

// RemindPause records a pause's reminder (RemindPause in docs/state-machine.md), in one
// transaction: the guarded UPDATE of st.Read (status and suspended_at as read, its reminder
// due at st.Now and not yet recorded) → remind_at=0, wait_due=st.Due; then st.Event and the
// audit row st.Audit. runtime.ErrGuard when the pause was decided, re-suspended or reminded
// meanwhile; then nothing is written.
func (s *Store) RemindPause(ctx context.Context, st runtime.PauseStep) error {
	return s.pauseStep(ctx, "remind pause", st, stepOutcome{runtime.NotifyReminder, st.Read.Status}, sqlRemindPause, st.Due, st.Now)
}

// EscalatePause marks a pause escalated (EscalatePause), in one transaction: the guarded
// UPDATE of st.Read (as read, its escalation due at st.Now, not yet escalated) → escalated=1,
// remind_at=0, wait_due=st.Due (its expiry); then st.Event and st.Audit. runtime.ErrGuard
// as for RemindPause.
func (s *Store) EscalatePause(ctx context.Context, st runtime.PauseStep) error {
	return s.pauseStep(ctx, "escalate pause", st, stepOutcome{runtime.NotifyEscalated, st.Read.Status}, sqlEscalatePause, st.Due, st.Now)
}

// ExpirePause is the expiry that cancels (ExpirePause, on_expiry cancel), in one
// transaction: the guarded UPDATE of st.Read (as read, expired at st.Now) → cancelled with
// termination reason expired, payloads cleared; then st.Decision (kind expiry, so a late
// decision is told the run expired, and a second expiry of the pause hits its unique key),
// st.Event and st.Audit. runtime.ErrGuard when the pause was decided, cancelled or
// re-suspended meanwhile. The expiries that deny or answer are decisions: ClaimForResume.
func (s *Store) ExpirePause(ctx context.Context, st runtime.PauseStep) error {
	if st.Decision == nil {
		return fmt.Errorf("db: expire pause run %d: no decision to record", st.Read.UID)
	}
	return s.pauseStep(ctx, "expire pause", st, stepOutcome{runtime.NotifyExpired, runtime.StatusCancelled}, sqlExpirePause, st.Now, st.Now)
}

// stepOutcome is what a deadline step tells the configuration's notify rules (event) and the
// run's status once it commits; a step into cancelled ends the pause, and its drafts with it.
type stepOutcome struct {
	event  runtime.NotifyEvent
	status runtime.Status
}

// pauseStep runs one deadline step of st.Read: the guarded UPDATE query (its leading
// arguments first, then the pause guard and st.Now), then the step's notifications
// (enqueueNotifications), the run's drafts and the pause's votes removed and its `finished`
// notifications written when the step ends the pause,
// st.Decision and st.Audit when set, and st.Event, all in one transaction.
func (s *Store) pauseStep(ctx context.Context, op string, st runtime.PauseStep, out stepOutcome, query string, lead ...any) error {
	read := st.Read
	if !read.Status.Waiting() {
		return fmt.Errorf("db: %s run %d: status %q is not a pause", op, read.UID, read.Status)
	}
	args := append(lead, read.UID, string(read.Status), read.SuspendedAt, st.Now)
	ev := st.Event
	if ev.Now == 0 {
		ev.Now = st.Now
	}
	return s.withEvents(ctx, op, read.UID, false, []runtime.NewEvent{ev}, func(q execer) error {
		if err := execGuardedOn(ctx, q, op, read.UID, query, args...); err != nil {
			return err
		}
		if err := enqueueNotifications(ctx, q, read.UID, notice{Event: out.event, Status: out.status, Pause: read.Status,
			Tool: firstTool(read.PendingTools), WaitingSince: read.SuspendedAt, ExpiresAt: read.ExpiresAt, Now: st.Now,
			Subject: read.Subject}, nil); err != nil {
			return err
		}
		if out.status.Terminal() {
			if err := deleteRunDrafts(ctx, q, read.UID); err != nil {
				return err
			}
			if _, err := q.ExecContext(ctx, sqlDropPauseVotes, read.UID, read.PauseNumber); err != nil {
				return fmt.Errorf("drop votes: %w", err)
			}
			if err := enqueueNotifications(ctx, q, read.UID, notice{Event: runtime.NotifyFinished, Status: out.status,
				Reason: runtime.ReasonExpired, Now: st.Now}, nil); err != nil {
				return err
			}
		}
		if d := st.Decision; d != nil {
			arguments, reason, err := s.sealDecision(*d, read.UUID)
			if err != nil {
				return fmt.Errorf("db: %s run %d: decision: %w", op, read.UID, err)
			}
			if _, err := q.ExecContext(ctx, sqlInsertDecision, decisionArgs(read, *d, st.Now, arguments, reason)...); err != nil {
				if isDuplicateKey(err) {
					return fmt.Errorf("db: %s run %d: decision %q: %w: %w", op, read.UID, d.IdempotencyKey, ErrDuplicateDecision, runtime.ErrGuard)
				}
				return fmt.Errorf("db: %s run %d: decision: %w", op, read.UID, err)
			}
		}
		if a := st.Audit; a != nil {
			return insertAudit(ctx, q, st.Now, a.Actor, a.IP, a.Action, read.UUID, a.Outcome, a.Reason)
		}
		return nil
	})
}
