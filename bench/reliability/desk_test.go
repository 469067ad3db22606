package reliability

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"runsdesk/db"
	"runsdesk/db/dbtest"
)

// Test people and configurations.
const (
	adminName     = "ada"
	adminPassword = "a long reliability passphrase"
	cfgAsk        = "ask"
	cfgRefund     = "refund"
	askTool       = "ask_amount"
	refundTool    = "refund"
)

// askArguments are the model's arguments to ask_amount; the person's amount replaces its
// amount (a declared key), order_id stays.
const askArguments = `{"order_id":"A-1","amount":999}`

// deskYAML is applied with `runsdesk apply -f`: "ask" pauses once for typed input (an HTTP
// input tool) and then finishes; "refund" pauses for approval of a non-idempotent HTTP write.
const deskYAML = `configurations:
  - identifier: ask
    name: Ask for an amount
    max_iterations: 5
    tools: [ask_amount]
    provider:
      kind: scripted
      script:
        - tool_calls:
            - name: ask_amount
              arguments: ` + askArguments + `
        - content: Done.
  - identifier: refund
    name: Refund
    max_iterations: 5
    tools: [refund]
    provider:
      kind: scripted
      script:
        - tool_calls:
            - name: refund
              arguments: {"order_id": "A-1", "amount": 25}
        - content: Refunded.
tools:
  - name: ask_amount
    description: Ask a person how much to refund.
    parameters: {type: object, properties: {order_id: {type: string}, amount: {type: number}}}
    input_schema: {type: object, required: [amount], properties: {amount: {type: number, minimum: 0}}}
    http: {url: "%s/ask", timeout: 10s}
  - name: refund
    description: Issue a refund.
    parameters: {type: object, properties: {order_id: {type: string}, amount: {type: number}}}
    effect: non_idempotent_write
    http: {url: "%s/refund", timeout: 10s}
`

// desk is a migrated database with an admin, a run+read token and the test configurations,
// and the binary to run against it.
type desk struct {
	t        *testing.T
	bin      string
	dsn      string
	env      []string
	token    string
	tools    *endpoint
	sql      *sql.DB
	adminUID int64
}

// newDesk builds the binary (with tags) and prepares a fresh database on the shared test
// server with the CLI: migrate, user add, token create, apply.
func newDesk(t *testing.T, tags string) *desk {
	return newDeskOn(t, tags, dbtest.NewDatabase(t))
}

// newDeskOn is newDesk on the database dsn names.
func newDeskOn(t *testing.T, tags, dsn string) *desk {
	t.Helper()
	d := &desk{t: t, bin: buildBinary(t, tags), dsn: dsn, tools: newEndpoint(t)}
	dir := t.TempDir()
	d.env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "RUNSDESK_DSN=" + dsn,
		"RUNSDESK_DATA_DIR=" + dir, "RUNSDESK_LOG_LEVEL=warn", "RUNSDESK_WORKERS=2",
	}
	d.mustCLI("", "migrate")
	d.mustCLI(adminPassword+"\n", "user", "add", "--username", adminName, "--role", "admin")
	d.token = strings.TrimSpace(d.mustCLI("", "token", "create", "--name", "reliability", "--scopes", "run,read"))
	file := filepath.Join(dir, "desk.yaml")
	yaml := fmt.Sprintf(deskYAML, d.tools.srv.URL, d.tools.srv.URL)
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	d.mustCLI("", "apply", "-f", file)
	pool, err := db.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	d.sql = pool
	if err := pool.QueryRow("SELECT uid FROM be_users WHERE username = ?", adminName).Scan(&d.adminUID); err != nil {
		t.Fatalf("admin uid: %v", err)
	}
	return d
}

// cli runs a command of the binary against the desk's database.
func (d *desk) cli(stdin string, args ...string) cliResult {
	d.t.Helper()
	return runCLI(d.t, d.bin, d.env, stdin, args...)
}

// mustCLI runs a command that must succeed and returns its standard output.
func (d *desk) mustCLI(stdin string, args ...string) string {
	d.t.Helper()
	r := d.cli(stdin, args...)
	if r.code != 0 {
		d.t.Fatalf("runsdesk %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// serve starts a serve process on the desk's database with extra environment.
func (d *desk) serve(extra ...string) *server {
	d.t.Helper()
	return startServe(d.t, d.bin, d.env, extra...)
}
