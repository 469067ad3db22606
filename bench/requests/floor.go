package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"runsdesk/bench/benchcmd"
)

// The floor's statements: those the request path sends (read from the server's general log
// of one request: created, approved by a person, answered), written out with their values.
// The column lists are the store's; the reads' rows are read and dropped.
const (
	floorToken = `SELECT uid, name, token_hash, scopes, disabled, lastused, expires_at
		FROM tx_runsdesk_service_account WHERE token_hash = ?`
	floorConfigurationColumns = `uid, identifier, name, provider_kind, provider_base_url,
	provider_model, provider_api_key_env, provider_options, system_prompt, max_iterations,
	require_second_approver, allowed_tools, wait_policy, prompt_price_per_1k, completion_price_per_1k, max_total_tokens,
	max_cost, max_context_tokens, guardrails, notify, subject_template, keep_output, privacy, support_sees, assignment,
	retention_outputs, retention_transcripts, retention_runs, approvals_required, allow_automatic_vote, external`
	floorConfigurationByName = `SELECT ` + floorConfigurationColumns + `
	FROM tx_nrllm_configuration WHERE identifier = ? AND deleted = 0 AND hidden = 0`
	floorConfigurationByUID = `SELECT ` + floorConfigurationColumns + `
	FROM tx_nrllm_configuration WHERE uid = ? AND deleted = 0 AND hidden = 0`
	floorTools = `SELECT name, description, parameters, input_schema, effect, admin_only,
	requires_approval, http_url, http_headers, http_timeout_ms, http_max_response_bytes,
	mcp_server, mcp_tool, mcp_annotations, mcp_digest, mcp_elicitation_timeout_ms, editable, wait_policy,
	max_arguments_bytes, approvals_required, allow_automatic_vote FROM tx_runsdesk_tool
	WHERE deleted = 0 ORDER BY uid`
	floorCreate = `INSERT INTO tx_nrllm_agentrun
	(uuid, status, configuration_uid, configuration_identifier, be_user, started_by_service,
	 suspended_state, queued_request, claimed_by, lease_expires, started_at, tstamp, crdate,
	 external_id, request_key, request_digest, on_behalf_of, on_behalf_of_name)
	VALUES (?, 'running', ?, ?, 0, ?, '', ?, ?, ?, ?, ?, ?, '', '', ?, 0, '')`
	floorLockRun      = `SELECT status IN ('waiting_for_approval', 'waiting_for_input'), pause_sequence FROM tx_nrllm_agentrun WHERE uid = ? FOR UPDATE`
	floorNextSequence = `SELECT COALESCE(MAX(sequence), -1) + 1 FROM tx_nrllm_agentrun_event WHERE run = ?`
	floorEvent        = `INSERT INTO tx_nrllm_agentrun_event
	(run, sequence, kind, round, duration_ms, payload, crdate) VALUES (?, ?, ?, 0, 0, ?, ?)`
	floorRunColumns = `uid, uuid, status, configuration_uid, configuration_identifier, be_user,
	iterations, truncated, total_prompt_tokens, total_completion_tokens, total_tokens,
	estimated_cost, error_class, termination_reason, suspended_state, queued_request,
	claimed_by, lease_expires, requeue_count, pending_effect, pending_tools,
	started_at, finished_at, suspended_at, tstamp, crdate, retry_at,
	expires_at, remind_at, escalate_at, escalated, wait_policy, elicitation_expires, subject, started_by_service,
	hold_heartbeat, assignee, assignee_name, assigned_at, pause_number, approvals, on_behalf_of, on_behalf_of_name, external_id`
	floorRunByUID  = `SELECT ` + floorRunColumns + ` FROM tx_nrllm_agentrun WHERE uid = ?`
	floorRunByUUID = `SELECT ` + floorRunColumns + `, COALESCE((SELECT SUBSTRING_INDEX(SUBSTRING_INDEX(d.idempotency_key, ':', 2), ':', -1)
	FROM tx_runsdesk_decision d WHERE d.run = r.uid AND d.kind = 'expiry' ORDER BY d.uid DESC LIMIT 1), ''),
	IF(status IN ('waiting_for_approval', 'waiting_for_input'), pause_sequence, -1), has_drafts
	FROM tx_nrllm_agentrun r WHERE uuid = ? ORDER BY uid LIMIT 1`
	floorStanding = `SELECT name, tool, configuration, when_schema, until_at, max_uses, allow_writes, author, uses, revoked, revoked_by
		FROM tx_runsdesk_standing_approval
		WHERE tool IN (?) AND revoked = 0 AND (until_at = 0 OR until_at > ?) AND (max_uses = 0 OR uses < max_uses)
		ORDER BY name`
	floorSuspend = `UPDATE tx_nrllm_agentrun FORCE INDEX (PRIMARY)
	SET status = 'waiting_for_approval', suspended_state = ?, suspended_at = ?, pending_tools = ?,
	    iterations = 0, total_prompt_tokens = 0, total_completion_tokens = 0, total_tokens = 0,
	    estimated_cost = 0, claimed_by = '', lease_expires = 0, pending_effect = '', tstamp = ?,
	    expires_at = 0, remind_at = 0, escalate_at = 0, escalated = 0, wait_due = 0, wait_policy = '',
	    elicitation_expires = 0, has_drafts = 0, pause_sequence = 0, subject = ?, hold_heartbeat = 0,
	    pause_number = pause_number + 1, approvals = 0
	WHERE uid = ? AND status = 'running' AND claimed_by = ?`
	floorPauseSequence = `UPDATE tx_nrllm_agentrun FORCE INDEX (PRIMARY) SET pause_sequence = (SELECT COALESCE(MAX(sequence), -1) + 1
	    FROM tx_nrllm_agentrun_event WHERE run = ?) WHERE uid = ?`
	floorAudit = `INSERT INTO tx_runsdesk_audit
	(crdate, actor_uid, actor_name, ip, action, run_uuid, outcome, reason) VALUES (?, ?, ?, '127.0.0.1', ?, ?, ?, '')`
	floorSession = `SELECT s.data, s.expiry, u.uid IS NOT NULL, COALESCE(u.uid, 0), COALESCE(u.username, 0), COALESCE(u.realName, 0),
	COALESCE(u.role, 0), COALESCE(u.disable, 0), COALESCE(u.session_epoch, 0), COALESCE(u.lastlogin, 0), COALESCE(u.crdate, 0),
	COALESCE(u.password_change_required, 0), COALESCE(u.time_zone, 0), COALESCE(u.email, 0),
	x.uid IS NOT NULL, COALESCE(x.uid, 0), COALESCE(x.session_id, 0), COALESCE(x.be_user, 0), COALESCE(x.epoch, 0),
	COALESCE(x.crdate, 0), COALESCE(x.last_seen, 0), COALESCE(x.expires_at, 0), COALESCE(x.ended_at, 0), COALESCE(x.ip, 0), COALESCE(x.user_agent, 0)
	FROM sessions s LEFT JOIN be_users u ON u.uid = ? AND u.deleted = 0
	LEFT JOIN tx_runsdesk_session x ON x.session_id = ?
	WHERE s.token = ? AND UTC_TIMESTAMP(6) < s.expiry`
	floorRunWithConfiguration = `SELECT r.uid, r.uuid, r.status, r.configuration_uid, r.configuration_identifier, r.be_user,
	r.iterations, r.truncated, r.total_prompt_tokens, r.total_completion_tokens, r.total_tokens, r.estimated_cost, r.error_class,
	r.termination_reason, r.suspended_state, r.queued_request, r.claimed_by, r.lease_expires, r.requeue_count, r.pending_effect,
	r.pending_tools, r.started_at, r.finished_at, r.suspended_at, r.tstamp, r.crdate, r.retry_at, r.expires_at, r.remind_at,
	r.escalate_at, r.escalated, r.wait_policy, r.elicitation_expires, r.subject, r.started_by_service, r.hold_heartbeat,
	r.assignee, r.assignee_name, r.assigned_at, r.pause_number, r.approvals, r.on_behalf_of, r.on_behalf_of_name, r.external_id,
	IF(r.status IN ('waiting_for_approval', 'waiting_for_input'), r.pause_sequence, -1), r.has_drafts,
	c.uid, c.identifier, c.name, c.provider_kind, c.provider_base_url, c.provider_model, c.provider_api_key_env, c.provider_options,
	c.system_prompt, c.max_iterations, c.require_second_approver, c.allowed_tools, c.wait_policy, c.prompt_price_per_1k,
	c.completion_price_per_1k, c.max_total_tokens, c.max_cost, c.max_context_tokens, c.guardrails, c.notify, c.subject_template,
	c.keep_output, c.privacy, c.support_sees, c.assignment, c.retention_outputs, c.retention_transcripts, c.retention_runs,
	c.approvals_required, c.allow_automatic_vote, c.external,
	(SELECT CONCAT(COUNT(*), ':', COALESCE(BIT_XOR(CAST(CONV(LEFT(SHA2(CONCAT(uid, ',', definition_digest), 256), 16), 16, 10) AS UNSIGNED)), 0))
	FROM tx_runsdesk_tool WHERE deleted = 0)
	FROM tx_nrllm_agentrun r
	JOIN tx_nrllm_configuration c ON c.uid = r.configuration_uid AND c.deleted = 0 AND c.hidden = 0
	WHERE r.uuid = ? ORDER BY r.uid LIMIT 1`
	floorClaim = `UPDATE tx_nrllm_agentrun FORCE INDEX (PRIMARY)
	SET status = 'running', claimed_by = ?, lease_expires = ?, queued_request = '{"kind":"approval","approved":true,"decidedBy":1}',
	    suspended_at = 0, pending_tools = '', tstamp = ?
	WHERE uid = ? AND status = 'waiting_for_approval' AND suspended_at = ? AND SHA2(suspended_state, 256) = SHA2(?, 256) AND has_drafts = 0`
	floorDecision = `INSERT INTO tx_runsdesk_decision
	(run, idempotency_key, kind, approved, decided_by, decided_by_service, crdate, arguments, reason,
	 paused_at, configuration_identifier, pending_tools) VALUES (IF(ROW_COUNT() = 1, ?, NULL), ?, 'approval', 1, 1, '', ?, '', '', ?, ?, ?)`
	floorSettle = `UPDATE tx_nrllm_agentrun FORCE INDEX (PRIMARY)
	SET status = 'completed', iterations = 0, truncated = 0, total_prompt_tokens = 0,
	    total_completion_tokens = 0, total_tokens = 0, estimated_cost = 0,
	    error_class = '', termination_reason = 'decided',
	    suspended_state = '', queued_request = '', claimed_by = '', lease_expires = 0,
	    pending_effect = '', suspended_at = 0, pending_tools = '', finished_at = ?, tstamp = ?
	WHERE uid = ? AND status IN ('queued', 'running', 'waiting_for_approval', 'waiting_for_input') AND claimed_by = ?`
	floorLatestDecision = `SELECT uid, run, idempotency_key, kind, approved, decided_by, decided_by_service, crdate FROM tx_runsdesk_decision
	WHERE run = ? ORDER BY uid DESC LIMIT 1`
	floorReasons = `SELECT uid, run, idempotency_key, kind, approved, decided_by, decided_by_service, crdate, reason FROM tx_runsdesk_decision
	WHERE run = ? AND reason <> '' ORDER BY uid`
	floorEdits = `SELECT uid, run, idempotency_key, kind, approved, decided_by, decided_by_service, crdate, arguments FROM tx_runsdesk_decision
	WHERE run = ? AND arguments <> '' ORDER BY uid`
	floorOutput = `SELECT output_text, finished_at FROM tx_runsdesk_run_output WHERE run = ?`
	floorUsers  = `SELECT uid, username FROM be_users WHERE uid IN (?)`

	floorRequestPayload  = `{"configuration":"` + configuration + `","kind":"approval","tool":"` + action + `","requestedByService":"%s"}`
	floorApprovalPayload = `{"approved":true,"decidedBy":1}`
)

