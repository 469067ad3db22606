package benchenv

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"runsdesk/bench/seed"
	"runsdesk/db"
	"runsdesk/runtime"
	"runsdesk/runtime/apply"
	"runsdesk/runtime/demo"
	"runsdesk/runtime/tool"
)

// SeedVersion names the shape of the seeded data; a database seeded under another version is
// rebuilt.
const SeedVersion = 4

// Password is every bench user's password (local, throw-away databases only).
const Password = "bench passphrase for runsdesk desks"

// Users are the bench users, one per role, created in this order (uids 1..3 on a fresh
// database) and used as the owners of the seeded runs.
var Users = []User{
	{Name: "bench-admin", Role: runtime.RoleAdmin},
	{Name: "bench-reviewer", Role: runtime.RoleReviewer},
	{Name: "bench-support", Role: runtime.RoleSupport},
}

// User is a bench account.
type User struct {
	Name string
	Role runtime.Role
}

// Kind selects what a desk's waiting runs pause for.
type Kind string

// Desk kinds.
const (
	// KindInbox: the demo desk's pauses (refund details form, refund and customer e-mail
	// approvals), as the inbox shows them; the waiting runs shared out a quarter each among the
	// three bench users and the unassigned.
	KindInbox Kind = "inbox"
	// KindSubmit: every waiting run waits for input on configuration bench-input, whose script
	// completes right after the form is submitted.
	KindSubmit Kind = "submit"
	// KindQuorum: KindSubmit's desk where every other waiting run waits instead for two
	// approvals of one send_customer_email call on configuration bench-quorum
	// (approvals_required: 2), whose script completes right after the call.
	KindQuorum Kind = "quorum"
	// KindExpiry: the demo desk's refund form and e-mail approval pauses, for the expirer's
	// benchmark (bench/expiry), which gives them deadlines and expires some.
	KindExpiry Kind = "expiry"
	// KindQueue: the demo desk's refund form and e-mail approval pauses, for the queue's
	// health benchmark (bench/queue), which then shapes its waiting runs and decisions.
	KindQueue Kind = "queue"
)

// DeskOptions says which desk to prepare.
type DeskOptions struct {
	Kind Kind
	// Runs is the number of seeded runs.
	Runs int
	// WaitingPercent of them are paused (default 10; KindSubmit and KindQuorum use 100).
	WaitingPercent int
	// Fresh drops a database seeded before and seeds it again.
	Fresh bool
	// Progress, when set, is told how many runs are seeded so far.
	Progress func(done int)
}

// Desk is a migrated, set-up and seeded database.
type Desk struct {
	Name   string
	DSN    string
	Reused bool
	Seed   seed.Report
	// Configurations maps identifiers to uids.
	Configurations map[string]int64
}

// Tools returns the in-process tools a runtime on any desk registers (the demo's).
func Tools() []tool.Tool { return demo.Tools() }

// benchConfig adds configuration bench-input: one pause for the refund details form, then the
// run completes.
const benchConfig = `configurations:
  - identifier: bench-input
    name: Bench input round trip
    system_prompt: You ask a person for the refund details, then finish.
    max_iterations: 4
    require_second_approver: false
    tools: [ask_refund_amount]
    provider:
      kind: scripted
      script:
        - content: A person has to decide how much to refund.
          tool_calls:
            - name: ask_refund_amount
              arguments: {order_id: A-1001}
        - content: The refund details are recorded.
`

// quorumConfig adds configuration bench-quorum: one turn calling send_customer_email, which
// two different people must approve, then the run completes.
const quorumConfig = `configurations:
  - identifier: bench-quorum
    name: Bench two approvals
    system_prompt: You write to the customer once two people approved the message, then finish.
    max_iterations: 4
    require_second_approver: false
    approvals_required: 2
    tools: [send_customer_email]
    provider:
      kind: scripted
      script:
        - content: Writing to the customer.
          tool_calls:
            - name: send_customer_email
              arguments: {order_id: A-1001, subject: Your refund, body: "Hello Ada, your refund is on its way."}
        - content: The customer is informed.
`

