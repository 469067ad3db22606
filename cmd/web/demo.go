package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"runsdesk/db"
	"runsdesk/runtime"
	"runsdesk/runtime/admin"
	"runsdesk/runtime/apply"
	"runsdesk/runtime/demo"
	"runsdesk/runtime/engine"
	"runsdesk/runtime/tool"
)

// demoLogin is one demo account created on a fresh desk, with its generated password.
type demoLogin struct {
	username string
	role     runtime.Role
	password string
}

// demoDesk is what setting up the demo desk did.
type demoDesk struct {
	fresh  bool
	logins []demoLogin
	runs   int
}

// demoAccounts are the people of the demo desk, the admin first: its existence tells a desk
// that was set up before.
func demoAccounts() []demoLogin {
	return []demoLogin{
		{username: "admin", role: runtime.RoleAdmin},
		{username: "reviewer", role: runtime.RoleReviewer},
		{username: "support", role: runtime.RoleSupport},
	}
}

// setUpDemo applies the demo desk file (through the same code as `apply -f`). On a fresh
// database, one without the user admin, it also creates the demo accounts with generated
// passwords and starts the demo runs, which the worker pool then takes up and which pause for
// input and for approval, started by the service account demo (so every role may act on them,
// four-eyes included). On a database set up before it changes no account and starts no run.
func setUpDemo(ctx context.Context, conn *conn, rt *engine.Runtime, tools []tool.Tool, getenv func(string) string) (demoDesk, error) {
	a := apply.New(apply.Config{Catalog: db.New(conn.pool), Builtin: tools, Getenv: getenv})
	plan, err := a.Plan(ctx, demo.Config())
	if err != nil {
		return demoDesk{}, fmt.Errorf("demo desk file: %w", err)
	}
	if _, err := a.Apply(ctx, plan); err != nil {
		return demoDesk{}, fmt.Errorf("demo desk file: %w", err)
	}
	accounts, err := db.NewAccounts(conn.pool, nil, 0)
	if err != nil {
		return demoDesk{}, err
	}
	var desk demoDesk
	for i, l := range demoAccounts() {
		pw, err := admin.GeneratePassword()
		if err != nil {
			return demoDesk{}, err
		}
		_, err = accounts.CreateUser(ctx, l.username, pw, l.role)
		if errors.Is(err, db.ErrUsernameTaken) {
			if i == 0 {
				return desk, nil
			}
			continue
		}
		if err != nil {
			return desk, fmt.Errorf("demo account %s: %w", l.username, err)
		}
		desk.fresh = true
		l.password = pw
		desk.logins = append(desk.logins, l)
	}
	starter, err := demoStarter(ctx, conn)
	if err != nil {
		return desk, err
	}
	for _, r := range demo.Runs() {
		if _, err := rt.Start(ctx, starter, r.Configuration, r.Prompt); err != nil {
			return desk, fmt.Errorf("demo run of %s: %w", r.Configuration, err)
		}
		desk.runs++
	}
	return desk, nil
}

// demoStarter creates the service account demo.ServiceAccount (scope run; its token is
// discarded, so nothing can sign in with it) and returns it as the actor that starts the demo
// runs, read back as the API would read it.
func demoStarter(ctx context.Context, conn *conn) (runtime.Actor, error) {
	tokens := db.NewServiceAccounts(conn.pool, nil)
	token, err := tokens.CreateToken(ctx, demo.ServiceAccount, []string{runtime.ScopeRun})
	if err != nil {
		return runtime.Actor{}, fmt.Errorf("demo service account: %w", err)
	}
	actor, err := tokens.ActorForToken(ctx, token)
	if err != nil {
		return runtime.Actor{}, fmt.Errorf("demo service account: %w", err)
	}
	return actor, nil
}

// print tells the person at the terminal where the desk is and how to sign in, in one write
// so that no log line lands inside it. Passwords are printed only here, once, on the desk's
// first start.
func (d demoDesk) print(out io.Writer, url, dataDir string, privateServer bool) {
	var w strings.Builder
	defer func() { _, _ = io.WriteString(out, w.String()) }()
	fmt.Fprintf(&w, "\nrunsdesk demo desk: %s\n", url)
	where := "the database given by RUNSDESK_DSN"
	reset := "drop and recreate that database"
	if privateServer {
		where = dataDir
		reset = "stop runsdesk (Ctrl-C), then rm -rf " + dataDir
	}
	if !d.fresh {
		fmt.Fprintf(&w, "Using the demo desk already set up in %s: sign in as admin with the password printed at its first start.\n", where)
		fmt.Fprintf(&w, "Lost it? To start over: %s, and run this again.\n\n", reset)
		return
	}
	fmt.Fprintln(&w, "Sign in with one of these accounts. The passwords are shown only this once:")
	for _, l := range d.logins {
		fmt.Fprintf(&w, "  %-9s %-11s password: %s\n", l.username, "("+string(l.role)+")", l.password)
	}
	fmt.Fprintf(&w, "%d demo runs started: the inbox shows them waiting for typed input and for approval.\n", d.runs)
	fmt.Fprintf(&w, "The data stays in %s; to start over: %s.\n\n", where, reset)
}
