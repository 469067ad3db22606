package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"runsdesk/runtime"
)

// sqlLockRun locks the run row and reads whether the run waits, and its next event sequence
// as its pause recorded it (pause_sequence, meaningful while it waits).
const sqlLockRun = `SELECT status IN ('waiting_for_approval', 'waiting_for_input'), pause_sequence
	FROM tx_nrllm_agentrun WHERE uid = ? FOR UPDATE`

const sqlNextSequence = `SELECT COALESCE(MAX(sequence), -1) + 1 FROM tx_nrllm_agentrun_event
	WHERE run = ?`

const sqlInsertEvents = `INSERT INTO tx_nrllm_agentrun_event
	(run, sequence, kind, round, duration_ms, payload, crdate) VALUES `

const sqlEventRow = `(?, ?, ?, ?, ?, ?, ?)`

const sqlInsertEvent = sqlInsertEvents + sqlEventRow

const sqlEvents = `SELECT uid, run, sequence, kind, round, duration_ms, payload, crdate
	FROM tx_nrllm_agentrun_event WHERE run = ? AND sequence > ? ORDER BY sequence`

const sqlMaxSequence = `SELECT COALESCE(MAX(sequence), -1) FROM tx_nrllm_agentrun_event
	WHERE run = ?`

// AppendEvent stores e at sequence MAX(sequence)+1 of its run (0 for the first event) and
// returns it as stored; for a waiting run it takes that sequence from the pause's record of
// it (pause_sequence) when known, and records the one after. Concurrent appenders to one run
// are serialised on the run row, so sequences stay dense and unique and no event is lost; a
// deadlock or duplicate sequence restarts the append (bounded, without the pause's record). An empty payload is stored as {}; a payload that is not JSON
// is refused. The governance row or executed call e carries is stored with it.
// runtime.ErrNotFound when the run does not exist.
func (s *Store) AppendEvent(ctx context.Context, e runtime.NewEvent) (runtime.Event, error) {
	st, err := s.prepareSteps(ctx, s.db, e.Run, []runtime.NewEvent{e})
	if err != nil {
		return runtime.Event{}, fmt.Errorf("db: append event to run %d: %w", e.Run, err)
	}
	s.seqs.forget(e.Run)
	var ev runtime.Event
	retried := false
	err = s.inTx(ctx, isDuplicateKey, func(tx *sql.Tx) error {
		q := s.prep.on(tx)
		var waiting bool
		var next int
		if err := q.QueryRowContext(ctx, sqlLockRun, e.Run).Scan(&waiting, &next); err != nil {
			return notFound(err)
		}
		if !waiting || retried {
			next = -1
		}
		retried = true
		var err error
		if ev, err = appendEventTx(ctx, q, next, st); err != nil || !waiting {
			return err
		}
		_, err = q.ExecContext(ctx, sqlPauseSequence, ev.Sequence+1, e.Run)
		return err
	})
	if err != nil {
		return runtime.Event{}, fmt.Errorf("db: append event to run %d: %w", e.Run, err)
	}
	return ev, nil
}

func isDuplicateKey(err error) bool { return isMySQLError(err, errDuplicateKey) }

// steps are the events one write appends, checked and sealed before anything is written:
// each event's payload (eventPayload), the sealed arguments of the call it carries and its
// sealed content.
type steps struct {
	events   []runtime.NewEvent
	payloads [][]byte
	calls    []callArguments
	contents []string
}

// prepareSteps checks the payload of each of events and seals the arguments of the calls
// they carry and their content, for run uid, before anything is written.
func (s *Store) prepareSteps(ctx context.Context, q execer, uid int64, events []runtime.NewEvent) (steps, error) {
	payloads, err := eventPayloads(events)
	if err != nil {
		return steps{}, err
	}
	calls, err := s.sealCalls(ctx, q, uid, events)
	if err != nil {
		return steps{}, err
	}
	contents, err := s.sealContents(ctx, q, uid, events)
	if err != nil {
		return steps{}, err
	}
	return steps{events: events, payloads: payloads, calls: calls, contents: contents}, nil
}

// appendEventTx inserts st's one event at sequence next (next < 0: MAX(sequence)+1) inside
// tx, which must hold the run row's lock, and returns it as stored.
func appendEventTx(ctx context.Context, tx execer, next int, st steps) (runtime.Event, error) {
	e := st.events[0]
	seq, uid, err := appendEventsTx(ctx, tx, e.Run, next, st)
	if err != nil {
		return runtime.Event{}, err
	}
	return runtime.Event{UID: uid, Run: e.Run, Sequence: seq, Kind: e.Kind, Round: e.Round,
		DurationMS: e.DurationMS, Payload: st.payloads[0], Crdate: e.Now}, nil
}

