package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/mail"
	"os"
	"strings"

	"runsdesk/db"
	"runsdesk/runtime"
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
	case !personRole(role):
		return f.fail("--role must be admin, reviewer or support, got %q", role)
	case email != "" && !validEmail(email):
		return f.fail("--email %q is not an email address like name@example.com", email)
	}
	password, generated, err := readPassword(c.stdin)
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
	accounts, err := db.NewAccounts(conn.pool, nil, 0)
	if err != nil {
		return c.failf("user add", "%v", err)
	}
	uid, err := accounts.CreateUser(ctx, username, password, runtime.Role(role))
	var policy *db.PolicyError
	switch {
	case errors.Is(err, db.ErrUsernameTaken):
		return c.failf("user add", "the username %q is already taken", username)
	case errors.As(err, &policy):
		return c.failf("user add", "%s", policy.Reason)
	case err != nil:
		return c.failf("user add", "%v", err)
	}
	if email != "" {
		if err := accounts.SetEmail(ctx, uid, email, nil); err != nil {
			return c.failf("user add", "user %q created, but the email address was not stored: %v", db.CanonicalUsername(username), err)
		}
	}
	fmt.Fprintf(c.stderr, "User %q created (role %s, uid %d).\n", db.CanonicalUsername(username), role, uid)
	if generated {
		fmt.Fprintln(c.stderr, "Generated password, shown only this once (on standard output):")
		fmt.Fprintln(c.stdout, password)
	}
	return exitOK
}

// personRole reports whether role is one a person may have.
func personRole(role string) bool {
	switch runtime.Role(role) {
	case runtime.RoleAdmin, runtime.RoleReviewer, runtime.RoleSupport:
		return true
	}
	return false
}

