// Command runsdesk is the operator desk for AI agent runs that wait for a person: one binary
// with the subcommands serve, worker, migrate, the user and token commands (add, list,
// disable, enable, role, reset-password, end-sessions, mfa-reset; create, list, revoke, rotate),
// apply, rules list and revoke, reap, cancel, keys, notifications list, audit list, verify and
// keygen, healthcheck and version.
// `runsdesk help` lists them; config.go lists every flag and its environment variable. The
// first SIGINT or SIGTERM starts a graceful shutdown; a second one ends the process at once.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	// The IANA time zones a person may choose on their account page, on machines without them.
	_ "time/tzdata"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}