// appendEventsTx inserts st's events, in order, at sequence next onwards of run inside tx,
// which must hold the run row's lock; next < 0 reads it (MAX(sequence)+1). The governance
// rows and executed calls the events carry are inserted with them, each with its event's
// sequence and time (stepGovernance, callRows). It returns the first event's sequence and
// uid (a multi-row INSERT numbers its rows in order).
func appendEventsTx(ctx context.Context, tx execer, run int64, next int, st steps) (seq int, uid int64, err error) {
	if next < 0 {
		if err := tx.QueryRowContext(ctx, sqlNextSequence, run).Scan(&next); err != nil {
			return 0, 0, fmt.Errorf("next sequence: %w", err)
		}
	}
	rows, args := eventRows(run, next, st.events, st.payloads)
	res, err := tx.ExecContext(ctx, sqlInsertEvents+strings.Join(rows, ", "), args...)
	if err == nil {
		uid, err = res.LastInsertId()
	}
	if err != nil {
		return 0, 0, fmt.Errorf("insert events %d..%d: %w", next, next+len(st.events)-1, err)
	}
	if err := insertGovernance(ctx, tx, stepGovernance(run, next, st.events)); err != nil {
		return 0, 0, err
	}
	if err := insertCalls(ctx, tx, run, next, st.events, st.calls); err != nil {
		return 0, 0, err
	}
	if err := insertContents(ctx, tx, run, next, st.events, st.contents); err != nil {
		return 0, 0, err
	}
	return next, uid, nil
}

// eventRows are the rows of sqlInsertEvents for events at sequence next onwards of run, and
// their arguments.
func eventRows(run int64, next int, events []runtime.NewEvent, payloads [][]byte) ([]string, []any) {
	rows := make([]string, len(events))
	args := make([]any, 0, 7*len(events))
	for i, e := range events {
		rows[i] = sqlEventRow
		args = append(args, run, next+i, e.Kind, e.Round, e.DurationMS, payloads[i], e.Now)
	}
	return rows, args
}

// eventsInBatch adds st's events at sequence next onwards of run, and the governance rows and
// executed calls they carry, to b (as appendEventsTx inserts them) and returns the index of
// the events' INSERT.
func eventsInBatch(b *batch, run int64, next int, st steps) int {
	rows, args := eventRows(run, next, st.events, st.payloads)
	at := b.insertValues(sqlInsertEvents, rows, args...)
	if g := stepGovernance(run, next, st.events); len(g) > 0 {
		grows, gargs := governanceRows(g)
		b.insertValues(sqlInsertGovernance, grows, gargs...)
	}
	if crows, cargs := callRows(run, next, st.events, st.calls); len(crows) > 0 {
		b.insertValues(sqlInsertCalls, crows, cargs...)
	}
	for _, args := range contentWrites(run, next, st.events, st.contents) {
		b.write(sqlInsertContent, args...)
	}
	return at
}

// eventPayloads checks every event's payload (eventPayload), before anything is written.
func eventPayloads(events []runtime.NewEvent) ([][]byte, error) {
	out := make([][]byte, len(events))
	for i, e := range events {
		p, err := eventPayload(e.Payload)
		if err != nil {
			return nil, fmt.Errorf("event %d (%s): %w", i, e.Kind, err)
		}
		out[i] = p
	}
	return out, nil
}

func eventPayload(p []byte) ([]byte, error) {
	if len(p) == 0 {
		return []byte("{}"), nil
	}
	if !json.Valid(p) {
		return nil, fmt.Errorf("payload is not JSON")
	}
	return p, nil
}

// Events returns the run's events with sequence > after, in ascending sequence order (an
// empty slice when there are none). A store failure is returned as an error.
func (s *Store) Events(ctx context.Context, runUID int64, after int) ([]runtime.Event, error) {
	evs, err := queryAll(ctx, s.db, scanEvent, sqlEvents, runUID, after)
	if err != nil {
		return nil, fmt.Errorf("db: events of run %d: %w", runUID, err)
	}
	return evs, nil
}

func scanEvent(rows *sql.Rows) (runtime.Event, error) {
	var ev runtime.Event
	var payload []byte
	err := rows.Scan(&ev.UID, &ev.Run, &ev.Sequence, &ev.Kind, &ev.Round, &ev.DurationMS, &payload, &ev.Crdate)
	ev.Payload = payload
	return ev, err
}

// MaxSequence returns the run's highest event sequence, -1 when it has none.
func (s *Store) MaxSequence(ctx context.Context, runUID int64) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, sqlMaxSequence, runUID).Scan(&n); err != nil {
		return 0, fmt.Errorf("db: max sequence of run %d: %w", runUID, err)
	}
	return n, nil
}
