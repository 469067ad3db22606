package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const validFile = "../../runtime/apply/testdata/valid.yaml"

// applyEnv is a migrated database plus the variables valid.yaml references.
func applyEnv(t *testing.T) environ {
	env := newDatabase(t)
	env["OPENAI_API_KEY"], env["REFUND_TOKEN"] = "sk-test", "rt-test"
	return env
}

func TestApplyCreatesThenChangesNothing(t *testing.T) {
	t.Parallel()
	env := applyEnv(t)
	r := cliRun(t, env, nil, "apply", "-f", validFile)
	want := `tool lookup_order: created
tool ask_refund_amount: created
tool issue_refund: created
configuration refunds: created
configuration refunds-scripted: created
tool ask_refund_amount: input_schema portable
Applied: 5 created, 0 updated, 0 unchanged.
`
	if r.code != exitOK || r.stdout != want {
		t.Fatalf("first apply: exit %d\n%s\nwant\n%s\nstderr: %s", r.code, r.stdout, want, r.stderr)
	}
	before := tableTstamps(t, env)
	r = cliRun(t, env, nil, "apply", "--file", validFile)
	if r.code != exitOK || !strings.HasSuffix(r.stdout, "Applied: 0 created, 0 updated, 5 unchanged.\n") {
		t.Errorf("second apply: %+v", r)
	}
	if after := tableTstamps(t, env); after != before {
		t.Errorf("second apply wrote: %s -> %s", before, after)
	}
	r = cliRun(t, env, strings.NewReader(readTestFile(t, validFile)), "apply", "-f", "-", "--dry-run")
	if r.code != exitOK || !strings.HasSuffix(r.stdout, "Dry run: 0 to create, 0 to update, 5 unchanged; nothing was written.\n") {
		t.Errorf("dry run from stdin: %+v", r)
	}
}

