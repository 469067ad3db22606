package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"runsdesk/db"
	"runsdesk/runtime"
)

// runTokenCreate creates a service account and prints its token once on stdout; only a hash
// of the token is stored.
func runTokenCreate(ctx context.Context, c *cli, args []string) int {
	f := c.newFlags("token create", "--name N --scopes run,read,approve,cancel [flags]")
	var dbc database
	var name, scopeList string
	f.bind.database(&dbc)
	f.bind.String(&name, "name")
	f.bind.String(&scopeList, "scopes")
	if ok, code := f.parse(args); !ok {
		return code
	}
	scopes, err := parseScopes(scopeList)
	switch {
	case f.NArg() > 0:
		return f.fail("unexpected argument %q", f.Arg(0))
	case name == "":
		return f.fail("--name is required")
	case err != nil:
		return f.fail("%v", err)
	}
	log := f.logger()
	conn, err := openDatabase(ctx, dbc, log)
	if err != nil {
		return c.failf("token create", "%v", err)
	}
	defer conn.close(log)
	if err := conn.migrated(ctx); err != nil {
		return c.failf("token create", "%v", err)
	}
	token, err := db.NewServiceAccounts(conn.pool, nil).CreateToken(ctx, name, scopes)
	var policy *db.PolicyError
	switch {
	case errors.Is(err, db.ErrNameTaken):
		return c.failf("token create", "a service account named %q already exists", name)
	case errors.As(err, &policy):
		return c.failf("token create", "%s", policy.Reason)
	case err != nil:
		return c.failf("token create", "%v", err)
	}
	fmt.Fprintf(c.stderr, "Service account %q created (scopes %s). Its token, shown only this once (on standard output):\n", name, strings.Join(scopes, ", "))
	fmt.Fprintln(c.stdout, token)
	return exitOK
}

// parseScopes reads a comma-separated scope list: at least one of run, read, approve, cancel.
func parseScopes(list string) ([]string, error) {
	var scopes []string
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		switch s {
		case runtime.ScopeRun, runtime.ScopeRead, runtime.ScopeApprove, runtime.ScopeCancel:
		default:
			return nil, fmt.Errorf("--scopes: unknown scope %q (want run, read, approve, cancel)", s)
		}
		scopes = append(scopes, s)
	}
	if len(scopes) == 0 {
		return nil, errors.New("--scopes is required: one or more of run, read, approve, cancel")
	}
	return scopes, nil
}