// Desk returns the database for o, seeding it unless a database seeded with the same
// options and SeedVersion exists (which is then brought up to the current migrations, as
// `serve` does at start).
func (e *Env) Desk(ctx context.Context, o DeskOptions) (*Desk, error) {
	if o.WaitingPercent == 0 {
		o.WaitingPercent = 10
		if o.Kind == KindSubmit || o.Kind == KindQuorum {
			o.WaitingPercent = 100
		}
	}
	d := &Desk{Name: fmt.Sprintf("runsdesk_bench_%s_%d_%d", o.Kind, o.Runs, o.WaitingPercent)}
	d.DSN = e.DSN(d.Name, false)
	if !o.Fresh {
		if rep, ok := e.seeded(ctx, d.Name); ok {
			d.Reused, d.Seed = true, rep
			if err := db.Migrate(ctx, d.DSN); err != nil {
				return nil, fmt.Errorf("benchenv: migrate reused desk: %w", err)
			}
			return d, e.loadConfigurations(ctx, d)
		}
	}
	restore, err := e.denseIDs(ctx)
	if err != nil {
		return nil, err
	}
	defer restore()
	if err := e.recreate(ctx, d.Name); err != nil {
		return nil, err
	}
	pool, err := db.Open(ctx, d.DSN)
	if err != nil {
		return nil, fmt.Errorf("benchenv: %w", err)
	}
	defer pool.Close()
	if err := setUp(ctx, pool, o.Kind); err != nil {
		return nil, err
	}
	tpls, err := templates(ctx, pool, o.Kind)
	if err != nil {
		return nil, err
	}
	bulk, err := sql.Open("mysql", e.DSN(d.Name, true))
	if err != nil {
		return nil, fmt.Errorf("benchenv: %w", err)
	}
	defer bulk.Close()
	d.Seed, err = seed.Seed(ctx, bulk, seed.Options{Runs: o.Runs, WaitingPercent: o.WaitingPercent,
		Templates: tpls, BeUsers: len(Users), Progress: o.Progress, Assignees: assignees(o.Kind)})
	if err != nil {
		return nil, fmt.Errorf("benchenv: %w", err)
	}
	if err := analyze(ctx, pool); err != nil {
		return nil, err
	}
	if err := e.mark(ctx, pool, d.Seed); err != nil {
		return nil, err
	}
	return d, e.loadConfigurations(ctx, d)
}

// assignees are the people an inbox desk's waiting runs are shared out among (a quarter each
// to the three bench users, a quarter unassigned), so its Mine tab and assignee filter have
// pages to show; the other kinds' runs stay unassigned.
func assignees(kind Kind) []seed.Assignee {
	if kind != KindInbox {
		return nil
	}
	out := make([]seed.Assignee, len(Users))
	for i, u := range Users {
		out[i] = seed.Assignee{UID: int64(i + 1), Name: u.Name}
	}
	return out
}

func (e *Env) recreate(ctx context.Context, name string) error {
	if _, err := e.admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+quote(name)); err != nil {
		return fmt.Errorf("benchenv: drop %s: %w", name, err)
	}
	if _, err := e.admin.ExecContext(ctx, "CREATE DATABASE "+quote(name)+" CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"); err != nil {
		return fmt.Errorf("benchenv: create %s: %w", name, err)
	}
	if err := db.Migrate(ctx, e.DSN(name, false)); err != nil {
		return fmt.Errorf("benchenv: %w", err)
	}
	return nil
}

// denseIDs makes a Galera node number new rows 1, 2, 3 … while a desk is seeded (its
// auto-increment control steps every id by the cluster size, and the seeded runs refer to
// users 1 to len(Users)); restore turns the control on again. Elsewhere it does nothing.
func (e *Env) denseIDs(ctx context.Context) (restore func(), err error) {
	var name, wsrep string
	err = e.admin.QueryRowContext(ctx, `SHOW VARIABLES LIKE 'wsrep_on'`).Scan(&name, &wsrep)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && wsrep != "ON") {
		return func() {}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("benchenv: detect Galera: %w", err)
	}
	if _, err := e.admin.ExecContext(ctx, `SET GLOBAL wsrep_auto_increment_control = OFF,
		GLOBAL auto_increment_increment = 1, GLOBAL auto_increment_offset = 1`); err != nil {
		return nil, fmt.Errorf("benchenv: seed on a Galera node: %w", err)
	}
	return func() {
		if _, err := e.admin.ExecContext(context.WithoutCancel(ctx), `SET GLOBAL wsrep_auto_increment_control = ON`); err != nil {
			e.log.Error("benchenv: turn the Galera auto-increment control on again", "err", err)
		}
	}, nil
}

