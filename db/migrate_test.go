package db

import (
	"context"
	"database/sql"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// expectedColumns is the schema migrations 0001-0009 must produce: per table, its columns in
// order as "name type default"; "-" means no default. Every column is NOT NULL. A later
// migration that alters one of these tables updates its entry here.
var expectedColumns = map[string][]string{
	"tx_nrllm_agentrun": {
		"uid int unsigned -", "pid int unsigned 0", "uuid varchar(36) ''",
		"status varchar(32) 'queued'", "configuration_uid int unsigned 0",
		"configuration_identifier varchar(150) ''", "be_user int unsigned 0",
		"iterations int unsigned 0", "truncated tinyint unsigned 0",
		"total_prompt_tokens int unsigned 0", "total_completion_tokens int unsigned 0",
		"total_tokens int unsigned 0", "estimated_cost decimal(10,6) 0.000000",
		"error_class varchar(255) ''", "termination_reason varchar(32) ''",
		"suspended_state mediumtext -", "queued_request mediumtext -",
		"claimed_by varchar(64) ''", "lease_expires int unsigned 0",
		"requeue_count int unsigned 0", "pending_effect varchar(32) ''",
		"started_at int unsigned 0", "finished_at int unsigned 0", "tstamp int unsigned 0",
		"crdate int unsigned 0", "suspended_at int unsigned 0", "pending_tools varchar(1024) ''",
		"retry_at int unsigned 0", "expires_at int unsigned 0", "remind_at int unsigned 0",
		"escalate_at int unsigned 0", "escalated tinyint unsigned 0", "wait_due int unsigned 0",
		"wait_policy varchar(2048) ''", "pause_sequence int -1",
		"has_drafts tinyint unsigned 1", "hold_heartbeat int unsigned 0", "subject varchar(255) ''", "started_by_service varchar(100) ''", "elicitation_expires int unsigned 0",
		"suspended_state_key_id varchar(32) generated -", "queued_request_key_id varchar(32) generated -",
		"assignee int unsigned 0", "assignee_name varchar(255) ''", "assigned_at int unsigned 0",
		"pause_number int unsigned 0", "approvals tinyint unsigned 0",
		"changed_at timestamp(6) 'current_timestamp(6)'",
		"external_id varchar(191) ''", "request_key varchar(64) ''", "request_digest char(64) ''",
		"on_behalf_of int unsigned 0", "on_behalf_of_name varchar(255) ''",
		"external_id_unique varchar(191) generated -", "request_key_unique varchar(64) generated -",
		"callback_url varchar(2048) ''",
	},
	"tx_nrllm_agentrun_event": {
		"uid int unsigned -", "pid int unsigned 0", "run int unsigned 0",
		"sequence int unsigned 0", "kind varchar(32) ''", "round int unsigned 0",
		"duration_ms decimal(10,2) 0.00", "payload mediumtext -", "crdate int unsigned 0",
	},
	"tx_nrllm_configuration": {
		"uid int unsigned -", "pid int unsigned 0", "tstamp int unsigned 0",
		"crdate int unsigned 0", "deleted tinyint unsigned 0", "hidden tinyint unsigned 0",
		"identifier varchar(150) ''", "name varchar(255) ''", "provider_kind varchar(32) ''",
		"provider_base_url varchar(2048) ''", "provider_model varchar(150) ''",
		"provider_api_key_env varchar(150) ''", "provider_options mediumtext -",
		"system_prompt text -", "max_iterations int unsigned 20",
		"require_second_approver tinyint unsigned 0", "allowed_tools text -",
		"wait_policy varchar(2048) ''", "notify mediumtext -",
		"prompt_price_per_1k decimal(14,8) 0.00000000", "completion_price_per_1k decimal(14,8) 0.00000000",
		"max_total_tokens int unsigned 0", "max_cost decimal(10,6) 0.000000",
		"max_context_tokens int unsigned 0", "guardrails mediumtext ''", "subject_template varchar(1024) ''",
		"keep_output tinyint unsigned 1",
		"privacy varchar(16) 'metadata'",
		"support_sees varchar(16) 'redacted'",
		"retention_outputs int unsigned 0", "retention_transcripts int unsigned 0", "retention_runs int unsigned 0", "assignment varchar(2048) ''",
		"approvals_required tinyint unsigned 0", "allow_automatic_vote tinyint unsigned 0",
		"external varchar(8192) ''",
	},
	"tx_runsdesk_retention_mark": {"configuration_uid int unsigned -", "class varchar(16) -", "swept_to int unsigned 0"},
	"tx_runsdesk_outbox": {
		"uid int unsigned -", "run int unsigned -", "run_uuid varchar(36) -", "event varchar(16) -",
		"channel varchar(16) -", "target mediumtext -", "run_status varchar(32) -", "kind varchar(16) -",
		"tool varchar(150) -", "configuration_identifier varchar(150) -", "configuration_name varchar(255) -",
		"admin_only tinyint unsigned 0", "four_eyes tinyint unsigned 0", "waiting_since int unsigned 0",
		"expires_at int unsigned 0", "occurred_at int unsigned 0", "state varchar(16) 'pending'",
		"attempts int unsigned 0", "due_at int unsigned 0", "claimed_by varchar(64) ''",
		"last_error varchar(255) ''", "sent_at int unsigned 0", "crdate int unsigned 0", "tstamp int unsigned 0",
		"subject varchar(255) ''", "termination_reason varchar(32) ''",
	},
	"tx_runsdesk_tool": {
		"uid int unsigned -", "pid int unsigned 0", "tstamp int unsigned 0",
		"crdate int unsigned 0", "deleted tinyint unsigned 0", "name varchar(150) ''",
		"description text -", "parameters mediumtext -", "input_schema mediumtext -",
		"effect varchar(32) ''", "admin_only tinyint unsigned 0",
		"requires_approval tinyint unsigned 0", "http_url varchar(2048) ''",
		"http_headers mediumtext -", "http_timeout_ms int unsigned 0",
		"http_max_response_bytes int unsigned 0", "wait_policy varchar(2048) ''", "editable tinyint unsigned 0",
		"mcp_server varchar(150) ''", "mcp_tool varchar(150) ''", "mcp_annotations mediumtext -",
		"mcp_digest varchar(64) ''", "mcp_elicitation_timeout_ms int unsigned 0",
		"max_arguments_bytes int unsigned 0", "approvals_required tinyint unsigned 0", "allow_automatic_vote tinyint unsigned 0",
		"definition_digest bigint unsigned generated -",
	},
	"tx_nrllm_governance_event": {
		"uid int unsigned -", "pid int unsigned 0", "crdate int unsigned 0",
		"correlation_id varchar(36) ''", "decision varchar(32) ''", "reason varchar(255) ''",
		"provider varchar(100) ''", "model varchar(150) ''",
		"configuration_identifier varchar(150) ''", "be_user int unsigned 0",
		"tool_name varchar(150) ''", "agentrun_uid int unsigned 0",
		"guardrail varchar(255) ''", "detail text -", "sequence int -1",
	},
	"be_users": {
		"uid int unsigned -", "pid int unsigned 0", "tstamp int unsigned 0",
		"crdate int unsigned 0", "username varchar(50) ''", "password varchar(255) ''",
		"admin tinyint unsigned 0", "disable tinyint unsigned 0", "deleted tinyint unsigned 0",
		"realName varchar(80) ''", "email varchar(255) ''", "lastlogin int unsigned 0",
		"role varchar(16) 'support'", "session_epoch int unsigned 0",
		"password_change_required tinyint unsigned 0", "time_zone varchar(64) ''",
	},
	"tx_runsdesk_service_account": {
		"uid int unsigned -", "crdate int unsigned 0", "tstamp int unsigned 0",
		"name varchar(100) ''", "token_hash char(64) ''", "scopes varchar(255) ''",
		"disabled tinyint unsigned 0", "lastused int unsigned 0", "expires_at int unsigned 0", "lifetime int unsigned 0",
	},
	"tx_runsdesk_decision": {
		"uid int unsigned -", "run int unsigned 0", "idempotency_key varchar(64) ''",
		"kind varchar(16) ''", "approved tinyint unsigned 0", "decided_by int unsigned 0",
		"crdate int unsigned 0", "decided_by_service varchar(100) ''", "arguments mediumtext -", "reason text ''",
		"arguments_key_id varchar(32) generated -", "reason_key_id varchar(32) generated -",
		"content_digest binary(32) 'unhex(sha2(concat(sha2(`arguments`,256),sha2(`reason`,256)),256))'",
		"paused_at int unsigned 0", "configuration_identifier varchar(150) ''", "pending_tools varchar(1024) ''",
	},
	"tx_runsdesk_audit": {
		"uid int unsigned -", "crdate int unsigned 0", "actor_uid int unsigned 0",
		"actor_name varchar(100) ''", "ip varchar(45) ''", "action varchar(32) ''",
		"run_uuid varchar(36) ''", "outcome varchar(32) ''", "reason text -",
		"content_digest binary(32) 'unhex(sha2(`reason`,256))'",
	},
	"tx_runsdesk_chain": {"seq bigint unsigned -", "source tinyint unsigned -", "source_uid int unsigned -",
		"hash binary(32) -", "crdate int unsigned -"},
	"tx_runsdesk_chain_checkpoint": {"seq bigint unsigned -", "hash binary(32) -", "crdate int unsigned -", "note text -"},
	"tx_runsdesk_call": {
		"uid int unsigned -", "run int unsigned -", "sequence int unsigned -", "call_id text -",
		"tool varchar(150) -", "proposed mediumtext -", "approved mediumtext -", "effective mediumtext -",
		"crdate int unsigned -", "proposed_key_id varchar(32) generated -", "approved_key_id varchar(32) generated -",
		"effective_key_id varchar(32) generated -",
	},
	"tx_runsdesk_run_output": {
		"uid int unsigned -", "run int unsigned -", "output_text mediumtext -", "finished_at int unsigned 0",
		"output_text_key_id varchar(32) generated -",
	},
	"tx_runsdesk_event_content": {
		"uid int unsigned -", "event int unsigned -", "run int unsigned -", "privacy varchar(16) ''",
		"content mediumtext -", "crdate int unsigned 0", "content_key_id varchar(32) generated -",
	},
	"tx_runsdesk_secret": {"name varchar(64) -", "secret char(64) ''", "crdate int unsigned 0"},
	"tx_runsdesk_identity": {"uid int unsigned -", "be_user int unsigned -", "issuer varchar(255) -", "subject varchar(255) -",
		"access_token text -", "refresh_token text -", "token_expiry int unsigned 0", "checked_at int unsigned 0",
		"crdate int unsigned 0", "tstamp int unsigned 0"},
	"sessions": {"token char(43) -", "data blob -", "expiry timestamp(6) -"},
	"tx_runsdesk_session": {"uid int unsigned -", "session_id char(43) -", "be_user int unsigned -", "epoch int unsigned 0",
		"crdate int unsigned 0", "last_seen int unsigned 0", "expires_at int unsigned 0", "ended_at int unsigned 0",
		"ip varchar(45) ''", "user_agent varchar(255) ''"},
	"schema_migrations": {"version int unsigned -", "applied_at int unsigned 0"},
	"tx_runsdesk_vote": {"uid int unsigned -", "run int unsigned -", "pause int unsigned -", "voter varchar(128) -",
		"voter_name varchar(255) ''", "decided_by int unsigned 0", "decided_by_service varchar(100) ''",
		"idempotency_key varchar(64) -", "turn_digest varchar(64) ''", "pin_digest varchar(64) ''",
		"required tinyint unsigned 1", "crdate int unsigned 0"},
	"tx_runsdesk_comment": {"uid int unsigned -", "run int unsigned -", "sequence int unsigned -", "author int unsigned -",
		"idempotency_key varchar(64) -", "body text -", "crdate int unsigned 0", "body_key_id varchar(32) generated -"},
}

// expectedIndexes lists, per table, its indexes as "name(col,col)" with a "unique " prefix
// for unique ones.
var expectedIndexes = map[string][]string{
	"tx_nrllm_agentrun": {"unique PRIMARY(uid)", "be_user(be_user,crdate)", "changed(changed_at)", "crdate(crdate)",
		"holds(status,hold_heartbeat)", "queued_request_key_id(queued_request_key_id)", "recent(finished_at,uid)", "unique request_external_id(configuration_uid,external_id_unique)", "unique request_idempotency_key(started_by_service,request_key_unique)", "retention(configuration_uid,finished_at)", "run_uuid(uuid)", "stale(status,lease_expires)",
		"status_lookup(status,crdate)", "suspended_state_key_id(suspended_state_key_id)", "wait_due(status,wait_due)", "waiting(suspended_at,uid)", "waiting_assignee(assignee,suspended_at)",
		"waiting_counts(suspended_at,status,configuration_uid)", "waiting_expires(status,expires_at)",
		"waiting_status(status,suspended_at)"},
	"tx_nrllm_agentrun_event":      {"unique PRIMARY(uid)", "unique run_sequence(run,sequence)"},
	"tx_nrllm_configuration":       {"unique PRIMARY(uid)", "unique identifier(identifier)"},
	"tx_runsdesk_tool":             {"unique PRIMARY(uid)", "unique name(name)"},
	"tx_nrllm_governance_event":    {"unique PRIMARY(uid)", "agentrun(agentrun_uid)", "correlation(correlation_id)", "crdate(crdate)"},
	"be_users":                     {"unique PRIMARY(uid)", "unique username(username)"},
	"tx_runsdesk_service_account":  {"unique PRIMARY(uid)", "unique name(name)", "unique token_hash(token_hash)"},
	"tx_runsdesk_decision":         {"unique PRIMARY(uid)", "arguments_key_id(arguments_key_id)", "crdate(crdate)", "reason_key_id(reason_key_id)", "unique run_key(run,idempotency_key)", "run_uid(run,uid)"},
	"tx_runsdesk_audit":            {"unique PRIMARY(uid)", "action(action)", "actor_name(actor_name)", "crdate(crdate)", "outcome(outcome)", "run_uuid(run_uuid)"},
	"tx_runsdesk_chain":            {"unique PRIMARY(seq)", "unique source_uid(source,source_uid)"},
	"tx_runsdesk_chain_checkpoint": {"unique PRIMARY(seq)"},
	"tx_runsdesk_retention_mark":   {"unique PRIMARY(configuration_uid,class)"},
	"tx_runsdesk_call":             {"unique PRIMARY(uid)", "approved_key_id(approved_key_id)", "effective_key_id(effective_key_id)", "proposed_key_id(proposed_key_id)", "unique run_sequence(run,sequence)"},
	"tx_runsdesk_secret":           {"unique PRIMARY(name)"},
	"tx_runsdesk_identity":         {"unique PRIMARY(uid)", "unique be_user(be_user)", "unique issuer_subject(issuer,subject)"},
	"tx_runsdesk_run_output":       {"unique PRIMARY(uid)", "finished(finished_at,uid)", "output_text_key_id(output_text_key_id)", "unique run(run)"},
	"tx_runsdesk_event_content":    {"unique PRIMARY(uid)", "content_key_id(content_key_id)", "unique event(event)", "run_event(run,event)"},
	"sessions":                     {"unique PRIMARY(token)", "sessions_expiry_idx(expiry)"},
	"tx_runsdesk_session":          {"unique PRIMARY(uid)", "be_user(be_user,last_seen)", "expires_at(expires_at)", "unique session_id(session_id)"},
	"schema_migrations":            {"unique PRIMARY(version)"},
	"tx_runsdesk_vote":             {"unique PRIMARY(uid)", "unique run_key(run,idempotency_key)", "unique run_pause_voter(run,pause,voter)"},
	"tx_runsdesk_comment":          {"unique PRIMARY(uid)", "body_key_id(body_key_id)", "unique run_key(run,idempotency_key)", "run_sequence(run,sequence)"},
	"tx_runsdesk_outbox":           {"unique PRIMARY(uid)", "due(state,due_at)", "run(run,uid)", "state_crdate(state,crdate)"},
}

var intDisplayWidth = regexp.MustCompile(`^(tinyint|smallint|mediumint|int|bigint)\([0-9]+\)`)

// schemaColumns reads the columns of the current database, normalising MariaDB/MySQL
// differences (integer display widths, quoting of defaults).
func schemaColumns(t *testing.T, pool *sql.DB) map[string][]string {
	t.Helper()
	rows, err := pool.Query(`SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, COLUMN_DEFAULT, IS_NULLABLE,
		EXTRA LIKE '%GENERATED%'
		FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE()
		ORDER BY TABLE_NAME, ORDINAL_POSITION`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string][]string{}
	for rows.Next() {
		var table, name, typ, nullable string
		var def sql.NullString
		var generated bool
		if err := rows.Scan(&table, &name, &typ, &def, &nullable, &generated); err != nil {
			t.Fatal(err)
		}
		if siteTable(table) {
			continue
		}
		if generated {
			typ += " generated"
		} else if nullable != "NO" {
			t.Errorf("%s.%s is nullable, want NOT NULL", table, name)
		}
		d := "-"
		if def.Valid && def.String != "NULL" {
			d = def.String
			if !strings.HasPrefix(d, "'") && !isNumeric(d) {
				d = "'" + d + "'"
			}
		}
		got[table] = append(got[table], name+" "+intDisplayWidth.ReplaceAllString(typ, "$1")+" "+d)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

func isNumeric(s string) bool {
	return regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`).MatchString(s)
}

func schemaIndexes(t *testing.T, pool *sql.DB) map[string][]string {
	t.Helper()
	rows, err := pool.Query(`SELECT TABLE_NAME, INDEX_NAME, NON_UNIQUE,
		GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX SEPARATOR ',')
		FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE()
		GROUP BY TABLE_NAME, INDEX_NAME, NON_UNIQUE`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string][]string{}
	for rows.Next() {
		var table, name, cols string
		var nonUnique int
		if err := rows.Scan(&table, &name, &nonUnique, &cols); err != nil {
			t.Fatal(err)
		}
		idx := name + "(" + cols + ")"
		if nonUnique == 0 {
			idx = "unique " + idx
		}
		got[table] = append(got[table], idx)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for _, v := range got {
		sort.Slice(v, func(i, j int) bool {
			return strings.TrimPrefix(v[i], "unique ") < strings.TrimPrefix(v[j], "unique ")
		})
	}
	return got
}

func TestMigrationsSchema(t *testing.T) {
	_, pool := newStore(t)
	columns := schemaColumns(t, pool)
	for table, want := range expectedColumns {
		if got := columns[ownTable(table)]; !reflect.DeepEqual(got, want) {
			t.Errorf("%s columns:\ngot  %q\nwant %q", table, got, want)
		}
	}
	indexes := schemaIndexes(t, pool)
	for table, want := range expectedIndexes {
		if got := indexes[ownTable(table)]; !reflect.DeepEqual(got, want) {
			t.Errorf("%s indexes:\ngot  %q\nwant %q", table, got, want)
		}
	}
}

func TestMigrateTwiceIsNoop(t *testing.T) {
	dsn := newDatabase(t)
	ctx := t.Context()
	pool, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	files, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	if n, err := Pending(ctx, pool); err != nil || n != len(files) {
		t.Fatalf("Pending on an empty database: got %d, %v, want %d", n, err, len(files))
	}
	if err := Migrate(ctx, dsn); err != nil {
		t.Fatalf("first Migrate: %v", err)
	}
	if n, err := Pending(ctx, pool); err != nil || n != 0 {
		t.Fatalf("Pending after Migrate: got %d, %v, want 0", n, err)
	}
	// A marker row proves the second run re-created nothing.
	if _, err := pool.Exec(`INSERT INTO be_users (username) VALUES ('marker')`); err != nil {
		t.Fatal(err)
	}
	before := migrationRecords(t, pool)
	if err := Migrate(ctx, dsn); err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	if after := migrationRecords(t, pool); !reflect.DeepEqual(after, before) {
		t.Fatalf("schema_migrations after a second run:\ngot  %v\nwant %v", after, before)
	}
	var n int
	if err := pool.QueryRow(`SELECT COUNT(*) FROM be_users`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("be_users after a second run: got %d rows, %v, want 1", n, err)
	}
	if _, err := pool.Exec(`DELETE FROM schema_migrations WHERE version = 9`); err != nil {
		t.Fatal(err)
	}
	if n, err := Pending(ctx, pool); err != nil || n != 1 {
		t.Fatalf("Pending with one record removed: got %d, %v, want 1", n, err)
	}
}

func migrationRecords(t *testing.T, pool *sql.DB) []string {
	t.Helper()
	rows, err := pool.Query(`SELECT CONCAT(version, '@', applied_at) FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func TestMigrateConcurrently(t *testing.T) {
	dsn := newDatabase(t)
	const n = 4
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = Migrate(context.Background(), dsn)
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Migrate #%d: got %v, want nil", i, err)
		}
	}
	pool, err := Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	files, _ := loadMigrations()
	if got := migrationRecords(t, pool); len(got) != len(files) {
		t.Fatalf("schema_migrations: got %d records, want %d", len(got), len(files))
	}
}

func TestMigrationFilesDocumentAdditions(t *testing.T) {
	files, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range files {
		if !strings.HasPrefix(m.sql, "-- ") {
			t.Errorf("%s: got no leading comment, want one documenting its change", m.name)
		}
		if strings.Contains(m.sql, "CREATE TABLE ") && !strings.Contains(m.sql, "CREATE TABLE IF NOT EXISTS") {
			t.Errorf("%s: CREATE TABLE without IF NOT EXISTS", m.name)
		}
	}
}

// The migration lock is a row every Galera node agrees on, not a node-local GET_LOCK: while
// another process (here: on another node, so GET_LOCK would not see it) holds a live lease on
// the row, Migrate waits and applies nothing; once the holder lets go, Migrate takes the
// lock, applies every file and deletes the row.
func TestMigrateWaitsForTheLockRowOfAnotherNode(t *testing.T) {
	dsn := newDatabase(t)
	pool, err := Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(createMigrateLock); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(`INSERT INTO schema_migrations_lock (id, owner, expires) VALUES (1, 'node2:42:cafe', UNIX_TIMESTAMP() + 600)`); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Migrate(context.Background(), dsn) }()
	select {
	case err := <-done:
		t.Fatalf("Migrate returned %v while another node held the lock row, want it to wait", err)
	case <-time.After(time.Second):
	}
	files, _ := loadMigrations()
	if n, err := Pending(t.Context(), pool); err != nil || n != len(files) {
		t.Fatalf("Pending while the lock is held elsewhere: got %d, %v, want %d (nothing applied)", n, err, len(files))
	}
	if _, err := pool.Exec(`DELETE FROM schema_migrations_lock WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Migrate after the holder let go: %v", err)
	}
	if n, err := Pending(t.Context(), pool); err != nil || n != 0 {
		t.Fatalf("Pending after Migrate: got %d, %v, want 0", n, err)
	}
	var rows int
	if err := pool.QueryRow(`SELECT COUNT(*) FROM schema_migrations_lock`).Scan(&rows); err != nil || rows != 0 {
		t.Fatalf("lock rows after Migrate: got %d, %v, want 0 (released)", rows, err)
	}
}

// A lock row whose lease ran out (its holder died mid-migration) is taken over at once.
func TestMigrateTakesOverAnExpiredLockRow(t *testing.T) {
	dsn := newDatabase(t)
	pool, err := Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(createMigrateLock); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(`INSERT INTO schema_migrations_lock (id, owner, expires) VALUES (1, 'dead:1:beef', UNIX_TIMESTAMP() - 1)`); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	if err := Migrate(t.Context(), dsn); err != nil {
		t.Fatalf("Migrate over an expired lock: %v", err)
	}
	if took := time.Since(began); took > 30*time.Second {
		t.Fatalf("Migrate over an expired lock took %s, want no wait for the dead holder", took)
	}
}

// Galera replicates only InnoDB tables with a primary key correctly (rows of a table without
// one are matched by full scans on every node, and deleting or updating them can diverge),
// so every table the migrations create has one.
func TestEveryTableHasAPrimaryKey(t *testing.T) {
	_, pool := newStore(t)
	rows, err := pool.Query(`SELECT t.table_name, t.engine FROM information_schema.tables t
		WHERE t.table_schema = DATABASE() AND t.table_type = 'BASE TABLE'
		AND NOT EXISTS (SELECT 1 FROM information_schema.table_constraints c
			WHERE c.table_schema = t.table_schema AND c.table_name = t.table_name
			AND c.constraint_type = 'PRIMARY KEY')
		ORDER BY t.table_name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var missing []string
	for rows.Next() {
		var name, engine string
		if err := rows.Scan(&name, &engine); err != nil {
			t.Fatal(err)
		}
		missing = append(missing, name+" ("+engine+")")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(missing) > 0 {
		t.Fatalf("tables without a primary key (Galera needs one on every table): %v", missing)
	}
	var tables int
	if err := pool.QueryRow(`SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND engine <> 'InnoDB'`).Scan(&tables); err != nil || tables != 0 {
		t.Fatalf("tables not on InnoDB (Galera replicates only InnoDB): %d, %v", tables, err)
	}
}
