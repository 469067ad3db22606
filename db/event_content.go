package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"runsdesk/runtime"
)

// contentTable keeps the content of run events under their run's privacy mode, one row per
// event (0035_event_content.sql); the event payload keeps only counts and lengths.
const contentTable = "tx_runsdesk_event_content"

// sqlInsertContent stores the content of run ?'s event at sequence ?, which the same
// transaction inserted before it: the row is keyed by the event's uid as read back, never by
// a guessed auto-increment value (a Galera node steps those by its auto_increment_increment).
const sqlInsertContent = `INSERT INTO ` + contentTable + ` (event, run, privacy, content, crdate)
	SELECT uid, run, ?, ?, ? FROM tx_nrllm_agentrun_event WHERE run = ? AND sequence = ?`

const sqlEventContents = `SELECT e.sequence, c.privacy, c.content FROM ` + contentTable + ` c
	JOIN tx_nrllm_agentrun_event e ON e.uid = c.event WHERE c.run = ? ORDER BY e.sequence`

// sealContents encodes and seals the content each of events carries, for run uid (one entry
// per event, "" for an event without content), before anything is written.
func (s *Store) sealContents(ctx context.Context, q execer, uid int64, events []runtime.NewEvent) ([]string, error) {
	var out []string
	for i, e := range events {
		if e.Content == nil {
			continue
		}
		if out == nil {
			out = make([]string, len(events))
		}
		b, err := json.Marshal(e.Content.Content)
		if err != nil {
			return nil, fmt.Errorf("content of event %d (%s): %w", i, e.Kind, err)
		}
		if out[i], err = s.sealAt(ctx, q, uid, sealedEventContent.place("", 0), string(b)); err != nil {
			return nil, fmt.Errorf("content of event %d (%s): %w", i, e.Kind, err)
		}
	}
	return out, nil
}

// contentWrites are the statements storing the contents (sealed, as sealContents gives them)
// of events at sequence first onwards of run, with their arguments, in event order.
func contentWrites(run int64, first int, events []runtime.NewEvent, sealed []string) [][]any {
	var out [][]any
	for i, e := range events {
		if e.Content == nil {
			continue
		}
		out = append(out, []any{string(e.Content.Privacy), sealed[i], e.Now, run, first + i})
	}
	return out
}

// insertContents stores the contents of events at sequence first onwards of run on q.
func insertContents(ctx context.Context, q execer, run int64, first int, events []runtime.NewEvent, sealed []string) error {
	for _, args := range contentWrites(run, first, events, sealed) {
		if _, err := q.ExecContext(ctx, sqlInsertContent, args...); err != nil {
			return fmt.Errorf("insert content of event %d: %w", args[4], err)
		}
	}
	return nil
}

// EventContents returns the kept content of run runUID's events (uuid its uuid), in event
// order, each opened; one sealed with a key the store lacks is returned with SealedWith set
// and no content. A stored content that is not a JSON object of EventContent is an error
// naming the event, never guessed at.
func (s *Store) EventContents(ctx context.Context, runUID int64, uuid string) ([]runtime.StoredContent, error) {
	type stored struct {
		seq             int
		privacy, stored string
	}
	rows, err := queryAll(ctx, s.db, func(r *sql.Rows) (stored, error) {
		var x stored
		return x, r.Scan(&x.seq, &x.privacy, &x.stored)
	}, sqlEventContents, runUID)
	if err != nil {
		return nil, fmt.Errorf("db: event contents of run %d: %w", runUID, err)
	}
	out := make([]runtime.StoredContent, len(rows))
	for i, x := range rows {
		out[i] = runtime.StoredContent{Sequence: x.seq, Kept: runtime.KeptContent{Privacy: runtime.Privacy(x.privacy)}}
		text := s.openAt(x.stored, sealedEventContent.place(uuid, 0))
		if id := runtime.UnopenedKey(text); id != "" {
			out[i].SealedWith = id
			continue
		}
		if err := json.Unmarshal([]byte(text), &out[i].Kept.Content); err != nil {
			return nil, fmt.Errorf("db: content of event %d of run %d: %w", x.seq, runUID, err)
		}
	}
	return out, nil
}
