package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"runsdesk/seal"
)

// ResealBatch is what one Reseal call did.
type ResealBatch struct {
	// Next is the uid to pass as after to continue; Done when no run is left past it.
	Next int64
	Done bool
	// Scanned runs had state or a request stored; Resealed of them were sealed again with the
	// active key; Current already were.
	Scanned, Resealed, Current int
	// Unopenable names the runs whose stored values do not open: left as stored, never guessed.
	Unopenable []string
}

const sqlResealScan = `SELECT uid, uuid, suspended_state, queued_request FROM tx_nrllm_agentrun
	WHERE uid > ? AND (suspended_state <> '' OR queued_request <> '') ORDER BY uid LIMIT ?`

const sqlResealRow = `SELECT suspended_state, queued_request FROM tx_nrllm_agentrun WHERE uid = ?`

// sqlReseal rewrites both payloads only while both are still as read; tstamp is kept, a
// re-seal is not a change of the run.
const sqlReseal = updateRunByUID + ` SET suspended_state = ?, queued_request = ?
	WHERE uid = ? AND SHA2(suspended_state, 256) = ? AND SHA2(queued_request, 256) = ?`

// resealAttempts bounds how often one run is re-read after a concurrent write changed it.
const resealAttempts = 3

// Reseal seals, with the Store's active key, the stored suspended_state and queued_request of
// up to limit runs with uid > after (cleartext and values sealed with an older key alike). Each
// run is rewritten by a guarded UPDATE that matches only the values it read, so a decision or
// segment writing the run meanwhile wins and the run is read again. Without keys it is refused.
func (s *Store) Reseal(ctx context.Context, after int64, limit int) (ResealBatch, error) {
	if s.keys == nil {
		return ResealBatch{}, errors.New("db: reseal: no keys are configured")
	}
	type row struct {
		uid         int64
		uuid        string
		state, rqst string
	}
	rows, err := queryAll(ctx, s.db, func(r *sql.Rows) (row, error) {
		var x row
		return x, r.Scan(&x.uid, &x.uuid, &x.state, &x.rqst)
	}, sqlResealScan, after, clampPage(limit))
	if err != nil {
		return ResealBatch{}, fmt.Errorf("db: reseal: %w", err)
	}
	b := ResealBatch{Next: after, Done: len(rows) < clampPage(limit), Scanned: len(rows)}
	for _, x := range rows {
		b.Next = x.uid
		for attempt := 1; ; attempt++ {
			if s.keys.Current(x.state) && s.keys.Current(x.rqst) {
				if s.opens(x.uuid, x.state, x.rqst) {
					b.Current++
				} else {
					b.Unopenable = append(b.Unopenable, x.uuid)
				}
				break
			}
			ok, err := s.resealRow(ctx, x.uid, x.uuid, x.state, x.rqst)
			if errors.Is(err, seal.ErrSealed) {
				b.Unopenable = append(b.Unopenable, x.uuid)
				break
			}
			if err != nil {
				return b, fmt.Errorf("db: reseal run %s: %w", x.uuid, err)
			}
			if ok {
				b.Resealed++
				break
			}
			if attempt == resealAttempts {
				return b, fmt.Errorf("db: reseal run %s: changed by %d concurrent writes in a row", x.uuid, attempt)
			}
			if err := s.db.QueryRowContext(ctx, sqlResealRow, x.uid).Scan(&x.state, &x.rqst); err != nil {
				return b, fmt.Errorf("db: reseal run %s: %w", x.uuid, err)
			}
		}
	}
	return b, nil
}

// resealRow rewrites one run's payloads sealed with the active key; false when the run no
// longer holds state and request as read.
// opens reports whether both payloads of run uuid open with the Store's keys.
func (s *Store) opens(uuid, state, request string) bool {
	_, errS := s.keys.Open(state, seal.Place{Table: runsTable, Column: colSuspendedState, RunUUID: uuid})
	_, errR := s.keys.Open(request, seal.Place{Table: runsTable, Column: colQueuedRequest, RunUUID: uuid})
	return errS == nil && errR == nil
}

