package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"runsdesk/runtime"
	"runsdesk/seal"
)

// callsTable holds one row per executed call (0027_calls.sql); its argument columns are
// sealed like the run's state, each bound to its column and run.
const callsTable = "tx_runsdesk_call"

// callArguments are an executed call's arguments as stored (sealed when keys are set; ""
// for none), in the order of sealedCallColumns.
type callArguments [3]string

const sqlInsertCalls = `INSERT INTO tx_runsdesk_call
	(run, sequence, call_id, tool, proposed, approved, effective, crdate) VALUES `

const sqlCallRow = `(?, ?, ?, ?, ?, ?, ?, ?)`

const sqlExecutedCalls = `SELECT uid, run, sequence, call_id, tool, proposed, approved, effective, crdate
	FROM tx_runsdesk_call WHERE run = ? ORDER BY sequence`

// sealCalls seals the arguments of the call each of events carries, for run uid (one entry
// per event, zero for an event without a call), before anything is written.
func (s *Store) sealCalls(ctx context.Context, q execer, uid int64, events []runtime.NewEvent) ([]callArguments, error) {
	var out []callArguments
	for i, e := range events {
		if e.Call == nil {
			continue
		}
		if out == nil {
			out = make([]callArguments, len(events))
		}
		for j, raw := range []json.RawMessage{e.Call.Proposed, e.Call.Approved, e.Call.Effective} {
			sealed, err := s.sealAt(ctx, q, uid, sealedCallColumns[j].place("", 0), string(raw))
			if err != nil {
				return nil, fmt.Errorf("call %d: %w", i, err)
			}
			out[i][j] = sealed
		}
	}
	return out, nil
}

// callRows are the rows of sqlInsertCalls for the calls events carry at sequence first
// onwards of run (args their sealed arguments, as sealCalls gives them), and their arguments.
func callRows(run int64, first int, events []runtime.NewEvent, args []callArguments) ([]string, []any) {
	var rows []string
	var vals []any
	for i, e := range events {
		if e.Call == nil {
			continue
		}
		a := args[i]
		rows = append(rows, sqlCallRow)
		vals = append(vals, run, first+i, e.Call.CallID, auditField(e.Call.Tool, govToolLen), a[0], a[1], a[2], e.Now)
	}
	return rows, vals
}

// insertCalls inserts the calls events carry at sequence first onwards of run with one
// statement on q.
func insertCalls(ctx context.Context, q execer, run int64, first int, events []runtime.NewEvent, args []callArguments) error {
	rows, vals := callRows(run, first, events, args)
	if len(rows) == 0 {
		return nil
	}
	if _, err := q.ExecContext(ctx, sqlInsertCalls+strings.Join(rows, ", "), vals...); err != nil {
		return fmt.Errorf("insert calls: %w", err)
	}
	return nil
}

// ExecutedCalls returns run runUID's executed calls in the order they were answered, each
// argument opened; one that does not open is left as stored, and its reader refuses it.
func (s *Store) ExecutedCalls(ctx context.Context, runUID int64) ([]runtime.ExecutedCall, error) {
	type stored struct {
		call runtime.ExecutedCall
		args callArguments
	}
	rows, err := queryAll(ctx, s.db, func(r *sql.Rows) (stored, error) {
		var x stored
		var uid int64
		err := r.Scan(&uid, &x.call.Run, &x.call.Sequence, &x.call.CallID, &x.call.Tool, &x.args[0], &x.args[1], &x.args[2], &x.call.Crdate)
		return x, err
	}, sqlExecutedCalls, runUID)
	if err != nil {
		return nil, fmt.Errorf("db: executed calls of run %d: %w", runUID, err)
	}
	out := make([]runtime.ExecutedCall, len(rows))
	for i, x := range rows {
		for j := range x.args {
			if x.args[j], err = s.openCallArgument(ctx, runUID, j, x.args[j]); err != nil {
				return nil, fmt.Errorf("db: executed calls of run %d: %w", runUID, err)
			}
		}
		out[i] = x.call
		out[i].Proposed, out[i].Approved, out[i].Effective = rawOrNil(x.args[0]), rawOrNil(x.args[1]), rawOrNil(x.args[2])
	}
	return out, nil
}

// openCallArgument is stored, argument j of a call of run uid, opened when it is sealed.
func (s *Store) openCallArgument(ctx context.Context, uid int64, j int, stored string) (string, error) {
	if !strings.HasPrefix(stored, seal.Prefix) {
		return stored, nil
	}
	uuid, err := s.runUUID(ctx, s.db, uid)
	if err != nil {
		return "", err
	}
	return s.openAt(stored, sealedCallColumns[j].place(uuid, 0)), nil
}

// rawOrNil is v as JSON text, nil when it is empty.
func rawOrNil(v string) json.RawMessage {
	if v == "" {
		return nil
	}
	return json.RawMessage(v)
}
