package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
)

// Exit codes of every command.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// cli is what a command reads and writes: the standard streams and the environment, and
// whether a stream is a terminal (isTerminal; tests inject theirs).
type cli struct {
	stdin    io.Reader
	stdout   io.Writer
	stderr   io.Writer
	getenv   func(string) string
	terminal func(io.Writer) bool
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
		{"user list", "list the people who may sign in", runUserList},
		{"user disable", "stop a person signing in and end their sessions: user disable USERNAME", runUserDisable},
		{"user enable", "let a disabled person sign in again: user enable USERNAME", runUserEnable},
		{"user role", "change a person's role: user role USERNAME admin|reviewer|support", runUserRole},
		{"user reset-password", "set a new password, to be changed at next sign-in: user reset-password USERNAME", runUserResetPassword},
		{"user email", "set a person's address for the notifications that concern them: user email USERNAME ADDRESS (- removes it)", runUserEmail},
		{"user end-sessions", "sign a person out everywhere: user end-sessions USERNAME", runUserEndSessions},
		{"user mfa-reset", "remove a person's second factor and recovery codes and end their sessions: user mfa-reset USERNAME", runUserMFAReset},
		{"token create", "create a service-account token: --name N --scopes run,read,approve,cancel,content,request", runTokenCreate},
		{"token list", "list the service accounts (never their tokens)", runTokenList},
		{"token revoke", "stop a service account's token working: token revoke NAME", runTokenRevoke},
		{"token rotate", "give a service account a new token, ending the old one: token rotate NAME", runTokenRotate},
		{"apply", "create or update configurations, tools and standing approvals from a YAML file: -f FILE [--dry-run] [--author USERNAME]", runApply},
		{"rules list", "list the standing approvals with their uses", runRulesList},
		{"rules revoke", "revoke a standing approval at once: rules revoke NAME", runRulesRevoke},
		{"reap", "requeue or dead-letter runs whose lease lapsed: [--limit N]", runReap},
		{"cancel", "cancel a run: cancel UUID", runCancel},
		{"runs assign", "assign a waiting run to a person, or release it: runs assign UUID USERNAME|--release [--force]", runRunsAssign},
		{"retention run", "one retention pass, printing what it removed: [--dry-run] to only report it", runRetention},
		{"keys generate", "print a new sealing key for RUNSDESK_KEYS: [--id ID]", runKeysGenerate},
		{"keys rotate", "seal every sealed column's values again with the first key of RUNSDESK_KEYS: [--batch N] [--seal-clear]", runKeysRotate},
		{"keys status", "count the rows sealed with each key id, naming those missing from RUNSDESK_KEYS", runKeysStatus},
		{"notifications list", "list recent notifications and their delivery: [--failed] for those given up", runNotificationsList},
		{"audit list", "list the most recent rows of the audit trail: [--since T] [--actor A] [--action A] [--run UUID] [--outcome O] [--format table|json|csv|jsonl]", runAuditList},
		{"audit verify", "recompute the audit chain and check its signed checkpoints: [--from SEQ] [--checkpoints FILE]", runAuditVerify},
		{"audit keygen", "print a new key pair for signing the audit chain's checkpoints (RUNSDESK_AUDIT_KEY)", runAuditKeygen},
		{"healthcheck", "exit 0 when serve's /healthz answers 200, else 1: [--addr HOST:PORT] [--timeout D]", runHealthcheck},
		{"version", "print the module version, commit, build time and Go version", runVersion},
	}
}

// run executes the command args names and returns its exit code: 0 success, 1 failure, 2 usage
// error. It writes results to stdout and errors and logs to stderr.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	c := &cli{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv, terminal: isTerminal}
	return c.run(ctx, args)
}

// run executes the command args names on c's streams and environment.
func (c *cli) run(ctx context.Context, args []string) int {
	stdout, stderr := c.stdout, c.stderr
	if len(args) == 0 {
		c.usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		c.usage(stdout)
		return exitOK
	}
	var family []command
	for _, cmd := range commands() {
		words := strings.Fields(cmd.name)
		switch {
		case args[0] != words[0]:
			continue
		case len(words) == 1:
			return cmd.run(ctx, c, args[1:])
		case len(args) >= 2 && args[1] == words[1]:
			return cmd.run(ctx, c, args[2:])
		}
		family = append(family, cmd)
	}
	if len(family) == 0 {
		fmt.Fprintf(stderr, "runsdesk: unknown command %q\n", args[0])
		c.usage(stderr)
		return exitUsage
	}
	if len(args) >= 2 && slices.Contains([]string{"help", "-h", "-help", "--help"}, args[1]) {
		c.list(stdout, family)
		return exitOK
	}
	fmt.Fprintf(stderr, "runsdesk %s: unknown or missing subcommand; one of:\n", args[0])
	c.list(stderr, family)
	return exitUsage
}

