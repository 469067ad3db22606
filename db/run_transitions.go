package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"

	"runsdesk/runtime"
	"runsdesk/runtime/wait"
)

// updateRunByUID begins every guarded transition of one run, whose WHERE names the run's
// primary key (uid = ?) before its guard. The hint keeps MariaDB's range optimizer from
// estimating, by B-tree dives, the rows of every other index a guard column is in (status,
// suspended_at, claimed_by, ...): for a one-row update that costs more than the update.
const updateRunByUID = `UPDATE tx_nrllm_agentrun FORCE INDEX (PRIMARY)`

const nonTerminal = `('queued', 'running', 'waiting_for_approval', 'waiting_for_input')`

const sqlClaimQueued = updateRunByUID + `
	SET status = 'running', claimed_by = ?, lease_expires = ?,
	    started_at = IF(started_at = 0, ?, started_at), retry_at = 0, tstamp = ?
	WHERE uid = ? AND status = 'queued' AND retry_at <= ?`

const sqlSuspend = updateRunByUID + `
	SET status = ?, suspended_state = ?, suspended_at = ?, pending_tools = ?,
	    iterations = ?, total_prompt_tokens = ?, total_completion_tokens = ?, total_tokens = ?,
	    estimated_cost = ?, claimed_by = '', lease_expires = 0, pending_effect = '', tstamp = ?,
	    expires_at = ?, remind_at = ?, escalate_at = ?, escalated = 0, wait_due = ?, wait_policy = ?,
	    elicitation_expires = ?, has_drafts = 0, pause_sequence = ?, subject = ?, hold_heartbeat = ?,
	    pause_number = pause_number + 1, approvals = 0
	WHERE uid = ? AND status = 'running' AND claimed_by = ?`

// sqlPauseSequence records a waiting run's next event sequence (pause_sequence), in the
// transaction that appended its last event; sqlPauseSequenceRead reads it (MAX(sequence)+1).
// A suspend that knows the sequence from this Store's hint (sequenceHints) records it in its
// own UPDATE instead: the hint is never ahead of the events, so neither is the record.
const (
	sqlPauseSequence     = updateRunByUID + ` SET pause_sequence = ? WHERE uid = ?`
	sqlPauseSequenceRead = updateRunByUID + ` SET pause_sequence = (SELECT COALESCE(MAX(sequence), -1) + 1
	    FROM tx_nrllm_agentrun_event WHERE run = ?) WHERE uid = ?`
)

const sqlRenewLease = updateRunByUID + ` SET lease_expires = ?, tstamp = ?
	WHERE uid = ? AND status = 'running' AND claimed_by = ?`

const sqlMarkPendingEffect = updateRunByUID + `
	SET pending_effect = ?, lease_expires = ?, tstamp = ?
	WHERE uid = ? AND status = 'running' AND claimed_by = ?`

const sqlCheckpoint = updateRunByUID + `
	SET suspended_state = ?, queued_request = ?, pending_effect = '', lease_expires = ?, tstamp = ?
	WHERE uid = ? AND status = 'running' AND claimed_by = ?`

const sqlLeaseHeld = `SELECT 1 FROM tx_nrllm_agentrun
	WHERE uid = ? AND status = 'running' AND claimed_by = ? AND lease_expires = ?`

const sqlEffectHeld = sqlLeaseHeld + ` AND pending_effect = ?`

// notFencedForWrite keeps a run whose non-idempotent write may have happened out of the
// queue: requeueing it would let the next worker do the write again.
const notFencedForWrite = ` AND pending_effect <> 'non_idempotent_write'`

const sqlRequeue = updateRunByUID + `
	SET status = 'queued', requeue_count = requeue_count + 1, retry_at = ?,
	    claimed_by = '', lease_expires = 0, pending_effect = '', tstamp = ?
	WHERE uid = ? AND status = 'running' AND claimed_by = ?` + notFencedForWrite