var errFloorGuard = errors.New("floor: guarded statement matched no row")

// personSession is the session the floor's person reads: a real one of the bench admin.
type personSession struct {
	token, id string
}

// floor sends one request's statements with database/sql: its creation (the agent's token,
// the configuration and tools, the run row, its request event, the pause with the reads
// before it, the run read back, the audit row), a person's approval (the session, the run
// with its configuration, the claim with its decision, event and audit rows in one
// transaction, the settle) and the answer (the token, the run, its configuration and
// decisions, output and decider's name).
func (b *pathBench) floor(ctx context.Context, _ int) error {
	ctx = context.WithoutCancel(ctx)
	pool, now := b.app.Pool, time.Now().Unix()
	token, caller := b.agent()
	hash := sha256.Sum256([]byte(token))
	tokenHash := hex.EncodeToString(hash[:])
	id := uuid.NewString()
	reads := []read{{floorToken, []any{tokenHash}}, {floorConfigurationByName, []any{configuration}}, {floorTools, nil}}
	if err := readAll(ctx, pool, reads...); err != nil {
		return err
	}
	owner := "floor:" + newKey()
	res, err := pool.ExecContext(ctx, floorCreate, id, b.d.cfgUID, configuration, caller, fmt.Sprintf(floorQueued, id), owner,
		now+900, now, now, now, newKey())
	if err != nil {
		return fmt.Errorf("floor: create: %w", err)
	}
	uid, err := res.LastInsertId()
	if err != nil {
		return fmt.Errorf("floor: create: %w", err)
	}
	if err := benchcmd.InTx(ctx, pool, func(tx *sql.Tx) error {
		return appendEvent(ctx, tx, uid, "request", fmt.Sprintf(floorRequestPayload, caller), now)
	}); err != nil {
		return err
	}
	if err := readAll(ctx, pool, read{floorRunByUID, []any{uid}}, read{floorConfigurationByUID, []any{b.d.cfgUID}}, read{floorTools, nil},
		read{floorStanding, []any{action, now}}); err != nil {
		return err
	}
	state := fmt.Sprintf(floorState, id)
	if err := benchcmd.InTx(ctx, pool, func(tx *sql.Tx) error {
		if err := exec1(ctx, tx, "suspend", floorSuspend, state, now, action, now, title, uid, owner); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, floorPauseSequence, uid, uid)
		return err
	}); err != nil {
		return err
	}
	if err := readAll(ctx, pool, read{floorRunByUUID, []any{id}}); err != nil {
		return err
	}
	if _, err := pool.ExecContext(ctx, floorAudit, now, 0, caller, "api_request_create", id, "success"); err != nil {
		return fmt.Errorf("floor: audit: %w", err)
	}

	if err := readAll(ctx, pool, read{floorSession, []any{1, b.session.id, b.session.token}}, read{floorRunWithConfiguration, []any{id}}); err != nil {
		return err
	}
	decider := "resume:" + newKey()
	if err := benchcmd.InTx(ctx, pool, func(tx *sql.Tx) error {
		if err := exec1(ctx, tx, "claim", floorClaim, decider, now+900, now, uid, now, state); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, floorDecision, uid, newKey(), now, now, configuration, action); err != nil {
			return fmt.Errorf("floor: decision: %w", err)
		}
		if _, err := tx.ExecContext(ctx, floorEvent, uid, 1, "approval", floorApprovalPayload, now); err != nil {
			return fmt.Errorf("floor: event: %w", err)
		}
		_, err := tx.ExecContext(ctx, floorAudit, now, 1, "bench-admin", "approval", id, "approved")
		return err
	}); err != nil {
		return err
	}
	if err := exec1(ctx, pool, "settle", floorSettle, now, now, uid, decider); err != nil {
		return err
	}

	return readAll(ctx, pool, read{floorToken, []any{tokenHash}}, read{floorRunByUUID, []any{id}}, read{floorConfigurationByUID, []any{b.d.cfgUID}},
		read{floorLatestDecision, []any{uid}}, read{floorReasons, []any{uid}}, read{floorEdits, []any{uid}}, read{floorOutput, []any{uid}},
		read{floorUsers, []any{1}})
}

