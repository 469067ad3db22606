package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"runsdesk/db"
)

// withRules is valid.yaml with standing_approvals (rules), written to a temporary file.
func withRules(t *testing.T, rules string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(path, []byte(readTestFile(t, validFile)+rules), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const twoRules = `standing_approvals:
  - name: small-refunds
    tool: issue_refund
    configuration: refunds
    when: {type: object, required: [amount], properties: {amount: {type: number, maximum: 50}}}
    until: 2027-01-31T00:00:00Z
    max_uses: 1000
    allow_writes: true
  - name: lookups
    tool: lookup_order
    when: {type: object}
`

// TestApplyStandingApprovalsListAndRevoke: apply stores the rules with their author, `rules
// list` shows each with its uses, and applying a file without one revokes it.
func TestApplyStandingApprovalsListAndRevoke(t *testing.T) {
	t.Parallel()
	env := applyEnv(t)
	if r := cliRun(t, env, nil, "user", "add", "--username", "ann", "--role", "admin"); r.code != exitOK {
		t.Fatalf("user add: %+v", r)
	}
	r := cliRun(t, env, nil, "apply", "-f", withRules(t, twoRules), "--author", "ann")
	if r.code != exitOK || !strings.Contains(r.stdout, "standing approval small-refunds: created\nstanding approval lookups: created\n") {
		t.Fatalf("apply: %+v", r)
	}
	rules, err := db.New(store(t, env).pool).StandingApprovals(context.Background())
	if err != nil || len(rules) != 2 {
		t.Fatalf("stored rules = %+v, %v", rules, err)
	}
	for _, rule := range rules {
		if rule.Author == 0 {
			t.Errorf("rule %s stored without its author", rule.Name)
		}
	}
	r = cliRun(t, env, nil, "rules", "list")
	out := lines(r.stdout)
	if r.code != exitOK || len(out) != 3 || !strings.HasPrefix(out[0], "NAME") {
		t.Fatalf("rules list: %+v", r)
	}
	if !strings.Contains(out[1], "lookups") || !strings.Contains(out[1], "(any)") || !strings.Contains(out[1], "in force") {
		t.Errorf("lookups row: %q", out[1])
	}
	if !strings.Contains(out[2], "small-refunds") || !strings.Contains(out[2], "0/1000") || !strings.Contains(out[2], "2027-01-31T00:00:00Z") {
		t.Errorf("small-refunds row: %q", out[2])
	}

	oneRule := twoRules[:strings.Index(twoRules, "  - name: lookups")]
	r = cliRun(t, env, nil, "apply", "-f", withRules(t, oneRule))
	if r.code != exitOK || !strings.Contains(r.stdout, "standing approval small-refunds: unchanged\nstanding approval lookups: revoked\n") || !strings.HasSuffix(r.stdout, ", 1 revoked.\n") {
		t.Fatalf("apply without lookups: %+v", r)
	}
	r = cliRun(t, env, nil, "rules", "list")
	if !strings.Contains(r.stdout, "revoked") {
		t.Errorf("rules list after revoking: %s", r.stdout)
	}
	r = cliRun(t, env, nil, "apply", "-f", validFile)
	if r.code != exitOK || strings.Contains(r.stdout, "standing approval") {
		t.Errorf("a file without standing_approvals touched the rules: %+v", r)
	}
}

// TestApplyRefusesBadStandingApprovals: every problem of a rule is named with its path and
// nothing is written.
func TestApplyRefusesBadStandingApprovals(t *testing.T) {
	t.Parallel()
	env := applyEnv(t)
	bad := `standing_approvals:
  - name: refunds
    tool: issue_refund
    when: {type: object}
  - name: Bad Name
    tool: no_such_tool
    configuration: nowhere
    when: {type: nonsense}
    until: tomorrow
    max_uses: 0
  - name: refunds
    tool: issue_refund
    configuration: refunds-scripted
    allow_writes: true
`
	r := cliRun(t, env, nil, "apply", "-f", withRules(t, bad))
	if r.code != exitFailure {
		t.Fatalf("apply: %+v", r)
	}
	for _, want := range []string{
		`standing_approvals[0].allow_writes: must be true: tool "issue_refund" declares a non-idempotent write`,
		"standing_approvals[1].name: must be",
		`standing_approvals[1].tool: names no tool`,
		`standing_approvals[1].configuration: names no configuration`,
		"standing_approvals[1].when:",
		"standing_approvals[1].until: must be a time in RFC 3339",
		"standing_approvals[1].max_uses: must be at least 1",
		`standing_approvals[2].name: repeats standing_approvals[0].name "refunds"`,
		`standing_approvals[2].configuration: configuration "refunds-scripted" does not offer tool "issue_refund"`,
		"standing_approvals[2].when: is required",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if r := cliRun(t, env, nil, "rules", "list"); r.stdout != "No standing approvals.\n" {
		t.Errorf("rules list after a refused apply: %+v", r)
	}
}

// TestApplyWithRulesIsOneTransaction: a rule that the database refuses to store leaves
// nothing of the file written: no tool, no configuration, no rule.
func TestApplyWithRulesIsOneTransaction(t *testing.T) {
	t.Parallel()
	env := applyEnv(t)
	c := store(t, env)
	if _, err := c.pool.ExecContext(context.Background(), `CREATE TRIGGER refuse_rule
		BEFORE INSERT ON tx_runsdesk_standing_approval FOR EACH ROW
		BEGIN
			IF NEW.name = 'lookups' THEN
				SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'injected failure';
			END IF;
		END`); err != nil {
		t.Fatal(err)
	}
	r := cliRun(t, env, nil, "apply", "-f", withRules(t, twoRules))
	if r.code != exitFailure || !strings.Contains(r.stderr, `standing approval "lookups"`) || !strings.Contains(r.stderr, "nothing was applied") {
		t.Fatalf("apply with a failing rule: %+v", r)
	}
	if got := tableTstamps(t, env); got != "0/0 0/0" {
		t.Errorf("catalog rows written by a failed apply: %s", got)
	}
	if r := cliRun(t, env, nil, "rules", "list"); r.stdout != "No standing approvals.\n" {
		t.Errorf("rules written by a failed apply: %+v", r)
	}
}

// TestRulesRevokeThenApplyRecreates: `rules revoke NAME` revokes a rule at once (audited;
// unknown names fail, a second revoke changes nothing), and an apply whose file still lists
// it re-creates it and says so, in the dry run too.
func TestRulesRevokeThenApplyRecreates(t *testing.T) {
	t.Parallel()
	env := applyEnv(t)
	file := withRules(t, twoRules)
	if r := cliRun(t, env, nil, "apply", "-f", file); r.code != exitOK {
		t.Fatalf("apply: %+v", r)
	}
	r := cliRun(t, env, nil, "rules", "revoke", "lookups")
	if r.code != exitOK || !strings.Contains(r.stdout, `Standing approval "lookups" is revoked`) {
		t.Fatalf("rules revoke: %+v", r)
	}
	if row := listRow(t, cliRun(t, env, nil, "rules", "list").stdout, "lookups"); row[len(row)-1] != "revoked" {
		t.Fatalf("rules list after revoke: %q", row)
	}
	var actor string
	if err := store(t, env).pool.QueryRow(`SELECT actor_name FROM tx_runsdesk_audit WHERE action = 'rules_revoke' AND outcome = 'success'`).Scan(&actor); err != nil || actor != "cli:runsdesk:rules" {
		t.Fatalf("audit row: %q, %v", actor, err)
	}
	if r := cliRun(t, env, nil, "rules", "revoke", "lookups"); r.code != exitOK || !strings.Contains(r.stdout, "already revoked; nothing changed") {
		t.Fatalf("second revoke: %+v", r)
	}
	if r := cliRun(t, env, nil, "rules", "revoke", "nonesuch"); r.code != exitFailure || !strings.Contains(r.stderr, `standing approval "nonesuch" not found`) {
		t.Fatalf("revoke of an unknown rule: %+v", r)
	}
	dry := cliRun(t, env, nil, "apply", "-f", file, "--dry-run")
	if dry.code != exitOK || !strings.Contains(dry.stdout, "standing approval lookups: re-create (revoked by the CLI at 20") {
		t.Fatalf("dry run: %+v", dry)
	}
	r = cliRun(t, env, nil, "apply", "-f", file)
	if r.code != exitOK || !strings.Contains(r.stdout, "standing approval lookups: re-created (revoked by the CLI at 20") ||
		!strings.Contains(r.stdout, "standing approval small-refunds: unchanged\n") || !strings.Contains(r.stdout, "Applied: 1 created,") {
		t.Fatalf("apply after the revoke: %+v", r)
	}
	if row := listRow(t, cliRun(t, env, nil, "rules", "list").stdout, "lookups"); row[len(row)-1] != "in force" {
		t.Fatalf("rules list after apply: %q", row)
	}
	if r := cliRun(t, env, nil, "apply", "-f", withRules(t, "standing_approvals: []\n")); r.code != exitOK {
		t.Fatalf("apply without rules: %+v", r)
	}
	if r := cliRun(t, env, nil, "apply", "-f", file); !strings.Contains(r.stdout, "standing approval lookups: created\n") {
		t.Fatalf("apply after an apply revoked it: %+v", r)
	}
}