const sqlRequeueStale = updateRunByUID + `
	SET status = 'queued', requeue_count = requeue_count + 1, retry_at = 0,
	    claimed_by = '', lease_expires = 0, pending_effect = '', tstamp = ?
	WHERE uid = ? AND status = 'running' AND lease_expires > 0 AND lease_expires < ?` + notFencedForWrite

const sqlDeadLetterStale = updateRunByUID + `
	SET status = 'failed', termination_reason = ?, error_class = '',
	    iterations = 0, truncated = 0, total_prompt_tokens = 0, total_completion_tokens = 0,
	    total_tokens = 0, estimated_cost = 0,
	    suspended_state = '', queued_request = '', claimed_by = '', lease_expires = 0,
	    suspended_at = 0, pending_tools = '', finished_at = ?, tstamp = ?
	WHERE uid = ? AND status = 'running' AND lease_expires > 0 AND lease_expires < ?`

const sqlFinish = updateRunByUID + `
	SET status = ?, iterations = ?, truncated = ?, total_prompt_tokens = ?,
	    total_completion_tokens = ?, total_tokens = ?, estimated_cost = ?,
	    error_class = ?, termination_reason = ?,
	    suspended_state = '', queued_request = '', claimed_by = '', lease_expires = 0,
	    pending_effect = ?, suspended_at = 0, pending_tools = '', finished_at = ?, tstamp = ?
	WHERE uid = ? AND status IN ` + nonTerminal

const sqlFinishOwned = sqlFinish + ` AND claimed_by = ?`

// sqlCancelSet is what a cancel sets; sqlCancel guards it by a run not finished,
// sqlCancelWaiting by a run that waits for a person.
const sqlCancelSet = updateRunByUID + `
	SET status = 'cancelled', error_class = '', termination_reason = 'cancelled',
	    suspended_state = '', queued_request = '', claimed_by = '', lease_expires = 0,
	    suspended_at = 0, pending_tools = '', finished_at = ?, tstamp = ?`

const (
	sqlCancel        = sqlCancelSet + ` WHERE uid = ? AND status IN ` + nonTerminal
	sqlCancelWaiting = sqlCancelSet + ` WHERE uid = ? AND status IN ('waiting_for_approval', 'waiting_for_input')`
)

const sqlCancelledTotals = updateRunByUID + `
	SET iterations = ?, total_prompt_tokens = ?, total_completion_tokens = ?, total_tokens = ?,
	    estimated_cost = ?, tstamp = ?
	WHERE uid = ? AND status = 'cancelled' AND iterations <= ? AND total_tokens <= ?`

// The largest totals tx_nrllm_agentrun's columns hold: the token counts are int unsigned,
// estimated_cost decimal(10,6).
const (
	maxTokensColumn = 1<<32 - 1
	maxCostColumn   = 9999.999999
)

// totalsArgs is a run's totals (prompt, completion and total tokens, estimated cost) as the
// columns can hold them, in that order: each saturated between 0 and its column's maximum (a
// cost that is not a number at the maximum), so a run's totals never fail its save.
func totalsArgs(prompt, completion, total int64, cost float64) []any {
	tokens := func(n int64) int64 { return min(max(n, 0), maxTokensColumn) }
	if math.IsNaN(cost) {
		cost = maxCostColumn
	}
	return []any{tokens(prompt), tokens(completion), tokens(total), min(max(cost, 0), maxCostColumn)}
}

// pendingToolsWidth is the width of tx_nrllm_agentrun.pending_tools.
const pendingToolsWidth = 1024

// ClaimQueued claims a queued run: queued → running under lease (claimed_by, lease_expires written;
// started_at set when still 0; retry_at cleared). runtime.ErrGuard when the run is not queued
// or its retry time (retry_at) is after lease.Now.
func (s *Store) ClaimQueued(ctx context.Context, uid int64, lease runtime.Lease) error {
	return s.execGuarded(ctx, "claim queued", uid, sqlClaimQueued,
		lease.Owner, lease.Expires, lease.Now, lease.Now, uid, lease.Now)
}

