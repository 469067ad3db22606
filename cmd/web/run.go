package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// Exit codes of every command.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// cli is what a command reads and writes: the standard streams and the environment.
type cli struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
}

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, c *cli, args []string) int
}

// commands lists the subcommands in the order help shows them.
func commands() []command {
	return []command{
		{"serve", "web UI, JSON API, workers and reaper in one process", runServe},
		{"worker", "workers and reaper only, to scale out", runWorker},
		{"migrate", "apply the database migrations", runMigrate},
		{"user add", "add a person: --username U --role admin|reviewer|support", runUserAdd},
		{"token create", "create a service-account token: --name N --scopes run,read,approve,cancel", runTokenCreate},
		{"apply", "create or update configurations and tools from a YAML file: -f FILE [--dry-run]", runApply},
		{"reap", "requeue or dead-letter runs whose lease lapsed: [--limit N]", runReap},
		{"cancel", "cancel a run: cancel UUID", runCancel},
	}
}

// run executes the command args names and returns its exit code: 0 success, 1 failure, 2 usage
// error. It writes results to stdout and errors and logs to stderr.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	c := &cli{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv}
	if len(args) == 0 {
		c.usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		c.usage(stdout)
		return exitOK
	}
	for _, cmd := range commands() {
		words := strings.Fields(cmd.name)
		if args[0] != words[0] {
			continue
		}
		if len(words) == 2 {
			if len(args) < 2 || args[1] != words[1] {
				fmt.Fprintf(stderr, "runsdesk %s: unknown or missing subcommand; did you mean `runsdesk %s`?\n", words[0], cmd.name)
				return exitUsage
			}
			return cmd.run(ctx, c, args[2:])
		}
		return cmd.run(ctx, c, args[1:])
	}
	fmt.Fprintf(stderr, "runsdesk: unknown command %q\n", args[0])
	c.usage(stderr)
	return exitUsage
}

// usage lists the commands.
func (c *cli) usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: runsdesk <command> [flags]")
	fmt.Fprintln(w)
	for _, cmd := range commands() {
		fmt.Fprintf(w, "  %-13s %s\n", cmd.name, cmd.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Every flag has an environment twin (RUNSDESK_…); `runsdesk <command> --help` lists them.")
}

// flags is the FlagSet of one command plus its settings binder.
type flags struct {
	*flag.FlagSet
	bind     *binder
	c        *cli
	name     string
	synopsis string
	logLevel string
}

// newFlags starts the flag set of command name; synopsis is the usage line after the name.
func (c *cli) newFlags(name, synopsis string) *flags {
	fs := flag.NewFlagSet("runsdesk "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := &flags{FlagSet: fs, bind: newBinder(fs, c.getenv), c: c, name: name, synopsis: synopsis}
	f.bind.String(&f.logLevel, "log-level")
	return f
}

// parse parses args. It returns false with the exit code to use when the command should
// stop: 0 after printing help for -h/--help, 2 after a usage error.
func (f *flags) parse(args []string) (bool, int) {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "-help" || a == "--help" {
			f.help(f.c.stdout)
			return false, exitOK
		}
	}
	if err := f.Parse(args); err != nil {
		return false, f.fail("%v", err)
	}
	if err := f.bind.Err(); err != nil {
		return false, f.fail("%v", err)
	}
	if _, err := parseLevel(f.logLevel); err != nil {
		return false, f.fail("%v", err)
	}
	return true, exitOK
}

// fail reports a usage error and returns exitUsage.
func (f *flags) fail(format string, args ...any) int {
	fmt.Fprintf(f.c.stderr, "runsdesk %s: %s\n", f.name, fmt.Sprintf(format, args...))
	fmt.Fprintf(f.c.stderr, "Run `runsdesk %s --help` for usage.\n", f.name)
	return exitUsage
}

// help prints the command's usage and flags.
func (f *flags) help(w io.Writer) {
	fmt.Fprintf(w, "Usage: runsdesk %s %s\n\nFlags:\n", f.name, f.synopsis)
	f.SetOutput(w)
	f.PrintDefaults()
	f.SetOutput(io.Discard)
}

// logger returns the command's JSON logger on stderr.
func (f *flags) logger() *slog.Logger {
	level, _ := parseLevel(f.logLevel)
	return slog.New(slog.NewJSONHandler(f.c.stderr, &slog.HandlerOptions{Level: level}))
}

// parseLevel reads a log level name.
func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, errors.New("--log-level: want debug, info, warn or error")
	}
	return l, nil
}

// failf reports a failure on stderr and returns exitFailure.
func (c *cli) failf(name, format string, args ...any) int {
	fmt.Fprintf(c.stderr, "runsdesk %s: %s\n", name, fmt.Sprintf(format, args...))
	return exitFailure
}
