package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"runsdesk/db"
	"runsdesk/runtime"
	"runsdesk/runtime/apply"
)

// runTokenCreate creates a service account and prints its token once on stdout; only a hash
// of the token is stored.
func runTokenCreate(ctx context.Context, c *cli, args []string) int {
	f := c.newFlags("token create", "--name N --scopes run,read,approve,cancel [--expires 90d] [flags]")
	var dbc database
	var name, scopeList, expiresIn string
	f.bind.database(&dbc)
	f.bind.String(&name, "name")
	f.bind.String(&scopeList, "scopes")
	f.bind.String(&expiresIn, "expires")
	if ok, code := f.parse(args); !ok {
		return code
	}
	scopes, err := parseScopes(scopeList)
	expires, expErr := tokenExpiry(expiresIn, time.Now())
	switch {
	case f.NArg() > 0:
		return f.fail("unexpected argument %q", f.Arg(0))
	case name == "":
		return f.fail("--name is required")
	case err != nil:
		return f.fail("%v", err)
	case expErr != nil:
		return f.fail("%v", expErr)
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
	token, err := db.NewServiceAccounts(conn.pool, nil).CreateTokenUntil(ctx, name, scopes, expires)
	var policy *db.PolicyError
	switch {
	case errors.Is(err, db.ErrNameTaken):
		return c.failf("token create", "a service account named %q already exists", name)
	case errors.As(err, &policy):
		return c.failf("token create", "%s", policy.Reason)
	case err != nil:
		return c.failf("token create", "%v", err)
	}
	until := "it does not expire"
	if !expires.IsZero() {
		until = "it expires " + expires.UTC().Format(time.RFC3339)
	}
	fmt.Fprintf(c.stderr, "Service account %q created (scopes %s; %s). Its token, shown only this once (on standard output):\n", name, strings.Join(scopes, ", "), until)
	fmt.Fprintln(c.stdout, token)
	return exitOK
}

// tokenExpiry is when a token created at now with --expires in ("90d", "12h"; "" never) stops
// working: the zero time for never.
func tokenExpiry(in string, now time.Time) (time.Time, error) {
	if in == "" {
		return time.Time{}, nil
	}
	d, err := apply.ParseDuration(in)
	if err != nil || d <= 0 {
		return time.Time{}, fmt.Errorf("--expires: %q is not a positive duration like 90d or 12h", in)
	}
	return now.Add(d), nil
}

// parseScopes reads a comma-separated scope list: at least one of runtime.Scopes.
func parseScopes(list string) ([]string, error) {
	var scopes []string
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !slices.Contains(runtime.Scopes(), s) {
			return nil, fmt.Errorf("--scopes: unknown scope %q (want %s)", s, strings.Join(runtime.Scopes(), ", "))
		}
		scopes = append(scopes, s)
	}
	if len(scopes) == 0 {
		return nil, fmt.Errorf("--scopes is required: one or more of %s", strings.Join(runtime.Scopes(), ", "))
	}
	return scopes, nil
}

// runTokenList prints every service account: name, scopes, when it was created and last used,
// whether it is disabled and when its token expires. Tokens and their hashes are never shown.
func runTokenList(ctx context.Context, c *cli, args []string) int {
	return adminCommand{name: "token list", formats: listFormats, do: func(ctx context.Context, d *desk, _ []string) int {
		accounts, err := d.tokens.ListTokens(ctx)
		if err != nil {
			return d.fail("%v", err)
		}
		if err := d.record(ctx, "success", fmt.Sprintf("service accounts listed: %d", len(accounts))); err != nil {
			return d.fail("%v", err)
		}
		return printList(d.c, d.name, d.format, tokenListing, accounts)
	}}.run(ctx, c, args)
}

// tokenListing is how token list prints a service account.
var tokenListing = listing[db.ServiceAccount]{noun: "service accounts", fields: []field[db.ServiceAccount]{
	{header: "NAME", key: "name", cell: func(sa db.ServiceAccount) string { return sa.Name }},
	{header: "SCOPES", key: "scopes", cell: func(sa db.ServiceAccount) string { return strings.Join(sa.Scopes, ",") }, value: func(sa db.ServiceAccount) any { return sa.Scopes }},
	{header: "CREATED", key: "created", cell: func(sa db.ServiceAccount) string { return when(sa.Created) }, value: func(sa db.ServiceAccount) any { return jsonTime(sa.Created) }},
	{header: "LAST USED", key: "last_used", cell: func(sa db.ServiceAccount) string { return when(sa.LastUsed) }, value: func(sa db.ServiceAccount) any { return jsonTime(sa.LastUsed) }},
	{header: "DISABLED", key: "disabled", cell: func(sa db.ServiceAccount) string { return yesNo(sa.Disabled) }, value: func(sa db.ServiceAccount) any { return sa.Disabled }},
	{header: "EXPIRES", key: "expires", cell: func(sa db.ServiceAccount) string { return when(sa.Expires) }, value: func(sa db.ServiceAccount) any { return jsonTime(sa.Expires) }},
}}

// runTokenRevoke disables a service account: its token is refused (401) from now on.
func runTokenRevoke(ctx context.Context, c *cli, args []string) int {
	return adminCommand{name: "token revoke", args: []string{"NAME"}, do: func(ctx context.Context, d *desk, args []string) int {
		sa, ok, code := d.serviceAccount(ctx, args[0])
		if !ok {
			return code
		}
		if sa.Disabled {
			fmt.Fprintf(d.c.stdout, "The token of service account %q is already revoked; nothing changed.\n", sa.Name)
			return exitOK
		}
		if code := d.done(ctx, d.tokens.DisableToken(ctx, sa.Name, d.change(tokenLabel(sa.Name))), tokenLabel(sa.Name)); code != exitOK {
			return code
		}
		fmt.Fprintf(d.c.stdout, "The token of service account %q is revoked; requests with it are refused.\n", sa.Name)
		return exitOK
	}}.run(ctx, c, args)
}

// runTokenRotate gives a service account a new token, printed once on stdout; the old one is
// refused from now on, and a revoked account works again with the new one.
func runTokenRotate(ctx context.Context, c *cli, args []string) int {
	return adminCommand{name: "token rotate", args: []string{"NAME"}, do: func(ctx context.Context, d *desk, args []string) int {
		sa, ok, code := d.serviceAccount(ctx, args[0])
		if !ok {
			return code
		}
		reason := tokenLabel(sa.Name)
		if sa.Disabled {
			reason += " (was revoked)"
		}
		token, err := d.tokens.RotateToken(ctx, sa.Name, d.change(reason))
		if code := d.done(ctx, err, tokenLabel(sa.Name)); code != exitOK {
			return code
		}
		if sa.Disabled {
			fmt.Fprintf(d.c.stderr, "Service account %q was revoked; it works again with the new token.\n", sa.Name)
		}
		fmt.Fprintf(d.c.stderr, "New token of service account %q (scopes %s); the old one no longer works. Shown only this once (on standard output):\n",
			sa.Name, strings.Join(sa.Scopes, ", "))
		fmt.Fprintln(d.c.stdout, token)
		return exitOK
	}}.run(ctx, c, args)
}
