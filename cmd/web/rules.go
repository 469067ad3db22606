package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"runsdesk/db"
	"runsdesk/runtime"
)

// runRulesList prints every standing approval with its tool, configuration, uses (of
// max_uses), until and state: in force, expired, used up or revoked.
func runRulesList(ctx context.Context, c *cli, args []string) int {
	f := c.newFlags("rules list", "[flags]")
	var dbc database
	var format string
	f.bind.database(&dbc)
	f.bind.Choice(&format, "format", listFormats...)
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
		return printList(c, "rules list", format, ruleListing(time.Now().Unix()), rules)
	})
}

// ruleListing is how rules list prints a standing approval, its state as at now.
func ruleListing(now int64) listing[runtime.StandingApproval] {
	type r = runtime.StandingApproval
	return listing[r]{noun: "standing approvals", fields: []field[r]{
		{header: "NAME", key: "name", cell: func(r r) string { return r.Name }},
		{header: "TOOL", key: "tool", cell: func(r r) string { return r.Tool }},
		{header: "CONFIGURATION", key: "configuration", cell: func(r r) string { return orAny(r.Configuration) }, value: func(r r) any { return orNull(r.Configuration) }},
		{header: "USES", key: "uses", cell: uses, value: func(r r) any { return r.Uses }},
		{key: "max_uses", value: func(r r) any { return zeroNull(r.MaxUses) }},
		{header: "UNTIL", key: "until", cell: func(r r) string { return until(r.Until) }, value: func(r r) any { return jsonTime(r.Until) }},
		{header: "STATE", key: "state", cell: func(r r) string { return ruleState(r, now) }},
	}}
}

// zeroNull is n, or nil (null) when it is 0 (no limit).
func zeroNull(n int64) any {
	if n == 0 {
		return nil
	}
	return n
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