// floorQueued and floorState are the request's stored continuation and pause state, as the
// runtime writes them (%s the request's id; the state copied from a request's row).
const (
	floorQueued = `{"kind":"request","steps":[{"call":{"id":"request-%s","type":"function","function":{"name":"` + action +
		`","arguments":` + arguments + `}}}],"title":"` + title + `"}`
	floorState = `{"messages":[{"role":"assistant","content":""}],"pendingCalls":[{"id":"request-%s","type":"function","function":{"name":"` +
		action + `","arguments":` + arguments + `}}],"iterations":0,"promptTokens":0,"completionTokens":0,"allowedToolNames":["` + action +
		`"],"inputToolName":null,"inputSchema":[],"callPreviews":null,"definitions":{"tools":{"` + action + `":{"registered":true,` +
		`"parameters":"61cd965593fadae176b6e9ca15bfae22e6314b7687c79bd5c31479f3508c6a40","inputSchema":"","effect":"non_idempotent_write",` +
		`"adminOnly":false,"approval":true,"editable":false,"wait":""}},"policy":{"fourEyes":false}}}`
)

// read is one statement whose rows are read and dropped.
type read struct {
	query string
	args  []any
}

// readAll runs each read and reads its rows.
func readAll(ctx context.Context, q interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}, reads ...read) error {
	for _, r := range reads {
		rows, err := q.QueryContext(ctx, r.query, r.args...)
		if err != nil {
			return fmt.Errorf("floor: read: %w", err)
		}
		cols, err := rows.Columns()
		if err != nil {
			rows.Close()
			return fmt.Errorf("floor: read: %w", err)
		}
		dest := make([]any, len(cols))
		for i := range dest {
			dest[i] = new(sql.RawBytes)
		}
		for rows.Next() {
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return fmt.Errorf("floor: read: %w", err)
			}
		}
		if err := rows.Close(); err != nil {
			return fmt.Errorf("floor: read: %w", err)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("floor: read: %w", err)
		}
	}
	return nil
}

// appendEvent appends one event at MAX(sequence)+1 of run uid inside tx, the run's row locked
// first, as the store does.
func appendEvent(ctx context.Context, tx *sql.Tx, uid int64, kind, payload string, now int64) error {
	if err := readAll(ctx, tx, read{floorLockRun, []any{uid}}); err != nil {
		return err
	}
	var seq int
	if err := tx.QueryRowContext(ctx, floorNextSequence, uid).Scan(&seq); err != nil {
		return fmt.Errorf("floor: next sequence: %w", err)
	}
	if _, err := tx.ExecContext(ctx, floorEvent, uid, seq, kind, payload, now); err != nil {
		return fmt.Errorf("floor: %s event: %w", kind, err)
	}
	return nil
}

// exec1 runs the guarded statement step and fails unless it changed exactly one row.
func exec1(ctx context.Context, db execer, step, query string, args ...any) error {
	res, err := db.ExecContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("floor: %s: %w", step, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return errFloorGuard
	}
	return nil
}