// readPassword returns the password piped on stdin (its first line, without the line end),
// or a generated one when stdin is absent or a terminal or character device (nothing piped).
// Piped input that is empty is an error, so a failed secret lookup never yields a silently
// generated password.
func readPassword(stdin io.Reader) (string, bool, error) {
	if !piped(stdin) {
		p, err := generatePassword()
		return p, true, err
	}
	data, err := io.ReadAll(io.LimitReader(stdin, maxPasswordInput+1))
	if err != nil {
		return "", false, fmt.Errorf("read the password from standard input: %w", err)
	}
	if len(data) > maxPasswordInput {
		return "", false, fmt.Errorf("standard input holds more than %d bytes; pipe only the password", maxPasswordInput)
	}
	line, _, _ := bufio.NewReader(strings.NewReader(string(data))).ReadLine()
	if len(line) == 0 {
		return "", false, errors.New("standard input is empty: pipe the password, or run without piped input to generate one")
	}
	return string(line), false, nil
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

// generatePassword returns 32 characters from 24 random bytes (192 bits).
func generatePassword() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate a password: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// runUserList prints every person who may sign in, with their role and state.
func runUserList(ctx context.Context, c *cli, args []string) int {
	return adminCommand{name: "user list", formats: listFormats, do: func(ctx context.Context, d *desk, _ []string) int {
		users, err := d.accounts.ListUsers(ctx)
		if err != nil {
			return d.fail("%v", err)
		}
		if err := d.record(ctx, "success", fmt.Sprintf("users listed: %d", len(users))); err != nil {
			return d.fail("%v", err)
		}
		return printList(d.c, d.name, d.format, userListing, users)
	}}.run(ctx, c, args)
}

// userListing is how user list prints a person.
var userListing = listing[db.User]{noun: "users", fields: []field[db.User]{
	{header: "USERNAME", key: "username", cell: func(u db.User) string { return u.Username }},
	{header: "ROLE", key: "role", cell: func(u db.User) string { return string(u.Role) }},
	{header: "DISABLED", key: "disabled", cell: func(u db.User) string { return yesNo(u.Disabled) }, value: func(u db.User) any { return u.Disabled }},
	{header: "MUST-CHANGE", key: "must_change_password", cell: func(u db.User) string { return yesNo(u.PasswordChangeRequired) }, value: func(u db.User) any { return u.PasswordChangeRequired }},
	{header: "LAST LOGIN", key: "last_login", cell: func(u db.User) string { return when(u.LastLogin) }, value: func(u db.User) any { return jsonTime(u.LastLogin) }},
	{header: "CREATED", key: "created", cell: func(u db.User) string { return when(u.Created) }, value: func(u db.User) any { return jsonTime(u.Created) }},
}}

// runUserDisable stops a person signing in and ends every session they have.
func runUserDisable(ctx context.Context, c *cli, args []string) int {
	return adminCommand{name: "user disable", args: []string{"USERNAME"}, do: func(ctx context.Context, d *desk, args []string) int {
		u, ok, code := d.user(ctx, args[0])
		if !ok {
			return code
		}
		if code := d.done(ctx, d.accounts.DisableUser(ctx, u.UID, d.change(describeUser(u))), userLabel(u.Username)); code != exitOK {
			return code
		}
		fmt.Fprintf(d.c.stdout, "User %q disabled; their sessions have ended.\n", u.Username)
		return exitOK
	}}.run(ctx, c, args)
}

// runUserEnable lets a disabled person sign in again.
func runUserEnable(ctx context.Context, c *cli, args []string) int {
	return adminCommand{name: "user enable", args: []string{"USERNAME"}, do: func(ctx context.Context, d *desk, args []string) int {
		u, ok, code := d.user(ctx, args[0])
		if !ok {
			return code
		}
		if !u.Disabled {
			fmt.Fprintf(d.c.stdout, "User %q is not disabled; nothing changed.\n", u.Username)
			return exitOK
		}
		if code := d.done(ctx, d.accounts.EnableUser(ctx, u.UID, d.change(describeUser(u))), userLabel(u.Username)); code != exitOK {
			return code
		}
		fmt.Fprintf(d.c.stdout, "User %q enabled; they may sign in again.\n", u.Username)
		return exitOK
	}}.run(ctx, c, args)
}

// runUserRole changes a person's role and ends their sessions, so it applies at once.
func runUserRole(ctx context.Context, c *cli, args []string) int {
	check := func(args []string) error {
		if !personRole(args[1]) {
			return fmt.Errorf("the role must be admin, reviewer or support, got %q", args[1])
		}
		return nil
	}
	return adminCommand{name: "user role", args: []string{"USERNAME", "ROLE"}, check: check, do: func(ctx context.Context, d *desk, args []string) int {
		u, ok, code := d.user(ctx, args[0])
		if !ok {
			return code
		}
		role := runtime.Role(args[1])
		if u.Role == role {
			fmt.Fprintf(d.c.stdout, "User %q already has the role %s; nothing changed.\n", u.Username, role)
			return exitOK
		}
		reason := fmt.Sprintf("%s: role %s → %s", describeUser(u), u.Role, role)
		if code := d.done(ctx, d.accounts.SetRole(ctx, u.UID, role, d.change(reason)), userLabel(u.Username)); code != exitOK {
			return code
		}
		fmt.Fprintf(d.c.stdout, "User %q now has the role %s; their sessions have ended.\n", u.Username, role)
		return exitOK
	}}.run(ctx, c, args)
}

// runUserResetPassword sets a new password (piped on stdin, or generated and printed once on
// stdout), ends the person's sessions, forgets their failed sign-ins and requires them to
// choose a new password at their next sign-in. It is how a lost admin password is recovered.
func runUserResetPassword(ctx context.Context, c *cli, args []string) int {
	return adminCommand{name: "user reset-password", args: []string{"USERNAME"}, do: func(ctx context.Context, d *desk, args []string) int {
		u, ok, code := d.user(ctx, args[0])
		if !ok {
			return code
		}
		password, generated, err := readPassword(d.c.stdin)
		if err != nil {
			return d.fail("%v", err)
		}
		err = d.accounts.ResetPassword(ctx, u.UID, password, d.change(describeUser(u)))
		var policy *db.PolicyError
		if errors.As(err, &policy) {
			return d.fail("%s", policy.Reason)
		}
		if code := d.done(ctx, err, userLabel(u.Username)); code != exitOK {
			return code
		}
		throttle := db.NewLoginThrottle(d.conn.pool, db.DefaultLoginLimits())
		if err := throttle.Succeed(ctx, throttle.UserAccount(u.UID)); err != nil {
			return d.fail("password reset, but their failed sign-ins were not forgotten (they may have to wait): %v", err)
		}
		fmt.Fprintf(d.c.stderr, "Password of %q reset; their sessions have ended and they must choose a new password at their next sign-in.\n", u.Username)
		if u.Disabled {
			fmt.Fprintf(d.c.stderr, "The user is disabled: `runsdesk user enable %s` lets them sign in.\n", u.Username)
		}
		if generated {
			fmt.Fprintln(d.c.stderr, "Generated password, shown only this once (on standard output):")
			fmt.Fprintln(d.c.stdout, password)
		}
		return exitOK
	}}.run(ctx, c, args)
}

// runUserEndSessions signs a person out everywhere without disabling them.
func runUserEndSessions(ctx context.Context, c *cli, args []string) int {
	return adminCommand{name: "user end-sessions", args: []string{"USERNAME"}, do: func(ctx context.Context, d *desk, args []string) int {
		u, ok, code := d.user(ctx, args[0])
		if !ok {
			return code
		}
		if code := d.done(ctx, d.accounts.EndSessions(ctx, u.UID, d.change(describeUser(u))), userLabel(u.Username)); code != exitOK {
			return code
		}
		fmt.Fprintf(d.c.stdout, "Every session of %q has ended.\n", u.Username)
		return exitOK
	}}.run(ctx, c, args)
}

// describeUser names u in audit reasons: `user "ann" (uid 3)`.
func describeUser(u db.User) string {
	return fmt.Sprintf("%s (uid %d)", userLabel(u.Username), u.UID)
}

// runUserEmail sets a person's address for the notifications that concern them (a run
// assigned to them): user email USERNAME ADDRESS, or - to remove it.
func runUserEmail(ctx context.Context, c *cli, args []string) int {
	check := func(args []string) error {
		if args[1] != "-" && !validEmail(args[1]) {
			return fmt.Errorf("%q is not an email address like name@example.com (- removes the address)", args[1])
		}
		return nil
	}
	return adminCommand{name: "user email", args: []string{"USERNAME", "ADDRESS"}, check: check, do: func(ctx context.Context, d *desk, args []string) int {
		u, ok, code := d.user(ctx, args[0])
		if !ok {
			return code
		}
		email := strings.TrimPrefix(args[1], "-")
		if u.Email == email {
			fmt.Fprintf(d.c.stdout, "User %q already has that address; nothing changed.\n", u.Username)
			return exitOK
		}
		reason := fmt.Sprintf("%s: email changed", describeUser(u))
		if code := d.done(ctx, d.accounts.SetEmail(ctx, u.UID, email, d.change(reason)), userLabel(u.Username)); code != exitOK {
			return code
		}
		if email == "" {
			fmt.Fprintf(d.c.stdout, "User %q has no email address now.\n", u.Username)
			return exitOK
		}
		fmt.Fprintf(d.c.stdout, "User %q is mailed at %s.\n", u.Username, email)
		return exitOK
	}}.run(ctx, c, args)
}

// validEmail reports whether s is a bare address (name@example.com), as notification rules
// accept them.
func validEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && len(s) <= 254
}
