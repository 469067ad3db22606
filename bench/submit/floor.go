package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runsdesk/bench/benchcmd"
	"time"
)

// The floor's statements: the same transitions as the submit path, written out.
const (
	floorClaim = `UPDATE tx_nrllm_agentrun
		SET status = 'running', claimed_by = ?, lease_expires = ?, queued_request = ?,
		    suspended_at = 0, pending_tools = '', tstamp = ?
		WHERE uid = ? AND status = 'waiting_for_input'`
	floorDecision = `INSERT INTO tx_runsdesk_decision
		(run, idempotency_key, kind, approved, decided_by, crdate, arguments) VALUES (?, ?, 'input', 0, ?, ?, '')`
	floorNextSequence = `SELECT COALESCE(MAX(sequence), -1) + 1 FROM tx_nrllm_agentrun_event WHERE run = ?`
	floorEvent        = `INSERT INTO tx_nrllm_agentrun_event
		(run, sequence, kind, round, duration_ms, payload, crdate) VALUES (?, ?, 'input', 0, 0, ?, ?)`
	floorCheckpoint = `UPDATE tx_nrllm_agentrun
		SET suspended_state = ?, queued_request = ?, pending_effect = '', lease_expires = ?, tstamp = ?
		WHERE uid = ? AND status = 'running' AND claimed_by = ?`
	floorOneEvent = `INSERT INTO tx_nrllm_agentrun_event
		(run, sequence, kind, round, duration_ms, payload, crdate) VALUES (?, ?, ?, ?, 0, ?, ?)`
	floorSettle = `UPDATE tx_nrllm_agentrun
		SET status = 'completed', iterations = 2, termination_reason = 'completed',
		    suspended_state = '', queued_request = '', claimed_by = '', lease_expires = 0,
		    pending_effect = '', suspended_at = 0, pending_tools = '', finished_at = ?, tstamp = ?
		WHERE uid = ? AND status = 'running' AND claimed_by = ?`
	floorContinuation = `{"kind":"input","data":{"amount":25,"customer_email":"ada@example.com",` +
		`"reason":"The charger arrived broken.","refund_method":"original_payment"},"decidedBy":1}`
	floorEventPayload = `{"tool":"ask_refund_amount","decidedBy":1,"fields":4}`
	floorTwoEvents    = `INSERT INTO tx_nrllm_agentrun_event
		(run, sequence, kind, round, duration_ms, payload, crdate)
		VALUES (?, ?, 'tool', 1, 0, ?, ?), (?, ?, 'llm', 2, 0, ?, ?)`
	floorToolPayload = `{"tool":"ask_refund_amount","callId":"call_0","isError":false}`
	floorLLMPayload  = `{"finishReason":"stop","promptTokens":0,"completionTokens":0}`
)

var errFloorGuard = errors.New("floor: guarded statement matched no row")

// floor takes the next waiting run through claim + decision + event (one transaction, as
// the store does) and settles it, with database/sql and nothing else. The end of the load
// does not cut it short, so no run is left claimed.
func (b *bench) floor(ctx context.Context, _ int) error {
	ctx = context.WithoutCancel(ctx)
	c, err := b.floorClaim(ctx)
	if err != nil {
		return err
	}
	return exec1(ctx, b.app.Pool, "settle", floorSettle, c.now, c.now, c.uid, c.owner)
}

// floorEvents is floor with the rows the continuation leaves as well: the settle UPDATE and
// the tool and llm events (one multi-row INSERT at MAX+1) in one transaction, so the run ends
// with the same rows as on the real path (decision, input, tool and llm events).
func (b *bench) floorEvents(ctx context.Context, _ int) error {
	ctx = context.WithoutCancel(ctx)
	c, err := b.floorClaim(ctx)
	if err != nil {
		return err
	}
	return benchcmd.InTx(ctx, b.app.Pool, func(tx *sql.Tx) error {
		if err := exec1(ctx, tx, "settle", floorSettle, c.now, c.now, c.uid, c.owner); err != nil {
			return err
		}
		var seq int
		if err := tx.QueryRowContext(ctx, floorNextSequence, c.uid).Scan(&seq); err != nil {
			return fmt.Errorf("floor: next sequence: %w", err)
		}
		if _, err := tx.ExecContext(ctx, floorTwoEvents, c.uid, seq, floorToolPayload, c.now, c.uid, seq+1, floorLLMPayload, c.now); err != nil {
			return fmt.Errorf("floor: events: %w", err)
		}
		return nil
	})
}

// floorTransitions issues the three transitions of the real path, each in its transaction
// with its event: the claim (with decision and input event), the checkpoint after the tool
// call (the stored state rewritten, with the tool event) and the settle (with the llm event).
// It is the floor of the same transitions and rows as the submit path, written out.
func (b *bench) floorTransitions(ctx context.Context, _ int) error {
	ctx = context.WithoutCancel(ctx)
	c, err := b.floorClaim(ctx)
	if err != nil {
		return err
	}
	err = benchcmd.InTx(ctx, b.app.Pool, func(tx *sql.Tx) error {
		if err := exec1(ctx, tx, "checkpoint", floorCheckpoint, b.state, floorContinuation, c.now+900, c.now, c.uid, c.owner); err != nil {
			return err
		}
		return floorEventTx(ctx, tx, c.uid, "tool", 1, floorToolPayload, c.now)
	})
	if err != nil {
		return err
	}
	return benchcmd.InTx(ctx, b.app.Pool, func(tx *sql.Tx) error {
		if err := exec1(ctx, tx, "settle", floorSettle, c.now, c.now, c.uid, c.owner); err != nil {
			return err
		}
		return floorEventTx(ctx, tx, c.uid, "llm", 2, floorLLMPayload, c.now)
	})
}

// floorEventTx appends one event at MAX(sequence)+1 of run uid inside tx.
func floorEventTx(ctx context.Context, tx *sql.Tx, uid int64, kind string, round int, payload string, now int64) error {
	var seq int
	if err := tx.QueryRowContext(ctx, floorNextSequence, uid).Scan(&seq); err != nil {
		return fmt.Errorf("floor: next sequence: %w", err)
	}
	if _, err := tx.ExecContext(ctx, floorOneEvent, uid, seq, kind, round, payload, now); err != nil {
		return fmt.Errorf("floor: %s event: %w", kind, err)
	}
	return nil
}

// floorClaimed is a run the floor claimed.
type floorClaimed struct {
	uid   int64
	owner string
	now   int64
}

// floorClaim claims the next waiting run with its decision and input event in one transaction.
func (b *bench) floorClaim(ctx context.Context) (floorClaimed, error) {
	t, err := b.input.take()
	if err != nil {
		return floorClaimed{}, err
	}
	c := floorClaimed{uid: t.uid, owner: "floor:" + newKey(), now: time.Now().Unix()}
	err = benchcmd.InTx(ctx, b.app.Pool, func(tx *sql.Tx) error { return floorClaimTx(ctx, tx, c.uid, c.owner, c.now) })
	return c, err
}

func floorClaimTx(ctx context.Context, tx *sql.Tx, uid int64, owner string, now int64) error {
	if err := exec1(ctx, tx, "claim", floorClaim, owner, now+900, floorContinuation, now, uid); err != nil {
		return err
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

// execer is a pool or a transaction.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// exec1 runs the guarded statement step and fails unless it changed exactly one row.
func exec1(ctx context.Context, db execer, step, query string, args ...any) error {
	res, err := db.ExecContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("floor: %s: %w", step, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return errFloorGuard
	}
	return nil
}
