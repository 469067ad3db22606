package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
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
	var username, role string
	f.bind.database(&dbc)
	f.bind.String(&username, "username")
	f.bind.String(&role, "role")
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
