package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"runsdesk/runtime"
)

// outputTable keeps the output of finished runs, one row per run (0034_run_output.sql).
const outputTable = "tx_runsdesk_run_output"

const sqlUpsertOutput = `INSERT INTO ` + outputTable + ` (run, output_text, finished_at) VALUES (?, ?, ?)
	ON DUPLICATE KEY UPDATE output_text = VALUES(output_text), finished_at = VALUES(finished_at)`

const sqlRunOutput = `SELECT output_text, finished_at FROM ` + outputTable + ` WHERE run = ?`

// RunOutput returns the output run runUID (uuid) keeps, opened (a text that does not open is
// left as stored, an envelope runtime.UnopenedKey names the key of); false when it keeps none.
func (s *Store) RunOutput(ctx context.Context, runUID int64, uuid string) (runtime.RunOutput, bool, error) {
	var out runtime.RunOutput
	err := s.db.QueryRowContext(ctx, sqlRunOutput, runUID).Scan(&out.Text, &out.Finished)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return out, false, nil
	case err != nil:
		return out, false, fmt.Errorf("db: output of run %d: %w", runUID, err)
	}
	out.Text = s.open(out.Text, sealedRunOutput, uuid)
	return out, true, nil
}

// finishWrites are what a settlement writes after its guarded UPDATE: the output it keeps
// (sealed, "" for none) and whether `finished` notifications are to be written (known, when
// set, the subject of its configuration's rules as the segment read them).
type finishWrites struct {
	output string
	notify bool
	known  *notifySubject
	told   notice
}

// finishWritesOf prepares st's writes for run uid settling at now: the output sealed, and
// notifications only when st.Configuration is not known or takes callbacks (its rules, and
// the run's callback, are then read in the transaction) or has a rule subscribed to
// `finished` (named by the run's uuid, read here).
func (s *Store) finishWritesOf(ctx context.Context, uid int64, st runtime.Settlement, now int64) (finishWrites, error) {
	cfg := st.Configuration
	w := finishWrites{notify: cfg == nil || cfg.AcceptsCallbacks(),
		told: notice{Event: runtime.NotifyFinished, Status: st.Status, Reason: st.Reason, Now: now}}
	if cfg != nil && !cfg.AcceptsCallbacks() && subscribed(cfg.Notify, runtime.NotifyFinished) {
		uuid, err := s.runUUID(ctx, s.db, uid)
		if err != nil {
			return w, err
		}
		sub := subjectOf(uuid, cfg)
		w.notify, w.known = true, &sub
	}
	var err error
	w.output, err = s.sealFor(ctx, s.db, uid, "", sealedRunOutput, st.Output)
	return w, err
}

// subscribed reports whether one of rules is sent for e.
func subscribed(rules []runtime.NotifyRule, e runtime.NotifyEvent) bool {
	for _, r := range rules {
		if r.Subscribes(e) {
			return true
		}
	}
	return false
}

// apart reports whether the writes need a transaction of their own (not one batch).
func (w finishWrites) apart() bool { return w.notify }

// inBatch adds the output to b.
func (w finishWrites) inBatch(uid int64, now int64) func(*batch) {
	return func(b *batch) {
		if w.output != "" {
			b.write(sqlUpsertOutput, uid, w.output, now)
		}
	}
}

// exec runs the writes on q, the settlement's transaction.
func (w finishWrites) exec(ctx context.Context, q execer, uid int64, now int64) error {
	if w.output != "" {
		if _, err := q.ExecContext(ctx, sqlUpsertOutput, uid, w.output, now); err != nil {
			return fmt.Errorf("db: output of run %d: %w", uid, err)
		}
	}
	if !w.notify {
		return nil
	}
	return enqueueNotifications(ctx, q, uid, w.told, w.known)
}

// none reports whether there is nothing to write.
func (w finishWrites) none() bool { return w.output == "" && !w.notify }
