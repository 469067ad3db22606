package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"runsdesk/runtime"
	"runsdesk/runtime/admin"
)

// maxPasswordInput bounds what `user add` reads from standard input.
const maxPasswordInput = 4 << 10

// runUserAdd adds a person. The password is read from standard input when it is piped, else
// generated and printed once on stdout.
func runUserAdd(ctx context.Context, c *cli, args []string) int {
	f := c.newFlags("user add", "--username U --role admin|reviewer|support [flags]  (password on stdin, or generated)")
	var dbc database
	var username, role, email string
	f.bind.database(&dbc)
	f.bind.String(&username, "username")
	f.bind.String(&role, "role")
	f.bind.String(&email, "email")
	if ok, code := f.parse(args); !ok {
		return code
	}
	switch {
	case f.NArg() > 0:
		return f.fail("unexpected argument %q", f.Arg(0))
	case username == "":
		return f.fail("--username is required")
	}
	if err := admin.CheckRole(role); err != nil {
		return f.fail("--role: %v", err)
	}
	if err := admin.CheckEmail(email); err != nil {
		return f.fail("--email: %v", err)
	}
	password, err := readPassword(c.stdin)
	if err != nil {
		return c.failf("user add", "%v", err)
	}
	log := f.logger()
	conn, err := openDatabase(ctx, dbc, log)
	if err != nil {
		return c.failf("user add", "%v", err)
	}
	defer conn.close(log)
	if err := conn.migrated(ctx); err != nil {
		return c.failf("user add", "%v", err)
	}
	if err := refuseTYPO3Account(ctx, conn, username); err != nil {
		return c.failf("user add", "%v", err)
	}
	ops, err := newAdminDesk(conn)
	if err != nil {
		return c.failf("user add", "%v", err)
	}
	added, err := ops.Add(ctx, cliActor("user"), admin.NewPerson{Username: username, Role: runtime.Role(role), Email: email, Password: password})
	if err != nil {
		return c.failf("user add", "%v", err)
	}
	fmt.Fprintf(c.stderr, "User %q created (role %s, uid %d).\n", added.Username, role, added.UID)
	if added.Generated {
		fmt.Fprintln(c.stderr, "Generated password, shown only this once (on standard output):")
		fmt.Fprintln(c.stdout, added.Password)
	}
	return exitOK
}

// readPassword returns the password piped on stdin (its first line, without the line end),
// or "" (generate one) when stdin is absent or a terminal or character device (nothing piped).
// Piped input that is empty is an error, so a failed secret lookup never yields a silently
// generated password.
func readPassword(stdin io.Reader) (string, error) {
	if !piped(stdin) {
		return "", nil
	}
	data, err := io.ReadAll(io.LimitReader(stdin, maxPasswordInput+1))
	if err != nil {
		return "", fmt.Errorf("read the password from standard input: %w", err)
	}
	if len(data) > maxPasswordInput {
		return "", fmt.Errorf("standard input holds more than %d bytes; pipe only the password", maxPasswordInput)
	}
	line, _, _ := bufio.NewReader(strings.NewReader(string(data))).ReadLine()
	if len(line) == 0 {
		return "", errors.New("standard input is empty: pipe the password, or run without piped input to generate one")
	}
	return string(line), nil
}

// piped reports whether r carries piped or redirected data rather than a terminal.
func piped(r io.Reader) bool {
	if r == nil {
		return false
	}
	f, ok := r.(*os.File)
	if !ok {
		return true
	}
	st, err := f.Stat()
	if err != nil {
		return false
	}
	return st.Mode()&os.ModeCharDevice == 0
}

// runUserList prints every person who may sign in, with their role and state.
func runUserList(ctx context.Context, c *cli, args []string) int {
	return adminCommand{name: "user list", formats: listFormats, do: func(ctx context.Context, d *desk, _ []string) int {
		people, err := d.ops.People(ctx, d.by())
		if err != nil {
			return d.fail("%v", err)
		}
		return printList(d.c, d.name, d.format, userListing, people)
	}}.run(ctx, c, args)
}

// userListing is how user list prints a person.
var userListing = listing[admin.Person]{noun: "users", fields: []field[admin.Person]{
	{header: "USERNAME", key: "username", cell: func(u admin.Person) string { return u.Username }},
	{header: "ROLE", key: "role", cell: func(u admin.Person) string { return string(u.Role) }},
	{header: "DISABLED", key: "disabled", cell: func(u admin.Person) string { return yesNo(u.Disabled) }, value: func(u admin.Person) any { return u.Disabled }},
	{header: "MUST-CHANGE", key: "must_change_password", cell: func(u admin.Person) string { return yesNo(u.MustChangePassword) }, value: func(u admin.Person) any { return u.MustChangePassword }},
	{header: "LAST LOGIN", key: "last_login", cell: func(u admin.Person) string { return when(u.LastLogin) }, value: func(u admin.Person) any { return jsonTime(u.LastLogin) }},
	{header: "CREATED", key: "created", cell: func(u admin.Person) string { return when(u.Created) }, value: func(u admin.Person) any { return jsonTime(u.Created) }},
}}

