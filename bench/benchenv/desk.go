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
	// TYPO3 builds the desk beside a TYPO3 site, as `runsdesk --typo3` runs: the site's
	// be_users and be_groups as TYPO3 12 creates them, runsdesk's tables migrated, set up and
	// seeded under their own names (db.BesideTYPO3), and the site's tx_nrllm_agentrun holding
	// as many runs of the nr-llm extension as runsdesk's, in the same mix of statuses
	// (seed.Extension).
	TYPO3 bool
	// SiteProgress, when set, is told how many of the extension's runs are seeded so far.
	SiteProgress func(done int)
}

// Desk is a migrated, set-up and seeded database.
type Desk struct {
	Name   string
	DSN    string
	Reused bool
	Seed   seed.Report
	// Configurations maps identifiers to uids.
	Configurations map[string]int64
	// TYPO3 reports a desk beside a TYPO3 site (DeskOptions.TYPO3): open its pools with
	// Layout, and the site's tables with a pool that renames none.
	TYPO3 bool
	// Site counts the extension's runs in the site's tx_nrllm_agentrun of a TYPO3 desk.
	Site seed.Report
}

// Layout is what the desk's pools and migrations take: db.BesideTYPO3 beside a TYPO3 site,
// nothing otherwise.
func (d *Desk) Layout() []db.OpenOption {
	if d.TYPO3 {
		return []db.OpenOption{db.BesideTYPO3()}
	}
	return nil
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
	d := &Desk{Name: fmt.Sprintf("runsdesk_bench_%s_%d_%d", o.Kind, o.Runs, o.WaitingPercent), TYPO3: o.TYPO3}
	if o.TYPO3 {
		d.Name += "_typo3"
	}
	d.DSN = e.DSN(d.Name, false)
	if !o.Fresh {
		if rep, site, ok := e.seeded(ctx, d); ok {
			d.Reused, d.Seed, d.Site = true, rep, site
			if err := db.Migrate(ctx, d.DSN, d.Layout()...); err != nil {
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
	if err := e.recreate(ctx, d); err != nil {
		return nil, err
	}
	pool, err := db.Open(ctx, d.DSN, d.Layout()...)
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
	d.Seed, err = seed.Seed(ctx, pool, seed.Options{Runs: o.Runs, WaitingPercent: o.WaitingPercent,
		Templates: tpls, BeUsers: len(Users), Progress: o.Progress, Assignees: assignees(o.Kind)})
	if err != nil {
		return nil, fmt.Errorf("benchenv: %w", err)
	}
	if err := analyze(ctx, pool, "tx_nrllm_agentrun", "tx_nrllm_agentrun_event", "tx_runsdesk_decision"); err != nil {
		return nil, err
	}
	if d.TYPO3 {
		if d.Site, err = seedSite(ctx, d.DSN, seed.Options{Runs: o.Runs, WaitingPercent: o.WaitingPercent,
			Templates: tpls, BeUsers: len(Users), Progress: o.SiteProgress}); err != nil {
			return nil, err
		}
	}
	if err := e.mark(ctx, pool, d); err != nil {
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

// recreate drops d's database and creates it anew, with a TYPO3 site's backend tables for a
// TYPO3 desk, and migrates it in d's layout.
func (e *Env) recreate(ctx context.Context, d *Desk) error {
	if _, err := e.admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+quote(d.Name)); err != nil {
		return fmt.Errorf("benchenv: drop %s: %w", d.Name, err)
	}
	if _, err := e.admin.ExecContext(ctx, "CREATE DATABASE "+quote(d.Name)+" CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"); err != nil {
		return fmt.Errorf("benchenv: create %s: %w", d.Name, err)
	}
	if d.TYPO3 {
		if err := createSite(ctx, d.DSN); err != nil {
			return err
		}
	}
	if err := db.Migrate(ctx, d.DSN, d.Layout()...); err != nil {
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

// analyze updates the statistics of tables, as pool names them.
func analyze(ctx context.Context, pool *sql.DB, tables ...string) error {
	for _, t := range tables {
		rows, err := pool.QueryContext(ctx, "ANALYZE TABLE "+t)
		if err != nil {
			return fmt.Errorf("benchenv: analyze %s: %w", t, err)
		}
		rows.Close()
	}
	return nil
}

// The marks of a seeded desk: bench_seed counts runsdesk's runs, bench_site_seed the
// extension's runs of a TYPO3 desk. A desk whose marks are missing is seeded again.
const (
	sqlMarkTable = `CREATE TABLE IF NOT EXISTS bench_seed (version int NOT NULL, runs int NOT NULL,
	approval int NOT NULL, input int NOT NULL, events int NOT NULL, seconds double NOT NULL)`
	sqlSiteMarkTable = `CREATE TABLE IF NOT EXISTS bench_site_seed (runs int NOT NULL,
	approval int NOT NULL, input int NOT NULL, seconds double NOT NULL)`
)

func (e *Env) mark(ctx context.Context, pool *sql.DB, d *Desk) error {
	r := d.Seed
	if _, err := pool.ExecContext(ctx, sqlMarkTable); err != nil {
		return fmt.Errorf("benchenv: mark: %w", err)
	}
	if _, err := pool.ExecContext(ctx, `INSERT INTO bench_seed VALUES (?, ?, ?, ?, ?, ?)`,
		SeedVersion, r.Runs, r.Approval, r.Input, r.Events, r.Elapsed.Seconds()); err != nil {
		return fmt.Errorf("benchenv: mark: %w", err)
	}
	if !d.TYPO3 {
		return nil
	}
	if _, err := pool.ExecContext(ctx, sqlSiteMarkTable); err != nil {
		return fmt.Errorf("benchenv: mark the site: %w", err)
	}
	if _, err := pool.ExecContext(ctx, `INSERT INTO bench_site_seed VALUES (?, ?, ?, ?)`,
		d.Site.Runs, d.Site.Approval, d.Site.Input, d.Site.Elapsed.Seconds()); err != nil {
		return fmt.Errorf("benchenv: mark the site: %w", err)
	}
	return nil
}

// seeded reads the marks of d's database: ok only for the current SeedVersion and, for a
// TYPO3 desk, with the site's runs marked too.
func (e *Env) seeded(ctx context.Context, d *Desk) (own, site seed.Report, ok bool) {
	var version int
	var secs float64
	err := e.admin.QueryRowContext(ctx, `SELECT version, runs, approval, input, events, seconds FROM `+
		quote(d.Name)+`.bench_seed`).Scan(&version, &own.Runs, &own.Approval, &own.Input, &own.Events, &secs)
	if err != nil || version != SeedVersion {
		return own, site, false
	}
	own.Elapsed = time.Duration(secs * float64(time.Second))
	if !d.TYPO3 {
		return own, site, true
	}
	err = e.admin.QueryRowContext(ctx, `SELECT runs, approval, input, seconds FROM `+
		quote(d.Name)+`.bench_site_seed`).Scan(&site.Runs, &site.Approval, &site.Input, &secs)
	site.Elapsed = time.Duration(secs * float64(time.Second))
	return own, site, err == nil
}

func (e *Env) loadConfigurations(ctx context.Context, d *Desk) error {
	pool, err := db.Open(ctx, d.DSN, d.Layout()...)
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
