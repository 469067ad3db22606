package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"runsdesk/db"
	"runsdesk/runtime"
	"runsdesk/runtime/admin"
)

// adminCommand is one of the `user …` and `token …` commands that change or list accounts:
// its name, the names of its positional arguments (each required), an optional check of them
// (a failure is a usage error), the --format choices of a listing, and what it does once the
// database is open.
type adminCommand struct {
	name    string
	args    []string
	check   func(args []string) error
	formats []string
	do      func(ctx context.Context, d *desk, args []string) int
	// account marks a command that manages the account its first argument names: beside
	// TYPO3 it refuses a TYPO3 backend account (refuseTYPO3Account).
	account bool
}

// desk is what an admin command works on: the people and service accounts (ops) and the audit
// trail of one open, migrated database, the streams of the CLI and a listing's --format.
type desk struct {
	c      *cli
	name   string
	format string
	conn   *conn
	ops    *admin.Desk
	audit  *db.Audit
}

// run parses args (the database flags and exactly cmd.args), opens the database and runs
// cmd.do: exit 0 on success, 1 on a failure (unknown user or token, store error), 2 on a
// usage error.
func (cmd adminCommand) run(ctx context.Context, c *cli, args []string) int {
	synopsis := strings.Join(append(append([]string(nil), cmd.args...), "[flags]"), " ")
	f := c.newFlags(cmd.name, synopsis)
	var dbc database
	var format string
	f.bind.database(&dbc)
	if cmd.formats != nil {
		f.bind.Choice(&format, "format", cmd.formats...)
	}
	if ok, code := f.parse(args); !ok {
		return code
	}
	switch {
	case f.NArg() < len(cmd.args):
		return f.fail("%s is required: runsdesk %s %s", cmd.args[f.NArg()], cmd.name, strings.Join(cmd.args, " "))
	case f.NArg() > len(cmd.args):
		return f.fail("unexpected argument %q", f.Arg(len(cmd.args)))
	}
	if cmd.check != nil {
		if err := cmd.check(f.Args()); err != nil {
			return f.fail("%v", err)
		}
	}
	log := f.logger()
	conn, err := openDatabase(ctx, dbc, log)
	if err != nil {
		return c.failf(cmd.name, "%v", err)
	}
	defer conn.close(log)
	if err := conn.migrated(ctx); err != nil {
		return c.failf(cmd.name, "%v", err)
	}
	if cmd.account {
		if err := refuseTYPO3Account(ctx, conn, f.Arg(0)); err != nil {
			return c.failf(cmd.name, "%v", err)
		}
	}
	ops, err := newAdminDesk(conn)
	if err != nil {
		return c.failf(cmd.name, "%v", err)
	}
	d := &desk{c: c, name: cmd.name, format: format, conn: conn, ops: ops, audit: db.NewAudit(conn.pool, nil)}
	return cmd.do(ctx, d, f.Args())
}

// newAdminDesk is the administration of the people and service accounts on conn.
func newAdminDesk(conn *conn) (*admin.Desk, error) {
	store, err := db.NewAdmin(conn.pool, conn.keys, nil)
	if err != nil {
		return nil, err
	}
	return admin.New(store, nil), nil
}

// cliActor is who a command of family ("user", "token") acts and is audited as:
// cli:runsdesk:user, with no address.
func cliActor(family string) admin.By {
	return admin.By{Actor: runtime.Actor{Name: "cli:runsdesk:" + family, Role: runtime.RoleService}}
}

// by is who the command acts as: cliActor of its family.
func (d *desk) by() admin.By {
	family, _, _ := strings.Cut(d.name, " ")
	return cliActor(family)
}

// actor is the identity the command acts and is audited as (by's actor).
func (d *desk) actor() runtime.Actor { return d.by().Actor }

// action is the audit action of the command: "user disable" → "user_disable".
func (d *desk) action() string {
	return strings.NewReplacer(" ", "_", "-", "_").Replace(d.name)
}

// change is the audit record of a successful change, written with it.
func (d *desk) change(reason string) *runtime.AuditRecord {
	return &runtime.AuditRecord{Actor: d.actor(),
		AuditNote: runtime.AuditNote{Action: d.action(), Outcome: "success", Reason: reason}}
}

// record appends an audit row of the command that changed nothing (a listing, or a target
// that does not exist). A failure to write it fails the command.
func (d *desk) record(ctx context.Context, outcome, reason string) error {
	if err := d.audit.Record(ctx, d.actor(), "", d.action(), "", outcome, reason); err != nil {
		return fmt.Errorf("write the audit row: %w", err)
	}
	return nil
}

// fail reports a failure of the command and returns exitFailure.
func (d *desk) fail(format string, args ...any) int {
	return d.c.failf(d.name, format, args...)
}

// done reports err as the command's failure, or nothing; unknown targets are named by what.
func (d *desk) done(ctx context.Context, err error, what string) int {
	switch {
	case errors.Is(err, runtime.ErrNotFound):
		if aerr := d.record(ctx, "failure", what+" not found"); aerr != nil {
			return d.fail("%s not found; %v", what, aerr)
		}
		return d.fail("%s not found", what)
	case err != nil:
		return d.fail("%v", err)
	}
	return exitOK
}

// when formats unix seconds for a listing: RFC 3339 in UTC, "never" for 0.
func when(unix int64) string {
	if unix == 0 {
		return "never"
	}
	return time.Unix(unix, 0).UTC().Format(time.RFC3339)
}

// yesNo formats a flag for a listing.
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
