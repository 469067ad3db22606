package db

import (
	"context"
	"fmt"

	"runsdesk/runtime"
)

const runColumns = `uid, uuid, status, configuration_uid, configuration_identifier, be_user,
	iterations, truncated, total_prompt_tokens, total_completion_tokens, total_tokens,
	estimated_cost, error_class, termination_reason, suspended_state, queued_request,
	claimed_by, lease_expires, requeue_count, pending_effect, pending_tools,
	started_at, finished_at, suspended_at, tstamp, crdate, retry_at,
	expires_at, remind_at, escalate_at, escalated, wait_policy, elicitation_expires, subject, started_by_service,
	hold_heartbeat, assignee, assignee_name, assigned_at, pause_number, approvals, on_behalf_of, on_behalf_of_name, external_id`

const sqlInsertRun = `INSERT INTO tx_nrllm_agentrun
	(uuid, status, configuration_uid, configuration_identifier, be_user, started_by_service,
	 suspended_state, queued_request, claimed_by, lease_expires, started_at, tstamp, crdate,
	 external_id, request_key, request_digest, on_behalf_of, on_behalf_of_name, callback_url)
	VALUES (?, ?, ?, ?, ?, ?, '', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// sqlRequestByExternalID and sqlRequestByKey find the run an external request's key names
// (unique keys request_external_id and request_idempotency_key).
const (
	sqlRequestByExternalID = `SELECT ` + runColumns + `, request_key, request_digest
	FROM tx_nrllm_agentrun WHERE configuration_uid = ? AND external_id_unique = ?`
	sqlRequestByKey = `SELECT ` + runColumns + `, request_key, request_digest
	FROM tx_nrllm_agentrun WHERE started_by_service = ? AND request_key_unique = ?`
)

const sqlRunByUID = `SELECT ` + runColumns + ` FROM tx_nrllm_agentrun WHERE uid = ?`

// sqlRunByUUID reads the run, what its latest expiry did (expiryColumn) and, while it waits
// for a decision, its next event sequence as its pause recorded it (pause_sequence, -1 when
// not known), and whether its pause may have drafts (has_drafts).
const sqlRunByUUID = `SELECT ` + runColumns + `, ` + expiryColumn + `,
	IF(status IN ('waiting_for_approval', 'waiting_for_input'), pause_sequence, -1), has_drafts
	FROM tx_nrllm_agentrun r WHERE uuid = ? ORDER BY uid LIMIT 1`

// expiryColumn is what the latest expiry of run r did (runtime.Run.Expiry): the action in the
// key of its newest decision of kind expiry (expiry:<action>:<suspended_at>), empty when none
// expired; read by KEY run_uid.
const expiryColumn = `COALESCE((SELECT SUBSTRING_INDEX(SUBSTRING_INDEX(d.idempotency_key, ':', 2), ':', -1)
	FROM tx_runsdesk_decision d WHERE d.run = r.uid AND d.kind = '` + runtime.DecisionExpiry + `' ORDER BY d.uid DESC LIMIT 1), '')`

// scanRun reads one row selected with runColumns. The status is taken verbatim: an unknown
// value is returned as-is, never coerced.
func scanRun(sc scanner) (runtime.Run, error) {
	var r runtime.Run
	var status string
	err := sc.Scan(&r.UID, &r.UUID, &status, &r.ConfigurationUID, &r.ConfigurationIdentifier,
		&r.BeUser, &r.Iterations, &r.Truncated, &r.PromptTokens, &r.CompletionTokens,
		&r.TotalTokens, &r.EstimatedCost, &r.ErrorClass, &r.TerminationReason,
		&r.SuspendedState, &r.QueuedRequest, &r.ClaimedBy, &r.LeaseExpires, &r.RequeueCount,
		&r.PendingEffect, &r.PendingTools, &r.StartedAt, &r.FinishedAt, &r.SuspendedAt,
		&r.Tstamp, &r.Crdate, &r.RetryAt,
		&r.ExpiresAt, &r.RemindAt, &r.EscalateAt, &r.Escalated, &r.WaitPolicy, &r.ElicitationExpires, &r.Subject, &r.StartedByService,
		&r.HoldHeartbeat, &r.Assignee, &r.AssigneeName, &r.AssignedAt, &r.PauseNumber, &r.Approvals, &r.OnBehalfOf, &r.OnBehalfOfName, &r.ExternalID)
	r.Status = runtime.Status(status)
	return r, err
}

// CreateRun inserts a run: born running under in.Lease (started_at = now) when
// in.Lease.Owner is set, otherwise born queued (no claim, started_at 0). QueuedRequest is
// stored either way. It returns the row as stored.
func (s *Store) CreateRun(ctx context.Context, in runtime.NewRun) (runtime.Run, error) {
	r := runtime.Run{
		UUID:                    in.UUID,
		Status:                  runtime.StatusQueued,
		ConfigurationUID:        in.ConfigurationUID,
		ConfigurationIdentifier: in.ConfigurationIdentifier,
		BeUser:                  in.BeUser,
		StartedByService:        in.StartedByService,
		OnBehalfOf:              in.OnBehalfOf.UserUID,
		OnBehalfOfName:          in.OnBehalfOf.Name,
		ExternalID:              in.Request.ExternalID,
		QueuedRequest:           in.QueuedRequest,
		Tstamp:                  in.Now,
		Crdate:                  in.Now,
	}
	if in.Lease.Owner != "" {
		r.Status = runtime.StatusRunning
		r.ClaimedBy = in.Lease.Owner
		r.LeaseExpires = in.Lease.Expires
		r.StartedAt = in.Now
	}
	request, err := s.sealFor(ctx, s.db, 0, in.UUID, sealedQueuedRequest, in.QueuedRequest)
	if err != nil {
		return runtime.Run{}, fmt.Errorf("db: create run %s: %w", in.UUID, err)
	}
	res, err := execRetrying(ctx, s.db, sqlInsertRun, r.UUID, string(r.Status), r.ConfigurationUID,
		r.ConfigurationIdentifier, r.BeUser, r.StartedByService, request, r.ClaimedBy, r.LeaseExpires,
		r.StartedAt, r.Tstamp, r.Crdate, in.Request.ExternalID, in.Request.IdempotencyKey, in.Request.Digest, r.OnBehalfOf, r.OnBehalfOfName, in.CallbackURL)
	if isDuplicateKey(err) {
		return runtime.Run{}, fmt.Errorf("db: create run %s: %w", in.UUID, runtime.ErrDuplicate)
	}
	if err != nil {
		return runtime.Run{}, fmt.Errorf("db: create run %s: %w", in.UUID, err)
	}
	uid, err := res.LastInsertId()
	if err != nil {
		return runtime.Run{}, fmt.Errorf("db: create run %s: %w", in.UUID, err)
	}
	r.UID = uid
	s.uuids.Put(uid, r.UUID)
	return r, nil
}

// FindRequest returns the run that holds keys.ExternalID in configuration configurationUID
// or, when keys.ExternalID is "", keys.IdempotencyKey of service account service, with the
// request keys it was created with; runtime.ErrNotFound when none does.
func (s *Store) FindRequest(ctx context.Context, configurationUID int64, service string, keys runtime.RequestKeys) (runtime.Run, runtime.RequestKeys, error) {
	row := s.db.QueryRowContext(ctx, sqlRequestByKey, service, keys.IdempotencyKey)
	if keys.ExternalID != "" {
		row = s.db.QueryRowContext(ctx, sqlRequestByExternalID, configurationUID, keys.ExternalID)
	}
	var got runtime.RequestKeys
	r, err := scanRun(scanFunc(func(dest ...any) error {
		return row.Scan(append(dest, &got.IdempotencyKey, &got.Digest)...)
	}))
	if err != nil {
		return runtime.Run{}, runtime.RequestKeys{}, fmt.Errorf("db: find request: %w", notFound(err))
	}
	got.ExternalID = r.ExternalID
	s.openRun(&r, true)
	return r, got, nil
}

// FindByUID returns the run with primary key uid, or runtime.ErrNotFound.
func (s *Store) FindByUID(ctx context.Context, uid int64) (runtime.Run, error) {
	r, err := scanRun(s.prep.on(nil).QueryRowContext(ctx, sqlRunByUID, uid))
	if err != nil {
		return runtime.Run{}, fmt.Errorf("db: find run %d: %w", uid, notFound(err))
	}
	s.openRun(&r, true)
	return r, nil
}

// FindByUUID returns the run with public id uuid (the oldest, should the non-unique index
// hold two), or runtime.ErrNotFound. For a run waiting for a decision it remembers what its
// row tells the claim that may follow (pauseHint, Store.paused).
func (s *Store) FindByUUID(ctx context.Context, uuid string) (runtime.Run, error) {
	var hint pauseHint
	var expiry string
	r, err := scanRun(withHint{s.prep.on(nil).QueryRowContext(ctx, sqlRunByUUID, uuid), &hint, &expiry})
	if err != nil {
		return runtime.Run{}, fmt.Errorf("db: find run %q: %w", uuid, notFound(err))
	}
	r.Expiry = expiry
	s.openRun(&r, true)
	s.keepHint(r, hint)
	return r, nil
}

// keepHint remembers hint for the claim of r when r waits for a decision.
func (s *Store) keepHint(r runtime.Run, hint pauseHint) {
	if r.Status.Waiting() {
		s.paused.put(r.UID, hint)
	}
}

// withHint scans the columns sqlRunByUUID reads after the run's: what its latest expiry
// did, then its pauseHint (the next event sequence and whether the pause may have drafts).
type withHint struct {
	sc     scanner
	hint   *pauseHint
	expiry *string
}

func (w withHint) Scan(dest ...any) error {
	return w.sc.Scan(append(dest, w.expiry, &w.hint.next, &w.hint.drafts)...)
}
