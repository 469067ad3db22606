package main

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"runsdesk/db"
	"runsdesk/runtime"
)

// runRulesList prints every standing approval with its tool, configuration, uses (of
// max_uses), until and state: in force, expired, used up or revoked.
func runRulesList(ctx context.Context, c *cli, args []string) int {
	f := c.newFlags("rules list", "[flags]")
	var dbc database
	f.bind.database(&dbc)
	if ok, code := f.parse(args); !ok {
		return code
	}
	if f.NArg() > 0 {
		return f.fail("unexpected argument %q", f.Arg(0))
	}
	return onMigratedDatabase(ctx, c, f, "rules list", dbc, func(conn *conn) int {
		rules, err := db.New(conn.pool).StandingApprovals(ctx)
		if err != nil {
			return c.failf("rules list", "%v", err)
		}
		if len(rules) == 0 {
			fmt.Fprintln(c.stdout, "No standing approvals.")
			return exitOK
		}
		now := time.Now().Unix()
		w := tabwriter.NewWriter(c.stdout, 0, 8, 2, ' ', 0)
		fmt.Fprintln(w, "NAME\tTOOL\tCONFIGURATION\tUSES\tUNTIL\tSTATE")
		for _, r := range rules {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, r.Tool, orAny(r.Configuration), uses(r), until(r.Until), ruleState(r, now))
		}
		_ = w.Flush()
		return exitOK
	})
}

// runRulesRevoke revokes the standing approval NAME at once, as cli:runsdesk:rules (audited
// in the same transaction). An apply whose file still lists it re-creates it and says so.
func runRulesRevoke(ctx context.Context, c *cli, args []string) int {
	return adminCommand{name: "rules revoke", args: []string{"NAME"}, do: func(ctx context.Context, d *desk, args []string) int {
		name := args[0]
		store := db.New(d.conn.pool)
		err := store.RevokeStandingApproval(ctx, name, time.Now().Unix(), d.change(ruleLabel(name)))
		if errors.Is(err, runtime.ErrNotFound) {
			if revoked, rerr := isRevoked(ctx, store, name); rerr != nil || revoked {
				if rerr != nil {
					return d.fail("%v", rerr)
				}
				fmt.Fprintf(d.c.stdout, "Standing approval %q is already revoked; nothing changed.\n", name)
				return exitOK
			}
		}
		if code := d.done(ctx, err, ruleLabel(name)); code != exitOK {
			return code
		}
		fmt.Fprintf(d.c.stdout, "Standing approval %q is revoked; it approves no turn from now on. An apply whose file still lists it re-creates it.\n", name)
		return exitOK
	}}.run(ctx, c, args)
}

// isRevoked reports whether a stored standing approval is named name and revoked.
func isRevoked(ctx context.Context, store *db.Store, name string) (bool, error) {
	rules, err := store.StandingApprovals(ctx)
	if err != nil {
		return false, err
	}
	for _, r := range rules {
		if r.Name == name {
			return r.Revoked != 0, nil
		}
	}
	return false, nil
}

func ruleLabel(name string) string { return fmt.Sprintf("standing approval %q", name) }

func orAny(configuration string) string {
	if configuration == "" {
		return "(any)"
	}
	return configuration
}

func uses(r runtime.StandingApproval) string {
	if r.MaxUses == 0 {
		return fmt.Sprintf("%d", r.Uses)
	}
	return fmt.Sprintf("%d/%d", r.Uses, r.MaxUses)
}

func until(at int64) string {
	if at == 0 {
		return "-"
	}
	return time.Unix(at, 0).UTC().Format(time.RFC3339)
}

// ruleState is why r does or does not approve at now.
func ruleState(r runtime.StandingApproval, now int64) string {
	switch {
	case r.Revoked != 0:
		return "revoked"
	case r.Until != 0 && now >= r.Until:
		return "expired"
	case r.MaxUses != 0 && r.Uses >= r.MaxUses:
		return "used up"
	}
	return "in force"
}
