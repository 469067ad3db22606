// Package extruns reads the runs of the TYPO3 extension nr-llm from a TYPO3 site's own
// tx_nrllm_agentrun table, read only: it issues SELECTs alone and never claims, reaps, expires,
// decides or writes a run. It reads only the columns and keys the extension itself defines
// (extrunstest/testdata/nrllm_agentrun.sql), none of those runsdesk adds to its own table.
//
// Waiting lists the runs waiting for approval or input, oldest first, a keyset page at a time
// along the extension's KEY status_lookup (status, crdate). Find reads one run by uuid and
// classifies its suspended_state (Payload): sealed by the extension (an "nrv1:" or legacy "v2:"
// envelope, which runsdesk cannot and does not try to open), cleartext decoded by
// runtime.DecodePause into its pending calls or its input form, or unreadable (refused with
// the reason, never guessed).
package extruns

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"runsdesk/runtime"
)

// Page sizes of Waiting: Size 0 is DefaultPageSize, and no page holds more than MaxPageSize.
const (
	DefaultPageSize = 25
	MaxPageSize     = 100
)

// Runs reads the extension's runs. Build it with New; it is safe for concurrent use.
type Runs struct {
	db *sql.DB
}

// New returns a reader of the tx_nrllm_agentrun table of the TYPO3 site's database db.
func New(db *sql.DB) *Runs { return &Runs{db: db} }

// Cursor is a position in the waiting list: the crdate and uid of the last run of the page
// before. The zero Cursor is the start of the list.
type Cursor struct {
	Crdate int64
	UID    int64
}

// Page asks Waiting for the runs after After, at most Size of them (see DefaultPageSize and
// MaxPageSize).
type Page struct {
	After Cursor
	Size  int
}

// size is the page's size within the bounds.
func (p Page) size() int {
	switch {
	case p.Size <= 0:
		return DefaultPageSize
	case p.Size > MaxPageSize:
		return MaxPageSize
	}
	return p.Size
}

// List is one page of waiting runs, oldest first. More reports whether runs follow; Next is
// then the cursor of the next page (the zero Cursor otherwise).
type List struct {
	Runs []Summary
	More bool
	Next Cursor
}

// Summary is a run as the waiting list shows it; its payload is not read.
type Summary struct {
	UID                     int64
	UUID                    string
	Status                  runtime.Status
	ConfigurationIdentifier string
	// BeUser is the uid of the TYPO3 backend user who started the run (0: none, as for a
	// run the scheduler or the CLI started).
	BeUser int64
	// Crdate is when the run was created; Tstamp when its row last changed (unix seconds).
	Crdate int64
	Tstamp int64
}

// WaitingSince is when the run began to wait, as far as the extension's columns tell: the
// row's last change (a waiting run's last write is its pause), or its creation when the row
// carries no change time.
func (s Summary) WaitingSince() int64 {
	if s.Tstamp > 0 {
		return s.Tstamp
	}
	return s.Crdate
}

// sqlWaitingPart selects the runs of one waiting status after the cursor in list order,
// reading KEY status_lookup (status, crdate) as a range (InnoDB appends uid to the key).
const sqlWaitingPart = `(SELECT uid, uuid, status, configuration_identifier, be_user, crdate, tstamp
	FROM tx_nrllm_agentrun FORCE INDEX (status_lookup)
	WHERE status = ? AND (crdate > ? OR crdate = ? AND uid > ?)
	ORDER BY crdate, uid LIMIT ?)`

// sqlWaiting merges the pages of both waiting statuses, each read in order from the index, so
// no page sorts more than twice its size.
const sqlWaiting = sqlWaitingPart + "\nUNION ALL\n" + sqlWaitingPart + "\nORDER BY crdate, uid LIMIT ?"

// waitingArgs are sqlWaiting's arguments for a page of n runs after c (n+1 are read, to know
// whether more follow).
func waitingArgs(c Cursor, n int) []any {
	var args []any
	for _, s := range []runtime.Status{runtime.StatusWaitingApproval, runtime.StatusWaitingInput} {
		args = append(args, string(s), c.Crdate, c.Crdate, c.UID, n+1)
	}
	return append(args, n+1)
}

// Waiting returns the page p of the extension's runs waiting for approval or input, oldest
// (by creation, which is what the extension's key orders) first. A store failure is an error.
func (r *Runs) Waiting(ctx context.Context, p Page) (List, error) {
	n := p.size()
	rows, err := r.db.QueryContext(ctx, sqlWaiting, waitingArgs(p.After, n)...)
	if err != nil {
		return List{}, fmt.Errorf("list the TYPO3 extension's waiting runs: %w", err)
	}
	defer rows.Close()
	var out List
	for rows.Next() {
		var s Summary
		if err := rows.Scan(&s.UID, &s.UUID, &s.Status, &s.ConfigurationIdentifier, &s.BeUser, &s.Crdate, &s.Tstamp); err != nil {
			return List{}, fmt.Errorf("read a waiting run of the TYPO3 extension: %w", err)
		}
		out.Runs = append(out.Runs, s)
	}
	if err := rows.Err(); err != nil {
		return List{}, fmt.Errorf("list the TYPO3 extension's waiting runs: %w", err)
	}
	if len(out.Runs) > n {
		out.Runs = out.Runs[:n]
		last := out.Runs[n-1]
		out.More, out.Next = true, Cursor{Crdate: last.Crdate, UID: last.UID}
	}
	return out, nil
}

// Run is one run of the extension with its payload classified.
type Run struct {
	Summary
	Payload Payload
}

// sqlFind reads a run by uuid on KEY run_uuid. Two rows are read so that a uuid the table
// holds twice is refused rather than one of them guessed.
const sqlFind = `SELECT uid, uuid, status, configuration_identifier, be_user, crdate, tstamp, COALESCE(suspended_state, '')
	FROM tx_nrllm_agentrun WHERE uuid = ? ORDER BY uid LIMIT 2`

// Find returns the run uuid, whatever its status, with its payload classified (Classify; a
// run that does not wait has PayloadNone). An unknown uuid is an error wrapping
// runtime.ErrNotFound; a uuid two rows hold is refused with an error wrapping ErrAmbiguous.
func (r *Runs) Find(ctx context.Context, uuid string) (Run, error) {
	rows, err := r.db.QueryContext(ctx, sqlFind, uuid)
	if err != nil {
		return Run{}, fmt.Errorf("read TYPO3 extension run %s: %w", uuid, err)
	}
	defer rows.Close()
	var runs []Run
	for rows.Next() {
		var run Run
		var state string
		s := &run.Summary
		if err := rows.Scan(&s.UID, &s.UUID, &s.Status, &s.ConfigurationIdentifier, &s.BeUser, &s.Crdate, &s.Tstamp, &state); err != nil {
			return Run{}, fmt.Errorf("read TYPO3 extension run %s: %w", uuid, err)
		}
		if s.Status.Waiting() {
			run.Payload = Classify(state)
		}
		runs = append(runs, run)
	}
	if err := rows.Err(); err != nil {
		return Run{}, fmt.Errorf("read TYPO3 extension run %s: %w", uuid, err)
	}
	switch len(runs) {
	case 0:
		return Run{}, fmt.Errorf("TYPO3 extension run %s: %w", uuid, runtime.ErrNotFound)
	case 1:
		return runs[0], nil
	}
	return Run{}, fmt.Errorf("TYPO3 extension run %s: %w", uuid, ErrAmbiguous)
}

// ErrAmbiguous is wrapped by Find's refusal of a uuid more than one row of the table holds.
var ErrAmbiguous = errors.New("more than one run has this uuid; none is shown")
