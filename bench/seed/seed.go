// Package seed bulk-loads synthetic agent runs into a migrated runsdesk database for the
// benchmarks and the EXPLAIN test: multi-row INSERTs in batches, one transaction per batch,
// explicit uids so the events of each waiting run can be written in the same pass. It uses
// database/sql only (no runsdesk/db), so tests of package db may use it too.
//
// Of every hundred runs, WaitingPercent are paused (the templates' kinds alternating, their
// suspended_state copied from Templates, suspended_at spread over Spread), then one is queued,
// one running (every other one with a lapsed lease, so the reaper finds work), and the rest
// are terminal (completed, failed, cancelled; finished_at spread over Spread). Every waiting run gets
// EventsPerWaiting events; every fifth terminal run gets a decision. Waiting runs may be shared
// out among Assignees.
//
// Beside a TYPO3 site (db.BesideTYPO3) Seed writes runsdesk's renamed tables through a pool
// opened with that option, and Extension fills the site's own tx_nrllm_agentrun, through a
// pool that renames nothing, with the same mix of runs as the nr-llm extension stores them.
package seed

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Template is a pause to copy into seeded waiting runs: its status, configuration, sealed
// state and the names of the tools it is about.
type Template struct {
	Status                  string
	ConfigurationUID        int64
	ConfigurationIdentifier string
	State                   string
	Tools                   []string
}

// Options says what to seed. Zero values take the defaults noted.
type Options struct {
	// Runs is how many runs to insert. Required.
	Runs int
	// WaitingPercent of the runs are paused (default 10).
	WaitingPercent int
	// Templates are the pauses copied into waiting runs: the kinds present alternate, and
	// the templates of one kind are used in turn. At least one is required (Synthetic gives
	// one of each kind when nothing better is at hand).
	Templates []Template
	// Now is the seeding clock in unix seconds (default: the current time).
	Now int64
	// Spread is how far back suspended_at, finished_at and crdate reach (default 14 days).
	Spread time.Duration
	// Batch is the number of runs per INSERT statement and transaction (default 500).
	Batch int
	// EventsPerWaiting is the number of events written for each waiting run (default 3).
	EventsPerWaiting int
	// BeUsers is the number of distinct owners (be_user 1..BeUsers, default 20).
	BeUsers int
	// RandSeed makes the data reproducible (default 1).
	RandSeed uint64
	// Progress, when set, is called after every batch with the runs inserted so far.
	Progress func(done int)
	// Assignees, when set, share the waiting runs with the unassigned: of len(Assignees)+1
	// equal shares (by a hash of the uid), one stays unassigned and each other is assigned to
	// one of them. Default: none assigned.
	Assignees []Assignee
}

// Assignee is a person waiting runs are assigned to: be_users.uid and username.
type Assignee struct {
	UID  int64
	Name string
}

// Report counts what Seed inserted.
type Report struct {
	Runs, Approval, Input, Queued, Running, Terminal, Events, Decisions int
	// FirstUID and LastUID bound the uids of the inserted runs.
	FirstUID, LastUID int64
	Elapsed           time.Duration
}

func (o *Options) defaults() error {
	if o.Runs <= 0 {
		return errors.New("seed: Options.Runs must be positive")
	}
	if o.WaitingPercent == 0 {
		o.WaitingPercent = 10
	}
	if o.WaitingPercent < 0 || o.WaitingPercent > 100 {
		return fmt.Errorf("seed: WaitingPercent %d is outside 0..100", o.WaitingPercent)
	}
	if o.Now == 0 {
		o.Now = time.Now().Unix()
	}
	if o.Spread <= 0 {
		o.Spread = 14 * 24 * time.Hour
	}
	if o.Batch <= 0 {
		o.Batch = 500
	}
	if o.EventsPerWaiting == 0 {
		o.EventsPerWaiting = 3
	}
	if o.BeUsers <= 0 {
		o.BeUsers = 20
	}
	if o.RandSeed == 0 {
		o.RandSeed = 1
	}
	if len(o.Templates) == 0 {
		return errors.New("seed: Options.Templates is empty (Synthetic gives one of each kind)")
	}
	for _, t := range o.Templates {
		if t.Status != StatusApproval && t.Status != StatusInput {
			return fmt.Errorf("seed: template status %q is not a pause", t.Status)
		}
	}
	return nil
}