// Suspend pauses a run: running ∧ claimed_by=owner → sp.Status (a pause). It stores the
// sealed state, sets suspended_at=now, pending_tools (sp.Tools comma-joined, duplicates
// dropped), the pause's subject in clear (sp.Subject.Stored: never arguments quoted by
// default while states are sealed) and the running totals (iterations, tokens, estimated
// cost) so far, and clears claimed_by, lease_expires and pending_effect. events are appended, the run's next event sequence after
// them recorded (pause_sequence, the hint a decision's read brings its claim), and the configuration's `waiting`
// notifications written (enqueueNotifications; to the rules of sp.Configuration when set; due
// at sp.WaitingDue when set), in the same transaction (withEventsTx).
// runtime.ErrGuard when the run is not running or another owner holds it; then nothing is
// written. A non-pause status, now ≤ 0, or a tool name containing a comma is refused with an
// error before any write.
func (s *Store) Suspend(ctx context.Context, uid int64, owner string, sp runtime.Suspension, now int64,
	events ...runtime.NewEvent) error {
	if !sp.Status.Waiting() {
		return fmt.Errorf("db: suspend run %d: status %q is not a pause", uid, sp.Status)
	}
	if now <= 0 {
		return fmt.Errorf("db: suspend run %d: suspension time %d is not a unix time", uid, now)
	}
	tools, err := joinTools(sp.Tools)
	if err != nil {
		return fmt.Errorf("db: suspend run %d: %w", uid, err)
	}
	var dl wait.Deadline
	policy := ""
	if sp.Deadline != nil {
		dl = *sp.Deadline
		if policy, err = wait.EncodeDeadline(dl); err != nil {
			return fmt.Errorf("db: suspend run %d: %w", uid, err)
		}
	}
	subject := sp.Subject.Stored(s.keys != nil)
	pause := s.seqs.peek(uid)
	if pause >= 0 {
		pause += len(events)
	}
	return s.withEventsTx(ctx, "suspend", uid, false, events, func(q execer) error {
		state, err := s.sealFor(ctx, q, uid, "", sealedSuspendedState, sp.State)
		if err != nil {
			return fmt.Errorf("db: suspend run %d: %w", uid, err)
		}
		args := append([]any{string(sp.Status), state, now, tools, sp.Iterations},
			totalsArgs(sp.PromptTokens, sp.CompletionTokens, sp.PromptTokens+sp.CompletionTokens, sp.EstimatedCost)...)
		args = append(args, now, dl.ExpiresAt, dl.RemindAt, dl.EscalateAt, wait.Earliest(dl.Due(false), sp.ElicitationExpires), policy,
			sp.ElicitationExpires, pause, subject, holdHeartbeat(sp, now), uid, owner)
		if err := execGuardedOn(ctx, q, "suspend", uid, sqlSuspend, args...); err != nil {
			return err
		}
		known, err := s.suspendSubject(ctx, q, uid, sp.Configuration)
		if err != nil {
			return fmt.Errorf("db: suspend run %d: %w", uid, err)
		}
		told := notice{Event: runtime.NotifyWaiting, Status: sp.Status,
			Pause: sp.Status, Tool: firstTool(tools), WaitingSince: now, ExpiresAt: dl.ExpiresAt, Now: now, Due: sp.WaitingDue, Subject: subject}
		if sp.Configuration != nil {
			told.AdminOnly = &sp.AdminOnly
		}
		return enqueueNotifications(ctx, q, uid, told, known)
	}, func(q execer, next int) error {
		if pause >= 0 {
			return nil
		}
		var err error
		if next < 0 {
			_, err = q.ExecContext(ctx, sqlPauseSequenceRead, uid, uid)
		} else {
			_, err = q.ExecContext(ctx, sqlPauseSequence, next, uid)
		}
		return err
	})
}

