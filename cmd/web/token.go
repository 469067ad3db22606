package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"runsdesk/runtime/admin"
)

// runTokenCreate creates a service account and prints its token once on stdout; only a hash
// of the token is stored.
func runTokenCreate(ctx context.Context, c *cli, args []string) int {
	f := c.newFlags("token create", "--name N --scopes run,read,approve,cancel,content,request [--expires 90d] [flags]")
	var dbc database
	var name, scopeList, expiresIn string
	f.bind.database(&dbc)
	f.bind.String(&name, "name")
	f.bind.String(&scopeList, "scopes")
	f.bind.String(&expiresIn, "expires")
	if ok, code := f.parse(args); !ok {
		return code
	}
	switch {
	case f.NArg() > 0:
		return f.fail("unexpected argument %q", f.Arg(0))
	case name == "":
		return f.fail("--name is required")
	}
	scopes, err := admin.ParseScopes(scopeList)
	if err != nil {
		return f.fail("--scopes: %v", err)
	}
	expires, err := admin.ParseExpiry(expiresIn, time.Now())
	if err != nil {
		return f.fail("--expires: %v", err)
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
	ops, err := newAdminDesk(conn)
	if err != nil {
		return c.failf("token create", "%v", err)
	}
	token, err := ops.CreateToken(ctx, cliActor("token"), admin.NewToken{Name: name, Scopes: scopes, Expires: expires})
	if err != nil {
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

// runTokenList prints every service account: name, scopes, when it was created and last used,
// whether it is disabled and when its token expires. Tokens and their hashes are never shown.
func runTokenList(ctx context.Context, c *cli, args []string) int {
	return adminCommand{name: "token list", formats: listFormats, do: func(ctx context.Context, d *desk, _ []string) int {
		accounts, err := d.ops.ServiceAccounts(ctx, d.by())
		if err != nil {
			return d.fail("%v", err)
		}
		return printList(d.c, d.name, d.format, tokenListing, accounts)
	}}.run(ctx, c, args)
}

// tokenListing is how token list prints a service account.
var tokenListing = listing[admin.ServiceAccount]{noun: "service accounts", fields: []field[admin.ServiceAccount]{
	{header: "NAME", key: "name", cell: func(sa admin.ServiceAccount) string { return sa.Name }},
	{header: "SCOPES", key: "scopes", cell: func(sa admin.ServiceAccount) string { return strings.Join(sa.Scopes, ",") }, value: func(sa admin.ServiceAccount) any { return sa.Scopes }},
	{header: "CREATED", key: "created", cell: func(sa admin.ServiceAccount) string { return when(sa.Created) }, value: func(sa admin.ServiceAccount) any { return jsonTime(sa.Created) }},
	{header: "LAST USED", key: "last_used", cell: func(sa admin.ServiceAccount) string { return when(sa.LastUsed) }, value: func(sa admin.ServiceAccount) any { return jsonTime(sa.LastUsed) }},
	{header: "DISABLED", key: "disabled", cell: func(sa admin.ServiceAccount) string { return yesNo(sa.Disabled) }, value: func(sa admin.ServiceAccount) any { return sa.Disabled }},
	{header: "EXPIRES", key: "expires", cell: func(sa admin.ServiceAccount) string { return when(sa.Expires) }, value: func(sa admin.ServiceAccount) any { return jsonTime(sa.Expires) }},
}}

// runTokenRevoke disables a service account: its token is refused (401) from now on.
func runTokenRevoke(ctx context.Context, c *cli, args []string) int {
	return adminCommand{name: "token revoke", args: []string{"NAME"}, do: func(ctx context.Context, d *desk, args []string) int {
		sa, changed, err := d.ops.RevokeToken(ctx, d.by(), args[0])
		switch {
		case err != nil:
			return d.fail("%v", err)
		case !changed:
			fmt.Fprintf(d.c.stdout, "The token of service account %q is already revoked; nothing changed.\n", sa.Name)
		default:
			fmt.Fprintf(d.c.stdout, "The token of service account %q is revoked; requests with it are refused.\n", sa.Name)
		}
		return exitOK
	}}.run(ctx, c, args)
}

// runTokenRotate gives a service account a new token, printed once on stdout; the old one is
// refused from now on, and a revoked account works again with the new one.
func runTokenRotate(ctx context.Context, c *cli, args []string) int {
	return adminCommand{name: "token rotate", args: []string{"NAME"}, do: func(ctx context.Context, d *desk, args []string) int {
		sa, token, err := d.ops.RotateToken(ctx, d.by(), args[0])
		if err != nil {
			return d.fail("%v", err)
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