// Seed inserts o.Runs runs (and their events and decisions) into the database behind pool,
// which must hold runsdesk's schema. uids continue after the largest one present. A pool
// opened with interpolateParams=true saves a round trip per batch.
func Seed(ctx context.Context, pool *sql.DB, o Options) (Report, error) {
	return seed(ctx, pool, o, false, insertBatch)
}

// seed generates o.Runs runs in batches after the largest uid of tx_nrllm_agentrun and
// writes each batch with insert; runsOnly generates no events and decisions.
func seed(ctx context.Context, pool *sql.DB, o Options, runsOnly bool,
	insert func(context.Context, *sql.DB, batch) error) (Report, error) {
	if err := o.defaults(); err != nil {
		return Report{}, err
	}
	start := time.Now()
	var first int64
	if err := pool.QueryRowContext(ctx, `SELECT COALESCE(MAX(uid), 0) + 1 FROM tx_nrllm_agentrun`).Scan(&first); err != nil {
		return Report{}, fmt.Errorf("seed: next uid: %w", err)
	}
	g := newGenerator(o, first)
	g.runsOnly = runsOnly
	rep := Report{FirstUID: first, LastUID: first + int64(o.Runs) - 1}
	for done := 0; done < o.Runs; {
		n := min(o.Batch, o.Runs-done)
		b := g.batch(n)
		if err := insert(ctx, pool, b); err != nil {
			return rep, fmt.Errorf("seed: runs %d..%d: %w", done, done+n, err)
		}
		rep.add(b)
		done += n
		if o.Progress != nil {
			o.Progress(done)
		}
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

func (r *Report) add(b batch) {
	r.Runs += len(b.runs)
	r.Events += len(b.events)
	r.Decisions += len(b.decisions)
	for _, run := range b.runs {
		switch run.status {
		case StatusApproval:
			r.Approval++
		case StatusInput:
			r.Input++
		case "queued":
			r.Queued++
		case "running":
			r.Running++
		default:
			r.Terminal++
		}
	}
}

func insertBatch(ctx context.Context, pool *sql.DB, b batch) error {
	tx, err := pool.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := insertRows(ctx, tx, sqlRunsHead, runColumnsN, len(b.runs), b.runArgs()); err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("insert runs: %w", err)
	}
	if err := insertRows(ctx, tx, sqlEventsHead, eventColumnsN, len(b.events), b.eventArgs()); err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("insert events: %w", err)
	}
	if err := insertRows(ctx, tx, sqlDecisionsHead, decisionColumnsN, len(b.decisions), b.decisionArgs()); err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("insert decisions: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// maxPlaceholders keeps one statement under MySQL's 65535 placeholder limit.
const maxPlaceholders = 60000

// insertRows inserts rows of cols values each, splitting the statement where the
// placeholder count requires it.
func insertRows(ctx context.Context, tx *sql.Tx, head string, cols, rows int, args []any) error {
	per := max(1, maxPlaceholders/cols)
	for at := 0; at < rows; at += per {
		n := min(per, rows-at)
		if _, err := tx.ExecContext(ctx, head+values(cols, n), args[at*cols:(at+n)*cols]...); err != nil {
			return err
		}
	}
	return nil
}

func values(cols, rows int) string {
	one := "(" + strings.TrimSuffix(strings.Repeat("?,", cols), ",") + ")"
	return strings.TrimSuffix(strings.Repeat(one+",", rows), ",")
}

func newRand(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream))
}
