package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// The floor's statements: the same transitions as the submit path, written out.
const (
	floorClaim = `UPDATE tx_nrllm_agentrun
		SET status = 'running', claimed_by = ?, lease_expires = ?, queued_request = ?,
		    suspended_at = 0, pending_tools = '', tstamp = ?
		WHERE uid = ? AND status = 'waiting_for_input'`
	floorDecision = `INSERT INTO tx_runsdesk_decision
		(run, idempotency_key, kind, approved, decided_by, crdate) VALUES (?, ?, 'input', 0, ?, ?)`
	floorNextSequence = `SELECT COALESCE(MAX(sequence), -1) + 1 FROM tx_nrllm_agentrun_event WHERE run = ?`
	floorEvent        = `INSERT INTO tx_nrllm_agentrun_event
		(run, sequence, kind, round, duration_ms, payload, crdate) VALUES (?, ?, 'input', 0, 0, ?, ?)`
	floorSettle = `UPDATE tx_nrllm_agentrun
		SET status = 'completed', iterations = 2, termination_reason = 'completed',
		    suspended_state = '', queued_request = '', claimed_by = '', lease_expires = 0,
		    pending_effect = '', suspended_at = 0, pending_tools = '', finished_at = ?, tstamp = ?
		WHERE uid = ? AND status = 'running' AND claimed_by = ?`
	floorContinuation = `{"kind":"input","data":{"amount":25,"customer_email":"ada@example.com",` +
		`"reason":"The charger arrived broken.","refund_method":"original_payment"},"decidedBy":1}`
	floorEventPayload = `{"tool":"ask_refund_amount","decidedBy":1,"fields":4}`
)

var errFloorGuard = errors.New("floor: guarded statement matched no row")

// floor takes the next waiting run through claim + decision + event (one transaction, as
// the store does) and settles it, with database/sql and nothing else. The end of the load
// does not cut it short, so no run is left claimed.
func (b *bench) floor(ctx context.Context, _ int) error {
	ctx = context.WithoutCancel(ctx)
	t, err := b.take()
	if err != nil {
		return err
	}
	now := time.Now().Unix()
	owner := "floor:" + newKey()
	tx, err := b.app.Pool.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("floor: begin: %w", err)
	}
	if err := floorClaimTx(ctx, tx, t.uid, owner, now); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("floor: commit: %w", err)
	}
	return exec1(ctx, b.app.Pool, floorSettle, now, now, t.uid, owner)
}

func floorClaimTx(ctx context.Context, tx *sql.Tx, uid int64, owner string, now int64) error {
	res, err := tx.ExecContext(ctx, floorClaim, owner, now+900, floorContinuation, now, uid)
	if err != nil {
		return fmt.Errorf("floor: claim: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return errFloorGuard
	}
	if _, err := tx.ExecContext(ctx, floorDecision, uid, newKey(), 1, now); err != nil {
		return fmt.Errorf("floor: decision: %w", err)
	}
	var seq int
	if err := tx.QueryRowContext(ctx, floorNextSequence, uid).Scan(&seq); err != nil {
		return fmt.Errorf("floor: next sequence: %w", err)
	}
	if _, err := tx.ExecContext(ctx, floorEvent, uid, seq, floorEventPayload, now); err != nil {
		return fmt.Errorf("floor: event: %w", err)
	}
	return nil
}

func exec1(ctx context.Context, pool *sql.DB, query string, args ...any) error {
	res, err := pool.ExecContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("floor: settle: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return errFloorGuard
	}
	return nil
}