// suspendSubject is the subject of a suspend's notifications from cfg as the segment runs
// it: nil (read them in the transaction) without cfg, and the run's uuid read only when cfg
// has rules to write for.
func (s *Store) suspendSubject(ctx context.Context, q execer, uid int64, cfg *runtime.Configuration) (*notifySubject, error) {
	if cfg == nil {
		return nil, nil
	}
	uuid := ""
	if len(cfg.Notify) > 0 {
		var err error
		if uuid, err = s.runUUID(ctx, q, uid); err != nil {
			return nil, err
		}
	}
	sub := subjectOf(uuid, cfg)
	return &sub, nil
}

func joinTools(names []string) (string, error) {
	seen := make(map[string]bool, len(names))
	kept := make([]string, 0, len(names))
	for _, n := range names {
		if strings.Contains(n, ",") {
			return "", fmt.Errorf("tool name %q contains a comma", n)
		}
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		kept = append(kept, n)
	}
	joined := strings.Join(kept, ",")
	if len(joined) > pendingToolsWidth {
		return "", fmt.Errorf("pending tool names exceed %d characters", pendingToolsWidth)
	}
	return joined, nil
}

// RenewLease renews the lease: running ∧ claimed_by=lease.Owner → lease_expires=lease.Expires. A renewal
// that changes nothing (same second, same expiry) still succeeds while the caller owns the
// run. runtime.ErrGuard when the run is not running or another owner holds it.
func (s *Store) RenewLease(ctx context.Context, uid int64, lease runtime.Lease) error {
	err := s.execGuarded(ctx, "renew lease", uid, sqlRenewLease,
		lease.Expires, lease.Now, uid, lease.Owner)
	return unchangedButHeld(ctx, s.db, err, "renew lease", uid, sqlLeaseHeld,
		uid, lease.Owner, lease.Expires)
}

// MarkPendingEffect sets the write fence: running ∧ claimed_by=lease.Owner → pending_effect=effect ("" to
// clear) and lease renewed. runtime.ErrGuard when the caller does not own the running run.
func (s *Store) MarkPendingEffect(ctx context.Context, uid int64, lease runtime.Lease, effect string) error {
	err := s.execGuarded(ctx, "mark pending effect", uid, sqlMarkPendingEffect,
		effect, lease.Expires, lease.Now, uid, lease.Owner)
	return unchangedButHeld(ctx, s.db, err, "mark pending effect", uid, sqlEffectHeld,
		uid, lease.Owner, lease.Expires, effect)
}

// Checkpoint stores a running segment's progress: running ∧ claimed_by=lease.Owner →
// suspended_state=state, queued_request=request, pending_effect cleared, lease renewed. A
// reaper that requeues the run later resumes from this point instead of repeating finished
// steps. events (what the segment did since its last write, e.g. the tool event of the call
// this checkpoint records as answered) are appended in the same transaction (withEvents), so
// the progress and its events commit together or not at all. runtime.ErrGuard when the
// caller does not own the running run; then nothing is written.
func (s *Store) Checkpoint(ctx context.Context, uid int64, lease runtime.Lease, state, request string,
	events ...runtime.NewEvent) error {
	state, err := s.sealFor(ctx, s.db, uid, "", sealedSuspendedState, state)
	if err != nil {
		return fmt.Errorf("db: checkpoint run %d: %w", uid, err)
	}
	request, err = s.sealFor(ctx, s.db, uid, "", sealedQueuedRequest, request)
	if err != nil {
		return fmt.Errorf("db: checkpoint run %d: %w", uid, err)
	}
	if done, err := s.stepBatch(ctx, "checkpoint", uid, true, events, nil, sqlCheckpoint,
		state, request, lease.Expires, lease.Now, uid, lease.Owner); done || err != nil {
		return err
	}
	return s.withEvents(ctx, "checkpoint", uid, true, events, func(q execer) error {
		err := execGuardedOn(ctx, q, "checkpoint", uid, sqlCheckpoint,
			state, request, lease.Expires, lease.Now, uid, lease.Owner)
		return unchangedButHeld(ctx, q, err, "checkpoint", uid, sqlLeaseHeld,
			uid, lease.Owner, lease.Expires)
	})
}

