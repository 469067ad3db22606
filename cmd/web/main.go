// Command runsdesk is the operator desk for AI agent runs that wait for a person: one binary
// with the subcommands serve, worker, migrate, user add, token create, apply, reap and cancel.
// `runsdesk help` lists them; config.go lists every flag and its environment variable.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}