// runUserDisable stops a person signing in and ends every session they have.
func runUserDisable(ctx context.Context, c *cli, args []string) int {
	return adminCommand{name: "user disable", account: true, args: []string{"USERNAME"}, do: func(ctx context.Context, d *desk, args []string) int {
		u, err := d.ops.Disable(ctx, d.by(), args[0])
		if err != nil {
			return d.fail("%v", err)
		}
		fmt.Fprintf(d.c.stdout, "User %q disabled; their sessions have ended.\n", u.Username)
		return exitOK
	}}.run(ctx, c, args)
}

// runUserEnable lets a disabled person sign in again.
func runUserEnable(ctx context.Context, c *cli, args []string) int {
	return adminCommand{name: "user enable", account: true, args: []string{"USERNAME"}, do: func(ctx context.Context, d *desk, args []string) int {
		u, changed, err := d.ops.Enable(ctx, d.by(), args[0])
		switch {
		case err != nil:
			return d.fail("%v", err)
		case !changed:
			fmt.Fprintf(d.c.stdout, "User %q is not disabled; nothing changed.\n", u.Username)
		default:
			fmt.Fprintf(d.c.stdout, "User %q enabled; they may sign in again.\n", u.Username)
		}
		return exitOK
	}}.run(ctx, c, args)
}

// runUserRole changes a person's role and ends their sessions, so it applies at once.
func runUserRole(ctx context.Context, c *cli, args []string) int {
	check := func(args []string) error { return admin.CheckRole(args[1]) }
	return adminCommand{name: "user role", account: true, args: []string{"USERNAME", "ROLE"}, check: check, do: func(ctx context.Context, d *desk, args []string) int {
		u, changed, err := d.ops.SetRole(ctx, d.by(), args[0], args[1])
		switch {
		case err != nil:
			return d.fail("%v", err)
		case !changed:
			fmt.Fprintf(d.c.stdout, "User %q already has the role %s; nothing changed.\n", u.Username, args[1])
		default:
			fmt.Fprintf(d.c.stdout, "User %q now has the role %s; their sessions have ended.\n", u.Username, args[1])
		}
		return exitOK
	}}.run(ctx, c, args)
}

// runUserResetPassword sets a new password (piped on stdin, or generated and printed once on
// stdout), ends the person's sessions, forgets their failed sign-ins and requires them to
// choose a new password at their next sign-in. It is how a lost admin password is recovered.
func runUserResetPassword(ctx context.Context, c *cli, args []string) int {
	return adminCommand{name: "user reset-password", account: true, args: []string{"USERNAME"}, do: func(ctx context.Context, d *desk, args []string) int {
		password, err := readPassword(d.c.stdin)
		if err != nil {
			return d.fail("%v", err)
		}
		u, reset, err := d.ops.ResetPassword(ctx, d.by(), args[0], password)
		if err != nil {
			return d.fail("%v", err)
		}
		fmt.Fprintf(d.c.stderr, "Password of %q reset; their sessions have ended and they must choose a new password at their next sign-in.\n", u.Username)
		if u.Disabled {
			fmt.Fprintf(d.c.stderr, "The user is disabled: `runsdesk user enable %s` lets them sign in.\n", u.Username)
		}
		if reset.Generated {
			fmt.Fprintln(d.c.stderr, "Generated password, shown only this once (on standard output):")
			fmt.Fprintln(d.c.stdout, reset.Password)
		}
		return exitOK
	}}.run(ctx, c, args)
}

// runUserEndSessions signs a person out everywhere without disabling them.
func runUserEndSessions(ctx context.Context, c *cli, args []string) int {
	return adminCommand{name: "user end-sessions", args: []string{"USERNAME"}, do: func(ctx context.Context, d *desk, args []string) int {
		u, err := d.ops.EndSessions(ctx, d.by(), args[0])
		if err != nil {
			return d.fail("%v", err)
		}
		fmt.Fprintf(d.c.stdout, "Every session of %q has ended.\n", u.Username)
		return exitOK
	}}.run(ctx, c, args)
}

// runUserEmail sets a person's address for the notifications that concern them (a run
// assigned to them): user email USERNAME ADDRESS, or - to remove it.
func runUserEmail(ctx context.Context, c *cli, args []string) int {
	check := func(args []string) error {
		if args[1] == "-" {
			return nil
		}
		if err := admin.CheckEmail(args[1]); err != nil {
			return fmt.Errorf("%w (- removes the address)", err)
		}
		return nil
	}
	return adminCommand{name: "user email", account: true, args: []string{"USERNAME", "ADDRESS"}, check: check, do: func(ctx context.Context, d *desk, args []string) int {
		email := strings.TrimPrefix(args[1], "-")
		u, changed, err := d.ops.SetEmail(ctx, d.by(), args[0], email)
		switch {
		case err != nil:
			return d.fail("%v", err)
		case !changed:
			fmt.Fprintf(d.c.stdout, "User %q already has that address; nothing changed.\n", u.Username)
		case email == "":
			fmt.Fprintf(d.c.stdout, "User %q has no email address now.\n", u.Username)
		default:
			fmt.Fprintf(d.c.stdout, "User %q is mailed at %s.\n", u.Username, email)
		}
		return exitOK
	}}.run(ctx, c, args)
}