// unchangedButHeld resolves a lease renewal's guard miss: its UPDATE legitimately changes no column
// when repeated within the same second, so on 0 affected rows ownership is re-read
// with check on q, and the call succeeds if the row already holds what was asked.
func unchangedButHeld(ctx context.Context, q execer, err error, op string, uid int64,
	check string, args ...any) error {
	if !errors.Is(err, runtime.ErrGuard) {
		return err
	}
	var one int
	err = q.QueryRowContext(ctx, check, args...).Scan(&one)
	if err != nil {
		if errors.Is(notFound(err), runtime.ErrNotFound) {
			return guardErr(op, uid)
		}
		return fmt.Errorf("db: %s run %d: %w", op, uid, err)
	}
	return nil
}

// Requeue is the owner's requeue: running ∧ claimed_by=owner → queued, requeue_count+1,
// retry_at=retryAt (0 = claimable at once); claim, lease and pending_effect cleared,
// queued_request kept. runtime.ErrGuard otherwise, and for a run fenced for a non-idempotent
// write (notFencedForWrite).
func (s *Store) Requeue(ctx context.Context, uid int64, owner string, now, retryAt int64) error {
	return s.execGuarded(ctx, "requeue", uid, sqlRequeue, retryAt, now, uid, owner)
}

// RequeueStale is the reaper's requeue: running ∧ 0 < lease_expires < now → queued as by
// Requeue, claimable at once (retry_at 0). runtime.ErrGuard when the run is not running, its
// lease has not lapsed (a waiting run has no lease and is never touched) or it is fenced for a
// non-idempotent write (notFencedForWrite).
func (s *Store) RequeueStale(ctx context.Context, uid int64, now int64) error {
	return s.execGuarded(ctx, "requeue stale", uid, sqlRequeueStale, now, uid, now)
}

// DeadLetterStale fails a lapsed run: running ∧ 0 < lease_expires < now → failed with termination_reason
// reason, error_class emptied, totals zeroed, both payloads blanked, claim and lease cleared,
// finished_at=now. pending_effect is kept: it names the write that was in flight. Its
// `finished` notifications are written in the same transaction. runtime.ErrGuard otherwise.
func (s *Store) DeadLetterStale(ctx context.Context, uid int64, reason string, now int64) error {
	return s.withEventsTx(ctx, "dead-letter", uid, false, nil, func(q execer) error {
		if err := execGuardedOn(ctx, q, "dead-letter", uid, sqlDeadLetterStale, reason, now, now, uid, now); err != nil {
			return err
		}
		return enqueueNotifications(ctx, q, uid, notice{Event: runtime.NotifyFinished, Status: runtime.StatusFailed,
			Reason: reason, Now: now}, nil)
	}, nil)
}

