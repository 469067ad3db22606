package main

import (
	"context"
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