// usage lists the commands.
func (c *cli) usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: runsdesk <command> [flags]")
	fmt.Fprintln(w)
	c.list(w, commands())
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Every flag has an environment twin (RUNSDESK_…); `runsdesk <command> --help` lists them.")
}

// list prints one line per command: its name and summary.
func (c *cli) list(w io.Writer, cmds []command) {
	for _, cmd := range cmds {
		fmt.Fprintf(w, "  %-20s %s\n", cmd.name, cmd.summary)
	}
}

// flags is the FlagSet of one command plus its settings binder. Flags may come before, after
// or between the positional arguments (NArg, Arg, Args), except after "--".
type flags struct {
	*flag.FlagSet
	bind       *binder
	c          *cli
	name       string
	synopsis   string
	logLevel   string
	logFormat  string
	positional []string
}

// newFlags starts the flag set of command name; synopsis is the usage line after the name.
func (c *cli) newFlags(name, synopsis string) *flags {
	fs := flag.NewFlagSet("runsdesk "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := &flags{FlagSet: fs, bind: newBinder(fs, c.getenv), c: c, name: name, synopsis: synopsis}
	f.bind.String(&f.logLevel, "log-level")
	f.bind.Choice(&f.logFormat, "log-format", "auto", "text", "json")
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
	for {
		if err := f.Parse(args); err != nil {
			return false, f.fail("%v", err)
		}
		rest := f.FlagSet.Args()
		if len(rest) == 0 || len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			f.positional = append(f.positional, rest...)
			break
		}
		f.positional = append(f.positional, rest[0])
		args = rest[1:]
	}
	if err := f.bind.Err(); err != nil {
		return false, f.fail("%v", err)
	}
	if _, err := parseLevel(f.logLevel); err != nil {
		return false, f.fail("%v", err)
	}
	return true, exitOK
}

// NArg is the number of positional arguments.
func (f *flags) NArg() int { return len(f.positional) }

// Arg is positional argument i, or "" when there are fewer.
func (f *flags) Arg(i int) string {
	if i < 0 || i >= len(f.positional) {
		return ""
	}
	return f.positional[i]
}

// Args are the positional arguments.
func (f *flags) Args() []string { return f.positional }

// fail reports a usage error and returns exitUsage.
func (f *flags) fail(format string, args ...any) int {
	fmt.Fprintf(f.c.stderr, "runsdesk %s: %s\n", f.name, fmt.Sprintf(format, args...))
	fmt.Fprintf(f.c.stderr, "Run `runsdesk %s --help` for usage.\n", f.name)
	return exitUsage
}

// help prints the command's usage and flags, each as it is written on a command line: a
// long name as --name, a one-letter one as -f, a choice with its values (--format table|json).
func (f *flags) help(w io.Writer) {
	fmt.Fprintf(w, "Usage: runsdesk %s %s\n\nFlags:\n", f.name, f.synopsis)
	f.VisitAll(func(fl *flag.Flag) {
		dash := "--"
		if len(fl.Name) == 1 {
			dash = "-"
		}
		kind, usage := flag.UnquoteUsage(fl)
		if c, ok := fl.Value.(choice); ok {
			kind = strings.Join(c.choices, "|")
		}
		line := "  " + dash + fl.Name
		if kind != "" {
			line += " " + kind
		}
		fmt.Fprintf(w, "%s\n    \t%s%s\n", line, usage, defaultNote(fl, kind))
	})
}

// defaultNote is the " (default …)" of a flag whose default is not its type's zero value.
func defaultNote(fl *flag.Flag, kind string) string {
	switch fl.DefValue {
	case "", "false", "0", "0s":
		return ""
	}
	if kind == "string" {
		return fmt.Sprintf(" (default %q)", fl.DefValue)
	}
	return " (default " + fl.DefValue + ")"
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