func (s *Store) resealRow(ctx context.Context, uid int64, uuid, state, request string) (bool, error) {
	cols := [2]struct{ column, stored string }{{colSuspendedState, state}, {colQueuedRequest, request}}
	var out [2]string
	for i, c := range cols {
		place := seal.Place{Table: runsTable, Column: c.column, RunUUID: uuid}
		plain, err := s.keys.Open(c.stored, place)
		if err != nil {
			return false, err
		}
		if out[i], err = s.keys.Seal(plain, place); err != nil {
			return false, err
		}
	}
	res, err := s.db.ExecContext(ctx, sqlReseal, out[0], out[1], uid, sha256Hex(state), sha256Hex(request))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

const sqlResealCallsScan = `SELECT c.uid, r.uuid, c.proposed, c.approved, c.effective
	FROM tx_runsdesk_call c JOIN tx_nrllm_agentrun r ON r.uid = c.run
	WHERE c.uid > ? ORDER BY c.uid LIMIT ?`

// sqlResealCall rewrites a call's arguments only while they are still as read.
const sqlResealCall = `UPDATE tx_runsdesk_call SET proposed = ?, approved = ?, effective = ?
	WHERE uid = ? AND proposed = ? AND approved = ? AND effective = ?`

// ResealCalls seals, with the Store's active key, the arguments of up to limit executed calls
// (tx_runsdesk_call) with uid > after, as Reseal does a run's state: Next is the last call's
// uid, Scanned, Resealed and Current count calls, and Unopenable names the runs of calls whose
// arguments do not open (left as stored). Without keys it is refused.
func (s *Store) ResealCalls(ctx context.Context, after int64, limit int) (ResealBatch, error) {
	if s.keys == nil {
		return ResealBatch{}, errors.New("db: reseal calls: no keys are configured")
	}
	type row struct {
		uid  int64
		uuid string
		args callArguments
	}
	rows, err := queryAll(ctx, s.db, func(r *sql.Rows) (row, error) {
		var x row
		return x, r.Scan(&x.uid, &x.uuid, &x.args[0], &x.args[1], &x.args[2])
	}, sqlResealCallsScan, after, clampPage(limit))
	if err != nil {
		return ResealBatch{}, fmt.Errorf("db: reseal calls: %w", err)
	}
	b := ResealBatch{Next: after, Done: len(rows) < clampPage(limit), Scanned: len(rows)}
	for _, x := range rows {
		b.Next = x.uid
		fresh, current, err := s.resealCall(x.uuid, x.args)
		switch {
		case errors.Is(err, seal.ErrSealed):
			b.Unopenable = append(b.Unopenable, x.uuid)
			continue
		case err != nil:
			return b, fmt.Errorf("db: reseal call %d of run %s: %w", x.uid, x.uuid, err)
		case current:
			b.Current++
			continue
		}
		if _, err := s.db.ExecContext(ctx, sqlResealCall, fresh[0], fresh[1], fresh[2], x.uid, x.args[0], x.args[1], x.args[2]); err != nil {
			return b, fmt.Errorf("db: reseal call %d of run %s: %w", x.uid, x.uuid, err)
		}
		b.Resealed++
	}
	return b, nil
}

// resealCall is args, a call's arguments of run uuid, sealed with the active key, or current
// when every one already is (and opens); seal.ErrSealed when one does not open.
func (s *Store) resealCall(uuid string, args callArguments) (callArguments, bool, error) {
	var out callArguments
	current := true
	for j, stored := range args {
		place := callPlace(callArgumentColumns[j], uuid)
		plain, err := s.keys.Open(stored, place)
		if err != nil {
			return out, false, err
		}
		current = current && s.keys.Current(stored)
		if out[j], err = s.keys.Seal(plain, place); err != nil {
			return out, false, err
		}
	}
	return out, current, nil
}