func TestApplyDryRunWritesNothing(t *testing.T) {
	t.Parallel()
	env := applyEnv(t)
	if r := cliRun(t, env, nil, "apply", "-f", validFile); r.code != exitOK {
		t.Fatalf("apply: %+v", r)
	}
	before := tableTstamps(t, env)
	changed := strings.Replace(readTestFile(t, validFile), "max_iterations: 10", "max_iterations: 11", 1)
	changed += "  - name: tag_ticket\n    effect: idempotent_write\n    http: {url: \"http://127.0.0.1:9000/tag\"}\n"
	path := filepath.Join(t.TempDir(), "changed.yaml")
	if err := os.WriteFile(path, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	env["RUNSDESK_DRY_RUN"] = "true"
	r := cliRun(t, env, nil, "apply", "-f", path)
	want := `tool lookup_order: unchanged
tool ask_refund_amount: unchanged
tool issue_refund: unchanged
tool tag_ticket: create
configuration refunds: update (max_iterations)
configuration refunds-scripted: unchanged
tool ask_refund_amount: input_schema portable
Dry run: 1 to create, 1 to update, 4 unchanged; nothing was written.
`
	if r.code != exitOK || r.stdout != want {
		t.Errorf("dry run: exit %d\n%s\nwant\n%s\nstderr: %s", r.code, r.stdout, want, r.stderr)
	}
	if after := tableTstamps(t, env); after != before {
		t.Errorf("dry run wrote: %s -> %s", before, after)
	}
}

func TestApplyReportsEveryProblemAndWritesNothing(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	r := cliRun(t, env, nil, "apply", "-f", "../../runtime/apply/testdata/five-mistakes.yaml")
	if r.code != exitFailure || r.stdout != "" {
		t.Fatalf("apply: %+v", r)
	}
	for _, want := range []string{
		"5 problems; nothing was applied:",
		`configurations[0].provider.kind: unknown kind "foo"`,
		"configurations[0].colour: unknown key",
		`configurations[0].tools[1]: tool "x" is not defined`,
		"tools[1].http.headers.Authorization: environment variable REFUND_TOKEN is not set",
		"tools[2].input_schema: not usable (an empty schema accepts anything)",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if got := tableTstamps(t, env); got != "0/0 0/0" {
		t.Errorf("rows written: %s", got)
	}
}

func TestApplyMissingFile(t *testing.T) {
	t.Parallel()
	r := cliRun(t, environ{"RUNSDESK_DSN": "unused"}, nil, "apply", "-f", filepath.Join(t.TempDir(), "none.yaml"))
	if r.code != exitFailure || !strings.Contains(r.stderr, "none.yaml: no such file") {
		t.Errorf("apply: %+v", r)
	}
}

func TestApplyKnowsTheDemoToolsOnlyWithDemo(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	path := filepath.Join(t.TempDir(), "demo-ref.yaml")
	file := "configurations:\n  - identifier: c\n    name: C\n    tools: [lookup_order]\n    provider: {kind: scripted, script: [{content: hi}]}\n"
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := cliRun(t, env, nil, "apply", "-f", path); r.code != exitFailure || !strings.Contains(r.stderr, `tool "lookup_order" is not defined`) {
		t.Errorf("without --demo: %+v", r)
	}
	if r := cliRun(t, env, nil, "apply", "-f", path, "--demo"); r.code != exitOK {
		t.Errorf("with --demo: %+v", r)
	}
}

// tableTstamps summarises the catalog tables as "rows/checksum" for tools and configurations,
// to see whether anything was written.
func tableTstamps(t *testing.T, env environ) string {
	t.Helper()
	return tableSums(t, env, "tx_runsdesk_tool", "tx_nrllm_configuration")
}

// tableSums summarises tables as "rows/checksum", one after the other.
func tableSums(t *testing.T, env environ, tables ...string) string {
	t.Helper()
	c := store(t, env)
	var out []string
	for _, table := range tables {
		var n int64
		var name string
		var sum sql.NullInt64
		ctx := context.Background()
		if err := c.pool.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if err := c.pool.QueryRowContext(ctx, "CHECKSUM TABLE "+table).Scan(&name, &sum); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%d/%d", n, sum.Int64))
	}
	return strings.Join(out, " ")
}

func readTestFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// failInsertsOf makes the database refuse inserting the configuration identifier: a real
// failure in the middle of an apply, after the file's tools were written.
func failInsertsOf(t *testing.T, env environ, identifier string) {
	t.Helper()
	c := store(t, env)
	_, err := c.pool.ExecContext(context.Background(), `CREATE TRIGGER refuse_configuration
		BEFORE INSERT ON tx_nrllm_configuration FOR EACH ROW
		BEGIN
			IF NEW.identifier = '`+identifier+`' THEN
				SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'injected failure';
			END IF;
		END`)
	if err != nil {
		t.Fatal(err)
	}
}

// TestApplyIsOneTransaction: when the database fails on the last item of a file, nothing of
// the file is stored: neither the items created before it nor the updates made before it.
func TestApplyIsOneTransaction(t *testing.T) {
	t.Parallel()
	env := applyEnv(t)
	failInsertsOf(t, env, "refunds-scripted")
	r := cliRun(t, env, nil, "apply", "-f", validFile)
	if r.code != exitFailure || !strings.Contains(r.stderr, `configuration "refunds-scripted"`) || !strings.Contains(r.stderr, "nothing was applied") {
		t.Fatalf("apply with a failing insert: %+v", r)
	}
	if got := tableTstamps(t, env); got != "0/0 0/0" {
		t.Errorf("rows written by a failed apply: %s", got)
	}

	file := strings.Replace(readTestFile(t, validFile), "identifier: refunds-scripted", "identifier: refunds-later", 1)
	path := filepath.Join(t.TempDir(), "first.yaml")
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := cliRun(t, env, nil, "apply", "-f", path); r.code != exitOK {
		t.Fatalf("apply without the failing item: %+v", r)
	}
	before := tableTstamps(t, env)
	changed := strings.Replace(readTestFile(t, validFile), "description: Issue the refund.", "description: Issue it.", 1)
	changed = strings.Replace(changed, "max_iterations: 10", "max_iterations: 12", 1)
	if err := os.WriteFile(path, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	r = cliRun(t, env, nil, "apply", "-f", path)
	if r.code != exitFailure || !strings.Contains(r.stderr, `configuration "refunds-scripted"`) {
		t.Fatalf("update with a failing insert: %+v", r)
	}
	if after := tableTstamps(t, env); after != before {
		t.Errorf("a failed apply changed stored items: %s -> %s", before, after)
	}
}

// TestApplyStoresTheLongestNames: the longest identifier and tool name the rules allow fit
// their columns and are stored as written; one character more is refused before writing.
func TestApplyStoresTheLongestNames(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	id, name := strings.Repeat("r", 149)+"9", "T"+strings.Repeat("t", 62)+"-"
	file := func(id, name string) string {
		return "configurations:\n  - identifier: " + id + "\n    name: C\n    tools: [" + name + "]\n" +
			"    provider: {kind: scripted, script: [{content: hi}]}\n" +
			"tools:\n  - name: " + name + "\n    http: {url: \"http://127.0.0.1:9000/t\"}\n"
	}
	path := filepath.Join(t.TempDir(), "long.yaml")
	if err := os.WriteFile(path, []byte(file(id+"x", name+"x")), 0o600); err != nil {
		t.Fatal(err)
	}
	r := cliRun(t, env, nil, "apply", "-f", path)
	if r.code != exitFailure || !strings.Contains(r.stderr, "configurations[0].identifier: must be 1 to 150 characters") ||
		!strings.Contains(r.stderr, "tools[0].name: name must be 1 to 64 characters") {
		t.Fatalf("one character too long: %+v", r)
	}
	if err := os.WriteFile(path, []byte(file(id, name)), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := cliRun(t, env, nil, "apply", "-f", path); r.code != exitOK {
		t.Fatalf("longest names: %+v", r)
	}
	c := store(t, env)
	var storedID, storedTools, storedName string
	if err := c.pool.QueryRowContext(context.Background(), `SELECT identifier, allowed_tools FROM tx_nrllm_configuration`).Scan(&storedID, &storedTools); err != nil {
		t.Fatal(err)
	}
	if err := c.pool.QueryRowContext(context.Background(), `SELECT name FROM tx_runsdesk_tool`).Scan(&storedName); err != nil {
		t.Fatal(err)
	}
	if storedID != id || storedName != name || storedTools != `["`+name+`"]` {
		t.Errorf("stored %q / %q / %s", storedID, storedName, storedTools)
	}
}
