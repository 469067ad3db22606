package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"runsdesk/db"
	"runsdesk/runtime/apply"
)

// runApply validates a YAML file of configurations, tools and standing approvals and, unless --dry-run, writes
// it in one transaction. Any problem in the file fails the command before anything is
// written, with every problem listed on stderr; a database failure while writing leaves
// nothing of the file written.
func runApply(ctx context.Context, c *cli, args []string) int {
	f := c.newFlags("apply", "-f FILE [--dry-run] [flags]")
	var dbc database
	var file, author string
	var dryRun, demoTools bool
	f.bind.database(&dbc)
	f.bind.String(&file, "file")
	f.StringVar(&file, "f", file, "shorthand for --file")
	f.bind.Bool(&dryRun, "dry-run")
	f.bind.String(&author, "author")
	f.bind.Bool(&demoTools, "demo")
	if ok, code := f.parse(args); !ok {
		return code
	}
	switch {
	case f.NArg() > 0:
		return f.fail("unexpected argument %q", f.Arg(0))
	case file == "":
		return f.fail("-f FILE is required")
	}
	data, err := readInput(c.stdin, file)
	if err != nil {
		return c.failf("apply", "%v", err)
	}
	log := f.logger()
	conn, err := openDatabase(ctx, dbc, log)
	if err != nil {
		return c.failf("apply", "%v", err)
	}
	defer conn.close(log)
	if err := conn.migrated(ctx); err != nil {
		return c.failf("apply", "%v", err)
	}
	authorUID, err := applyAuthor(ctx, conn, author)
	if err != nil {
		return c.failf("apply", "%v", err)
	}
	store := db.New(conn.pool)
	a := apply.New(apply.Config{Catalog: store, Rules: store, Author: authorUID, Builtin: builtinTools(demoTools), Getenv: c.getenv})
	plan, err := a.Plan(ctx, data)
	var problems apply.Problems
	switch {
	case errors.As(err, &problems):
		fmt.Fprintf(c.stderr, "runsdesk apply: %s: %v\n", file, problems)
		return exitFailure
	case err != nil:
		return c.failf("apply", "%v", err)
	}
	for _, w := range plan.Warnings {
		fmt.Fprintf(c.stderr, "runsdesk apply: warning: %s\n", w)
	}
	if dryRun {
		printChanges(c.stdout, plan.Changes, remoteLines(plan, true), true)
		return exitOK
	}
	d := &desk{c: c, name: "apply", audit: db.NewAudit(conn.pool, nil)}
	done, err := a.Apply(ctx, plan)
	if err != nil {
		if aerr := d.record(ctx, "failure", fmt.Sprintf("%s: %v", file, err)); aerr != nil {
			return c.failf("apply", "%v; %v", err, aerr)
		}
		return c.failf("apply", "%v", err)
	}
	if err := d.record(ctx, "success", applyReason(file, done)); err != nil {
		return c.failf("apply", "%v", err)
	}
	printChanges(c.stdout, done, remoteLines(plan, false), false)
	return exitOK
}

// applyReason is the reason of an apply's audit row: the file and what changed
// ("desk.yaml: 2 change(s): tool lookup_order created, configuration refunds updated").
func applyReason(file string, done []apply.Change) string {
	parts := make([]string, len(done))
	for i, ch := range done {
		parts[i] = ch.Kind + " " + ch.Name + " " + pastTense(ch.Action)
	}
	return fmt.Sprintf("%s: %d change(s): %s", file, len(done), strings.Join(parts, ", "))
}

// applyAuthor is the be_users.uid of the person --author names, 0 when it names none.
func applyAuthor(ctx context.Context, conn *conn, username string) (int64, error) {
	if username == "" {
		return 0, nil
	}
	accounts, err := db.NewAccounts(conn.pool, nil, 0)
	if err != nil {
		return 0, err
	}
	u, err := accounts.AccountByUsername(ctx, username)
	if err != nil {
		return 0, fmt.Errorf("--author: %w", err)
	}
	return u.UID, nil
}

// readInput reads the file named name, or standard input for "-".
func readInput(stdin io.Reader, name string) ([]byte, error) {
	var r io.Reader
	if name == "-" {
		if stdin == nil {
			return nil, errors.New("-f -: standard input is not available")
		}
		r = stdin
	} else {
		fh, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("read %w", err)
		}
		defer fh.Close()
		r = fh
	}
	data, err := io.ReadAll(io.LimitReader(r, apply.MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return data, nil
}

// remoteLines are the report lines of plan beyond its changes: each remote tool whose server
// changed it since it was applied, then the tier of every input schema.
func remoteLines(plan *apply.Plan, dryRun bool) []string {
	var lines []string
	for _, d := range plan.Drift {
		if dryRun {
			lines = append(lines, "changed "+d.String()+"; its calls are refused until this file is applied")
		} else {
			lines = append(lines, "changed "+d.String()+"; applied as the server describes it now")
		}
	}
	for _, t := range plan.Tiers {
		lines = append(lines, t.String())
	}
	return lines
}

// printChanges prints one line per change (a dry run's updates with the fields they change;
// a note, such as why a rule is re-created, in parentheses), then the extra lines, and a
// summary; a dry run says what would happen.
func printChanges(w io.Writer, changes []apply.Change, extra []string, dryRun bool) {
	counts := map[apply.Action]int{}
	for _, ch := range changes {
		counts[ch.Action]++
		word := string(ch.Action)
		if !dryRun {
			word = pastTense(ch.Action)
		}
		var notes []string
		if dryRun && ch.Action == apply.Update && len(ch.Fields) > 0 {
			notes = append(notes, strings.Join(ch.Fields, ", "))
		}
		if ch.Note != "" {
			notes = append(notes, ch.Note)
		}
		if len(notes) > 0 {
			word += " (" + strings.Join(notes, "; ") + ")"
		}
		fmt.Fprintf(w, "%s %s: %s\n", ch.Kind, ch.Name, word)
	}
	counts[apply.Create] += counts[apply.Recreate]
	for _, line := range extra {
		fmt.Fprintln(w, line)
	}
	if dryRun {
		fmt.Fprintf(w, "Dry run: %d to create, %d to update, %d unchanged%s; nothing was written.\n",
			counts[apply.Create], counts[apply.Update], counts[apply.Unchanged], toRevoke(counts[apply.Revoke]))
		return
	}
	fmt.Fprintf(w, "Applied: %d created, %d updated, %d unchanged%s.\n",
		counts[apply.Create], counts[apply.Update], counts[apply.Unchanged], revoked(counts[apply.Revoke]))
}

// toRevoke is the dry run's mention of standing approvals to revoke, "" when there are none.
func toRevoke(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", %d to revoke", n)
}

// revoked is the summary's mention of revoked standing approvals, "" when there were none.
func revoked(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", %d revoked", n)
}

func pastTense(a apply.Action) string {
	switch a {
	case apply.Create:
		return "created"
	case apply.Update:
		return "updated"
	case apply.Revoke:
		return "revoked"
	case apply.Recreate:
		return "re-created"
	}
	return string(a)
}
