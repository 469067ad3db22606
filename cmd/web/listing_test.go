package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// jsonKeys returns the keys of the JSON object text in their order.
func jsonKeys(t *testing.T, object []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(object))
	var keys []string
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", object)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// listJSON runs a list command with --format json and returns its objects, each checked to
// hold keys in that order.
func listJSON(t *testing.T, env environ, keys []string, args ...string) []map[string]any {
	t.Helper()
	r := cliRun(t, env, nil, append(args, "--format", "json")...)
	var raw []json.RawMessage
	if r.code != exitOK || json.Unmarshal([]byte(r.stdout), &raw) != nil || len(raw) == 0 {
		t.Fatalf("%v --format json: %+v", args, r)
	}
	out := make([]map[string]any, len(raw))
	for i, o := range raw {
		if got := jsonKeys(t, o); !slices.Equal(got, keys) {
			t.Errorf("%v: keys %v, want %v", args, got, keys)
		}
		_ = json.Unmarshal(o, &out[i])
	}
	return out
}

// TestListCommandsPrintTablesAndJSON: user list, token list, rules list and audit list print
// a table by default and, with --format json, an array of objects with the fields docs/cli.md
// names, in order, with JSON types (booleans, numbers, lists, RFC 3339 times, null for
// unset); the audit list also as CSV and JSON Lines with the same fields.
func TestListCommandsPrintTablesAndJSON(t *testing.T) {
	t.Parallel()
	env := applyEnv(t)
	addUser(t, env, "ann", "admin", annPassword)
	if r := cliRun(t, env, nil, "token", "create", "--name", "ci", "--scopes", "run,read"); r.code != exitOK {
		t.Fatalf("token create: %+v", r)
	}
	if r := cliRun(t, env, nil, "apply", "-f", withRules(t, twoRules), "--author", "ann"); r.code != exitOK {
		t.Fatalf("apply: %+v", r)
	}
	for _, c := range []struct {
		args   []string
		header string
	}{
		{[]string{"user", "list"}, "USERNAME  ROLE   DISABLED  MUST-CHANGE  LAST LOGIN  CREATED"},
		{[]string{"token", "list"}, "NAME  SCOPES    CREATED"},
		{[]string{"rules", "list"}, "NAME           TOOL          CONFIGURATION  USES    UNTIL                 STATE"},
		{[]string{"audit", "list"}, "ID  TIME"},
	} {
		for _, format := range [][]string{nil, {"--format", "table"}} {
			if r := cliRun(t, env, nil, append(c.args, format...)...); r.code != exitOK || !strings.HasPrefix(r.stdout, c.header) {
				t.Errorf("%v %v: exit %d, want a table under %q:\n%s%s", c.args, format, r.code, c.header, r.stdout, r.stderr)
			}
		}
	}

	users := listJSON(t, env, []string{"username", "role", "disabled", "must_change_password", "last_login", "created"}, "user", "list")
	if u := users[0]; u["username"] != "ann" || u["role"] != "admin" || u["disabled"] != false || u["last_login"] != nil ||
		!strings.HasSuffix(u["created"].(string), "Z") {
		t.Errorf("user list json: %v", u)
	}
	tokens := listJSON(t, env, []string{"name", "scopes", "created", "last_used", "disabled", "expires"}, "token", "list")
	if sa := tokens[0]; sa["name"] != "ci" || len(sa["scopes"].([]any)) != 2 || sa["last_used"] != nil || sa["disabled"] != false || sa["expires"] != nil {
		t.Errorf("token list json: %v", sa)
	}
	rules := listJSON(t, env, []string{"name", "tool", "configuration", "uses", "max_uses", "until", "state"}, "rules", "list")
	if len(rules) != 2 || rules[0]["name"] != "lookups" || rules[0]["configuration"] != nil || rules[0]["max_uses"] != nil ||
		rules[1]["configuration"] != "refunds" || rules[1]["uses"] != 0.0 || rules[1]["max_uses"] != 1000.0 ||
		rules[1]["until"] != "2027-01-31T00:00:00Z" || rules[1]["state"] != "in force" {
		t.Errorf("rules list json: %v", rules)
	}
	auditKeys := []string{"id", "time", "actor", "actor_uid", "ip", "action", "run", "outcome", "reason", "chain_seq"}
	audit := listJSON(t, env, auditKeys, "audit", "list")
	if a := audit[0]; a["actor"] != "cli:runsdesk:token" || a["action"] != "token_list" || a["outcome"] != "success" || a["run"] != nil ||
		a["actor_uid"] != 0.0 || a["chain_seq"] != 0.0 {
		t.Errorf("newest audit row: %v", a)
	}
	// The table listings above were audited themselves.
	listed := 0
	for _, a := range audit {
		if a["action"] == "audit_list" && a["actor"] == "cli:runsdesk:audit" && strings.HasSuffix(a["reason"].(string), " rows") {
			listed++
		}
	}
	if listed != 2 {
		t.Errorf("%d audit_list rows for the two audit list tables: %v", listed, audit)
	}
	applied := listJSON(t, env, auditKeys, "audit", "list", "--action", "apply")
	if len(applied) != 1 || applied[0]["actor"] != "cli:runsdesk:apply" || !strings.Contains(applied[0]["reason"].(string), ": 7 change(s): tool lookup_order created") || !strings.Contains(applied[0]["reason"].(string), "standing approval lookups created") {
		t.Errorf("apply's audit row: %v", applied)
	}
	filtered := listJSON(t, env, auditKeys, "audit", "list", "--action", "token_list", "--actor", "cli:runsdesk:token", "--since", "1h")
	if len(filtered) != 3 || filtered[0]["action"] != "token_list" {
		t.Errorf("audit list --action token_list: %v", filtered)
	}
	if r := cliRun(t, env, nil, "audit", "list", "--until", "2000-01-01", "--format", "json"); r.code != exitOK || strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("audit list --until 2000-01-01: %+v", r)
	}
	if r := cliRun(t, env, nil, "audit", "list", "--since", "yesterday"); r.code != exitUsage {
		t.Errorf("audit list --since yesterday: %+v, want a usage error", r)
	}

	r := cliRun(t, env, nil, "audit", "list", "--format", "csv")
	records, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
	// Four more rows than the JSON listing saw: its own, the apply, filtered and --until ones'.
	if r.code != exitOK || err != nil || len(records) != len(audit)+1+4 || !slices.Equal(records[0], auditKeys) {
		t.Fatalf("audit list --format csv (%v): %d records for %d rows: %+v", err, len(records), len(audit), r)
	}
	if row := records[5]; row[5] != "token_list" || row[6] != "" || row[1] != audit[0]["time"] {
		t.Errorf("csv row %v, json %v", row, audit[0])
	}
	r = cliRun(t, env, nil, "audit", "list", "--format", "jsonl")
	jsonl := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if r.code != exitOK || len(jsonl) != len(audit)+5 {
		t.Fatalf("audit list --format jsonl: %d lines for %d rows: %+v", len(jsonl), len(audit), r)
	}
	for _, l := range jsonl {
		if !slices.Equal(jsonKeys(t, []byte(l)), auditKeys) {
			t.Errorf("jsonl line %s", l)
		}
	}
}

// TestListFormatsAreChecked: a --format a command does not write is a usage error naming the
// choices; csv and jsonl are the audit list's only.
func TestListFormatsAreChecked(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		env  environ
		args []string
		want string
	}{
		{nil, []string{"user", "list", "--format", "yaml"}, `invalid value "yaml" for flag -format: want table or json`},
		{nil, []string{"rules", "list", "--format", "csv"}, `want table or json`},
		{nil, []string{"audit", "list", "--format", "xml"}, `want table, json, csv or jsonl`},
		{environ{"RUNSDESK_FORMAT": "yaml"}, []string{"keys", "status"}, `environment variable RUNSDESK_FORMAT: "yaml": want table or json`},
	} {
		if r := cliRun(t, c.env, nil, c.args...); r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, r.code, r.stderr, c.want)
		}
	}
}