// Finish settles a run: a non-terminal run (and, when owner ≠ "", claimed_by=owner) → st.Status with
// st's totals, error class and reason, pending_effect=st.PendingEffect; both payloads blanked;
// claim, lease, suspended_at and pending_tools cleared; finished_at=now. events are appended in the same
// transaction (withEvents), with st.Output (sealed while keys are set) and the `finished`
// notifications (to the rules of st.Configuration when set). A run already terminal keeps its
// first outcome: runtime.ErrGuard, and nothing is written. A non-terminal st.Status is refused
// before any write.
func (s *Store) Finish(ctx context.Context, uid int64, owner string, st runtime.Settlement, now int64,
	events ...runtime.NewEvent) error {
	if !st.Status.Terminal() {
		return fmt.Errorf("db: finish run %d: status %q is not terminal", uid, st.Status)
	}
	args := append([]any{string(st.Status), st.Iterations, st.Truncated},
		totalsArgs(st.PromptTokens, st.CompletionTokens, st.TotalTokens, st.EstimatedCost)...)
	args = append(args, st.ErrorClass, st.Reason, st.PendingEffect, now, now, uid)
	query := sqlFinish
	if owner != "" {
		query = sqlFinishOwned
		args = append(args, owner)
	}
	w, err := s.finishWritesOf(ctx, uid, st, now)
	if err != nil {
		return fmt.Errorf("db: finish run %d: %w", uid, err)
	}
	if !w.apart() {
		if done, err := s.stepBatch(ctx, "finish", uid, false, events, w.inBatch(uid, now), query, args...); done || err != nil {
			return err
		}
	}
	write := func(q execer) error {
		if err := execGuardedOn(ctx, q, "finish", uid, query, args...); err != nil {
			return err
		}
		return w.exec(ctx, q, uid, now)
	}
	if w.none() {
		return s.withEvents(ctx, "finish", uid, false, events, write)
	}
	return s.withEventsTx(ctx, "finish", uid, false, events, write, nil)
}

// Cancel cancels a run: queued, running or waiting → cancelled, without an owner guard. Totals and
// pending_effect are kept; error_class emptied, termination_reason "cancelled"; both payloads
// blanked; claim, lease, suspended_at and pending_tools cleared; finished_at=now.
// The run's drafts and the votes of the pause it waits in are removed and its `finished`
// notifications written in the same transaction (deleteRunDrafts, enqueueNotifications).
// runtime.ErrGuard when the run is already terminal; then nothing is written.
func (s *Store) Cancel(ctx context.Context, uid int64, now int64) error {
	return s.cancel(ctx, uid, now, sqlCancel)
}

// CancelWaiting is Cancel of a run that waits for a person: waiting_for_approval or
// waiting_for_input → cancelled, with the same writes; runtime.ErrGuard for a run in any
// other status (a decision that claimed the pause has made it running).
func (s *Store) CancelWaiting(ctx context.Context, uid int64, now int64) error {
	return s.cancel(ctx, uid, now, sqlCancelWaiting)
}

// cancel is Cancel with guarded the statement that cancels the run.
func (s *Store) cancel(ctx context.Context, uid int64, now int64, guarded string) error {
	var guardMiss error
	err := s.inTx(ctx, nil, func(tx *sql.Tx) error {
		q := s.prep.on(tx)
		if _, err := q.ExecContext(ctx, sqlDropWaitingVotes, uid, uid); err != nil {
			return fmt.Errorf("drop votes: %w", err)
		}
		if guardMiss = execGuardedOn(ctx, q, "cancel", uid, guarded, now, now, uid); guardMiss != nil {
			return guardMiss
		}
		if err := deleteRunDrafts(ctx, q, uid); err != nil {
			return err
		}
		return enqueueNotifications(ctx, q, uid, notice{Event: runtime.NotifyFinished, Status: runtime.StatusCancelled,
			Reason: runtime.ReasonCancelled, Now: now}, nil)
	})
	if guardMiss != nil {
		return guardMiss
	}
	return err
}

// RecordCancelledTotals stores the totals of a segment that found its run cancelled while it
// executed (the cancel cannot know the model calls made since the last stored progress):
// cancelled ∧ stored iterations and total tokens not above these → iterations, tokens and
// estimated cost set.
// A segment that lost its lease before the cancel never lowers what a later owner stored.
// runtime.ErrGuard when the run is not cancelled or already shows as much.
func (s *Store) RecordCancelledTotals(ctx context.Context, uid int64, iterations int, prompt, completion int64, cost float64, now int64) error {
	totals := totalsArgs(prompt, completion, prompt+completion, cost)
	args := append(append([]any{iterations}, totals...), now, uid, iterations, totals[2])
	return s.execGuarded(ctx, "record cancelled totals", uid, sqlCancelledTotals, args...)
}