// setUp applies the demo desk and bench-input (and for KindQuorum bench-quorum), and creates
// the bench users.
func setUp(ctx context.Context, pool *sql.DB, kind Kind) error {
	a := apply.New(apply.Config{Catalog: db.New(pool), Builtin: Tools()})
	files := [][]byte{demo.Config(), []byte(benchConfig)}
	if kind == KindQuorum {
		files = append(files, []byte(quorumConfig))
	}
	for _, file := range files {
		plan, err := a.Plan(ctx, file)
		if err != nil {
			return fmt.Errorf("benchenv: plan desk file: %w", err)
		}
		if _, err := a.Apply(ctx, plan); err != nil {
			return fmt.Errorf("benchenv: apply desk file: %w", err)
		}
	}
	accounts, err := db.NewAccounts(pool, nil, 0)
	if err != nil {
		return fmt.Errorf("benchenv: %w", err)
	}
	for i, u := range Users {
		uid, err := accounts.CreateUser(ctx, u.Name, Password, u.Role)
		if err != nil {
			return fmt.Errorf("benchenv: user %s: %w", u.Name, err)
		}
		if uid != int64(i+1) {
			return fmt.Errorf("benchenv: user %s got uid %d, want %d (database not fresh?)", u.Name, uid, i+1)
		}
	}
	return nil
}

func analyze(ctx context.Context, pool *sql.DB) error {
	for _, t := range []string{"tx_nrllm_agentrun", "tx_nrllm_agentrun_event", "tx_runsdesk_decision"} {
		rows, err := pool.QueryContext(ctx, "ANALYZE TABLE "+t)
		if err != nil {
			return fmt.Errorf("benchenv: analyze %s: %w", t, err)
		}
		rows.Close()
	}
	return nil
}

const sqlMarkTable = `CREATE TABLE IF NOT EXISTS bench_seed (version int NOT NULL, runs int NOT NULL,
	approval int NOT NULL, input int NOT NULL, events int NOT NULL, seconds double NOT NULL)`

func (e *Env) mark(ctx context.Context, pool *sql.DB, r seed.Report) error {
	if _, err := pool.ExecContext(ctx, sqlMarkTable); err != nil {
		return fmt.Errorf("benchenv: mark: %w", err)
	}
	if _, err := pool.ExecContext(ctx, `INSERT INTO bench_seed VALUES (?, ?, ?, ?, ?, ?)`,
		SeedVersion, r.Runs, r.Approval, r.Input, r.Events, r.Elapsed.Seconds()); err != nil {
		return fmt.Errorf("benchenv: mark: %w", err)
	}
	return nil
}

// seeded reads the mark of database name; ok only for the current SeedVersion.
func (e *Env) seeded(ctx context.Context, name string) (seed.Report, bool) {
	var r seed.Report
	var version int
	var secs float64
	err := e.admin.QueryRowContext(ctx, `SELECT version, runs, approval, input, events, seconds FROM `+
		quote(name)+`.bench_seed`).Scan(&version, &r.Runs, &r.Approval, &r.Input, &r.Events, &secs)
	if err != nil || version != SeedVersion {
		return r, false
	}
	r.Elapsed = time.Duration(secs * float64(time.Second))
	return r, true
}

func (e *Env) loadConfigurations(ctx context.Context, d *Desk) error {
	pool, err := db.Open(ctx, d.DSN)
	if err != nil {
		return fmt.Errorf("benchenv: %w", err)
	}
	defer pool.Close()
	cfgs, err := db.New(pool).Configurations(ctx)
	if err != nil {
		return fmt.Errorf("benchenv: %w", err)
	}
	d.Configurations = map[string]int64{}
	for _, c := range cfgs {
		d.Configurations[c.Identifier] = c.UID
	}
	if len(d.Configurations) == 0 {
		return errors.New("benchenv: the desk has no configurations")
	}
	return nil
}
