package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"runsdesk/runtime"
)

// encodeNotifyRules is the notify column of rules: "" for none, else their JSON.
func encodeNotifyRules(rules []runtime.NotifyRule) (string, error) {
	if len(rules) == 0 {
		return "", nil
	}
	b, err := json.Marshal(rules)
	return string(b), err
}

// decodeNotifyRules reads the notify column; text that does not decode is an error.
func decodeNotifyRules(s string) ([]runtime.NotifyRule, error) {
	if s == "" {
		return nil, nil
	}
	var rules []runtime.NotifyRule
	if err := json.Unmarshal([]byte(s), &rules); err != nil {
		return nil, err
	}
	return rules, nil
}

// notice is what a transition tells enqueueNotifications about the event it causes.
type notice struct {
	Event runtime.NotifyEvent
	// Status is the run's status once the transition commits; Pause the waiting status the
	// event is about (its kind), Tool the pause's first tool.
	Status runtime.Status
	Pause  runtime.Status
	Tool   string
	// WaitingSince is when the pause began, ExpiresAt its deadline (0: none), Now the
	// transition's time (unix seconds); Due, when not 0, is when the rows fall due instead
	// of Now (a suspend's held rows, runtime.Suspension.WaitingDue).
	WaitingSince int64
	ExpiresAt    int64
	Now          int64
	Due          int64
	// AdminOnly, when set, is whether Tool is admin-only as the caller knows it; nil: read
	// from the stored tool definitions.
	AdminOnly *bool
	// People are the addresses of the people a personal event concerns (runtime.NotifyEvent.
	// Personal), for a rule with ToPeople: one row for each.
	People []string
	// Subject is the pause's subject as stored on the run; only a rule with IncludeSubject
	// writes it into its row.
	Subject string
	// Reason is a finished run's termination reason (the `finished` event).
	Reason string
}

const sqlNotifySubject = `SELECT a.uuid, c.identifier, c.name, c.require_second_approver, c.notify,
	a.callback_url, IF(a.callback_url = '', '', c.external)
	FROM tx_nrllm_agentrun a JOIN tx_nrllm_configuration c ON c.uid = a.configuration_uid
	WHERE a.uid = ?`

const sqlToolAdminOnly = `SELECT admin_only FROM tx_runsdesk_tool WHERE name = ? AND deleted = 0`

const sqlInsertOutbox = `INSERT INTO tx_runsdesk_outbox
	(run, run_uuid, event, channel, target, run_status, kind, tool, configuration_identifier,
	 configuration_name, admin_only, four_eyes, waiting_since, expires_at, occurred_at, state,
	 due_at, crdate, tstamp, subject, termination_reason) VALUES `

const sqlOutboxRow = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?)`

// notifySubject is what notifications name of their run: its uuid and its configuration's
// identifier, name, four-eyes policy and notify rules; and callback, when the run is an
// external request with a callback_url, the rule of its callback (runtime.CallbackRule).
type notifySubject struct {
	uuid, identifier, name string
	fourEyes               bool
	rules                  []runtime.NotifyRule
	callback               *runtime.NotifyRule
}

// rulesFor are the rules of the subject sent for event e: the configuration's subscribed
// rules, and the run's callback for `finished`.
func (sub notifySubject) rulesFor(e runtime.NotifyEvent) []runtime.NotifyRule {
	var out []runtime.NotifyRule
	for _, r := range sub.rules {
		if r.Subscribes(e) {
			out = append(out, r)
		}
	}
	if sub.callback != nil && sub.callback.Subscribes(e) {
		out = append(out, *sub.callback)
	}
	return out
}

// subjectOf is the subject of run's notifications from cfg as its caller read it.
func subjectOf(uuid string, cfg *runtime.Configuration) notifySubject {
	return notifySubject{uuid: uuid, identifier: cfg.Identifier, name: cfg.Name, fourEyes: cfg.RequireSecondApprover, rules: cfg.Notify}
}

// readNotifySubject reads run's subject on q; ok is false when the run or its configuration
// is gone or it has neither rules nor a callback. Stored rules, or an external policy, that
// do not decode are an error.
func readNotifySubject(ctx context.Context, q execer, run int64) (notifySubject, bool, error) {
	var sub notifySubject
	var rulesJSON, callbackURL, externalJSON string
	err := q.QueryRowContext(ctx, sqlNotifySubject, run).Scan(&sub.uuid, &sub.identifier, &sub.name, &sub.fourEyes, &rulesJSON,
		&callbackURL, &externalJSON)
	switch {
	case errors.Is(err, sql.ErrNoRows) || err == nil && rulesJSON == "" && callbackURL == "":
		return sub, false, nil
	case err != nil:
		return sub, false, fmt.Errorf("notifications: %w", err)
	}
	if sub.rules, err = decodeNotifyRules(rulesJSON); err != nil {
		return sub, false, fmt.Errorf("notifications: configuration %q: notify: %w", sub.identifier, err)
	}
	if sub.callback, err = callbackOf(callbackURL, externalJSON); err != nil {
		return sub, false, fmt.Errorf("notifications: configuration %q: %w", sub.identifier, err)
	}
	return sub, true, nil
}

// callbackOf is the rule of a run's callback to callbackURL under its configuration's
// external policy (stored as externalJSON): nil when there is no URL, or the configuration
// takes callbacks no more (its callback_secret_env was removed since the request was made).
func callbackOf(callbackURL, externalJSON string) (*runtime.NotifyRule, error) {
	if callbackURL == "" || externalJSON == "" {
		return nil, nil
	}
	var p runtime.ExternalPolicy
	if err := json.Unmarshal([]byte(externalJSON), &p); err != nil {
		return nil, fmt.Errorf("external: %w", err)
	}
	if p.CallbackSecretEnv == "" {
		return nil, nil
	}
	r := runtime.CallbackRule(callbackURL, p.CallbackSecretEnv)
	return &r, nil
}

// enqueueNotifications writes, on q (the transition's transaction), one pending outbox row
// for every rule of run's configuration subscribed to n.Event, due at once, with n.Subject
// only for a rule that includes it. Called after the transition's guarded UPDATE and before
// its commit, it makes the notifications commit or
// roll back with the transition. The rules are read on q, unless known gives the subject as
// the caller read the configuration moments before (then nothing is read when no rule
// subscribes). A run whose configuration is gone, or that has no subscribed rule, gets none;
// stored rules that do not decode are an error (the transition fails rather than drop a
// notification).
func enqueueNotifications(ctx context.Context, q execer, run int64, n notice, known *notifySubject) error {
	rows, args, err := notificationRows(ctx, q, run, n, known)
	if err != nil || rows == nil {
		return err
	}
	if _, err := q.ExecContext(ctx, sqlInsertOutbox+strings.Join(rows, ", "), args...); err != nil {
		return fmt.Errorf("notifications: insert %s: %w", n.Event, err)
	}
	return nil
}

// notificationRows are enqueueNotifications' rows of sqlInsertOutbox and their arguments (nil
// when there are none), reading on q what the subject and the rows need.
func notificationRows(ctx context.Context, q execer, run int64, n notice, known *notifySubject) ([]string, []any, error) {
	sub := known
	if sub == nil {
		read, ok, err := readNotifySubject(ctx, q, run)
		if err != nil || !ok {
			return nil, nil, err
		}
		sub = &read
	}
	var rows []string
	var args []any
	adminOnly := false
	for _, rule := range sub.rulesFor(n.Event) {
		for _, r := range n.recipients(rule) {
			if rows == nil && n.Tool != "" {
				var err error
				if adminOnly, err = n.toolAdminOnly(ctx, q); err != nil {
					return nil, nil, err
				}
			}
			target, err := json.Marshal(r)
			if err != nil {
				return nil, nil, fmt.Errorf("notifications: %w", err)
			}
			subject := ""
			if r.IncludeSubject {
				subject = n.Subject
			}
			rows = append(rows, sqlOutboxRow)
			args = append(args, run, sub.uuid, string(n.Event), r.Channel, string(target), string(n.Status),
				pauseKind(n.Pause), n.Tool, sub.identifier, sub.name, adminOnly, sub.fourEyes && n.Pause == runtime.StatusWaitingApproval,
				n.WaitingSince, n.ExpiresAt, n.Now, n.due(), n.Now, n.Now, subject, n.Reason)
		}
	}
	return rows, args, nil
}

// recipients is rule as sent for n: itself, or for a personal event and a rule that mails
// people, one copy addressed to each of n.People (none when n concerns nobody with an address).
func (n notice) recipients(rule runtime.NotifyRule) []runtime.NotifyRule {
	if !rule.ToPeople || !n.Event.Personal() {
		return []runtime.NotifyRule{rule}
	}
	out := make([]runtime.NotifyRule, 0, len(n.People))
	for _, p := range n.People {
		r := rule
		r.To = []string{p}
		out = append(out, r)
	}
	return out
}

// due is when n's rows fall due: Due when set, else at once.
func (n notice) due() int64 {
	if n.Due > 0 {
		return n.Due
	}
	return n.Now
}

// sqlDropHeldWaiting removes the held `waiting` rows of a pause (run, the pause's start) that
// no dispatcher has claimed: a standing approval's claim of that pause.
const sqlDropHeldWaiting = `DELETE FROM tx_runsdesk_outbox
	WHERE run = ? AND event = 'waiting' AND state = 'pending' AND occurred_at = ?`

const sqlReleaseWaiting = `UPDATE tx_runsdesk_outbox SET due_at = ?, tstamp = ?
	WHERE run = ? AND event = 'waiting' AND state = 'pending' AND occurred_at = ? AND due_at > ?`

// ReleaseWaiting makes the held `waiting` notifications of run's pause that began at since
// due at now (runtime.Rules): the standing approvals that held them did not approve the turn.
func (s *Store) ReleaseWaiting(ctx context.Context, run, since, now int64) error {
	if _, err := s.db.ExecContext(ctx, sqlReleaseWaiting, now, now, run, since, now); err != nil {
		return fmt.Errorf("db: release waiting notifications of run %d: %w", run, err)
	}
	return nil
}

// toolAdminOnly is n.AdminOnly when set, else whether the stored definition of n.Tool is
// admin-only.
func (n notice) toolAdminOnly(ctx context.Context, q execer) (bool, error) {
	if n.AdminOnly != nil {
		return *n.AdminOnly, nil
	}
	var adminOnly bool
	err := q.QueryRowContext(ctx, sqlToolAdminOnly, n.Tool).Scan(&adminOnly)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("notifications: tool %q: %w", n.Tool, err)
	}
	return adminOnly, nil
}

// pauseKind is "approval" or "input" for a waiting status, "" otherwise.
func pauseKind(s runtime.Status) string {
	switch s {
	case runtime.StatusWaitingApproval:
		return "approval"
	case runtime.StatusWaitingInput:
		return "input"
	}
	return ""
}

// firstTool is the first name of a pending_tools list.
func firstTool(tools string) string {
	first, _, _ := strings.Cut(tools, ",")
	return first
}

const outboxColumns = `uid, run, run_uuid, event, target, run_status, kind, tool,
	configuration_identifier, configuration_name, admin_only, four_eyes, waiting_since,
	expires_at, occurred_at, state, attempts, due_at, last_error, sent_at, subject, termination_reason`

func scanNotification(sc scanner) (runtime.Notification, error) {
	var n runtime.Notification
	var event, target, status string
	err := sc.Scan(&n.UID, &n.Run, &n.RunUUID, &event, &target, &status, &n.Kind, &n.Tool,
		&n.ConfigurationIdentifier, &n.ConfigurationName, &n.AdminOnly, &n.FourEyes, &n.WaitingSince,
		&n.ExpiresAt, &n.OccurredAt, &n.State, &n.Attempts, &n.DueAt, &n.LastError, &n.SentAt, &n.Subject, &n.TerminationReason)
	if err != nil {
		return n, err
	}
	n.Event, n.Status = runtime.NotifyEvent(event), runtime.Status(status)
	if err := json.Unmarshal([]byte(target), &n.Rule); err != nil {
		return n, fmt.Errorf("notification %d: target: %w", n.UID, err)
	}
	return n, nil
}

// lastErrorLen is the width of tx_runsdesk_outbox.last_error.
const lastErrorLen = 255

const sqlDueNotifications = `SELECT uid, target FROM tx_runsdesk_outbox
	WHERE (state IN ('pending', 'sending')`

const sqlDueBlocked = ` OR state = 'blocked'`

const sqlDueBlockedEnv = ` AND COALESCE(JSON_UNQUOTE(JSON_EXTRACT(target, '$.secret_env')),
	JSON_UNQUOTE(JSON_EXTRACT(target, '$.webhook_url_env')), '') NOT IN (?`

const sqlDueSkip = ` AND target NOT IN (?`

const sqlDueAt = ` AND due_at <= ? LIMIT ?`

const sqlClaimNotification = `UPDATE tx_runsdesk_outbox
	SET state = 'sending', claimed_by = ?, due_at = ?, attempts = attempts + 1, tstamp = ?
	WHERE uid = ? AND state IN ('pending', 'sending', 'blocked') AND due_at <= ?`

const sqlBlockNotification = `UPDATE tx_runsdesk_outbox
	SET state = 'blocked', claimed_by = '', last_error = ?, tstamp = ?
	WHERE uid = ? AND state IN ('pending', 'sending', 'blocked') AND due_at <= ?`

const sqlNotificationByUID = `SELECT ` + outboxColumns + ` FROM tx_runsdesk_outbox WHERE uid = ?`

// dueNotifications is the claim scan of reach: pending rows and lapsed claims due at now, and
// blocked ones but for those reach is known not to send (a variable of reach.Unset; email
// with reach.NoMail); rows of the rules of reach.Skip are left out. A rule that does not
// encode is an error.
func dueNotifications(reach runtime.NotifyReach, now int64, limit int) (string, []any, error) {
	query := sqlDueNotifications + sqlDueBlocked
	var args []any
	if reach.NoMail {
		query += ` AND channel <> 'email'`
	}
	if len(reach.Unset) > 0 {
		query += sqlDueBlockedEnv + strings.Repeat(", ?", len(reach.Unset)-1) + ")"
		for _, name := range reach.Unset {
			args = append(args, name)
		}
	}
	query += ")"
	if len(reach.Skip) > 0 {
		query += sqlDueSkip + strings.Repeat(", ?", len(reach.Skip)-1) + ")"
		for _, r := range reach.Skip {
			target, err := json.Marshal(r)
			if err != nil {
				return "", nil, fmt.Errorf("notifications: %w", err)
			}
			args = append(args, string(target))
		}
	}
	return query + sqlDueAt, append(args, now, limit), nil
}

// dueRow is a row of the claim scan: its uid and its rule.
type dueRow struct {
	uid  int64
	rule runtime.NotifyRule
}

// ClaimNotifications claims up to limit due notifications for owner until until (unix
// seconds): pending rows due at now, rows whose previous claim lapsed (a dispatcher that
// died mid-delivery) and blocked rows. Each claim is one guarded UPDATE (→ sending,
// claimed_by=owner, due_at=until, attempts+1), so of dispatchers racing for a row exactly one
// gets it; rows another dispatcher took first are skipped. A row reach.Blocked refuses is
// not claimed and no attempt is spent: it is marked blocked with the reason, due as before,
// for a process that can send it; a row reach.Slots refuses (its destination busy) is left
// as it is. Each claimed row keeps the slot taken for it; the slot of a row not claimed after
// all is given back. The claimed rows are returned as stored.
func (s *Store) ClaimNotifications(ctx context.Context, owner string, now, until int64, limit int, reach runtime.NotifyReach) ([]runtime.Notification, error) {
	query, args, err := dueNotifications(reach, now, limit)
	if err != nil {
		return nil, fmt.Errorf("db: due notifications: %w", err)
	}
	due, err := queryAll(ctx, s.db, func(rows *sql.Rows) (dueRow, error) {
		var d dueRow
		var target string
		if err := rows.Scan(&d.uid, &target); err != nil {
			return d, err
		}
		if err := json.Unmarshal([]byte(target), &d.rule); err != nil {
			return d, fmt.Errorf("notification %d: target: %w", d.uid, err)
		}
		return d, nil
	}, query, args...)
	if err != nil {
		return nil, fmt.Errorf("db: due notifications: %w", err)
	}
	var out []runtime.Notification
	for _, d := range due {
		if reason := reach.Refuses(d.rule); reason != "" {
			if _, err := s.db.ExecContext(ctx, sqlBlockNotification, auditField(reason, lastErrorLen), now, d.uid, now); err != nil {
				return out, fmt.Errorf("db: block notification %d: %w", d.uid, err)
			}
			continue
		}
		if reach.Slots != nil && !reach.Slots.Take(d.rule) {
			continue
		}
		n, err := s.claimNotification(ctx, d.uid, owner, now, until)
		if err != nil && reach.Slots != nil {
			reach.Slots.Give(d.rule)
		}
		if errors.Is(err, runtime.ErrGuard) {
			continue
		}
		if err != nil {
			return out, err
		}
		out = append(out, *n)
	}
	return out, nil
}

// claimNotification claims row uid for owner until until and reads it as claimed;
// runtime.ErrGuard when another dispatcher took it first.
func (s *Store) claimNotification(ctx context.Context, uid int64, owner string, now, until int64) (*runtime.Notification, error) {
	if err := execGuardedOn(ctx, s.prep.on(nil), "claim notification", uid, sqlClaimNotification, owner, until, now, uid, now); err != nil {
		return nil, err
	}
	n, err := scanNotification(s.db.QueryRowContext(ctx, sqlNotificationByUID, uid))
	if err != nil {
		return nil, fmt.Errorf("db: notification %d: %w", uid, err)
	}
	if n.Event == runtime.NotifyFinished && n.Rule.IncludeOutput {
		out, ok, err := s.RunOutput(ctx, n.Run, n.RunUUID)
		if err != nil {
			return nil, fmt.Errorf("db: notification %d: %w", uid, err)
		}
		if ok {
			n.Output = &out
		}
	}
	return &n, nil
}

const sqlNotificationSent = `UPDATE tx_runsdesk_outbox
	SET state = 'sent', sent_at = ?, claimed_by = '', last_error = '', tstamp = ?
	WHERE uid = ? AND state = 'sending' AND claimed_by = ?`

const sqlNotificationRetry = `UPDATE tx_runsdesk_outbox
	SET state = 'pending', due_at = ?, claimed_by = '', last_error = ?, tstamp = ?
	WHERE uid = ? AND state = 'sending' AND claimed_by = ?`

const sqlNotificationFailed = `UPDATE tx_runsdesk_outbox
	SET state = 'failed', claimed_by = '', last_error = ?, tstamp = ?
	WHERE uid = ? AND state = 'sending' AND claimed_by = ?`

// NotificationSent records a delivery: sending ∧ claimed_by=owner → sent at now.
// runtime.ErrGuard when owner's claim lapsed and another dispatcher took the row.
func (s *Store) NotificationSent(ctx context.Context, uid int64, owner string, now int64) error {
	return s.execGuarded(ctx, "notification sent", uid, sqlNotificationSent, now, now, uid, owner)
}

// NotificationRetry records a failed attempt to repeat: sending ∧ claimed_by=owner →
// pending, due at dueAt, with reason (cut to fit; it must name no secret). runtime.ErrGuard
// as for NotificationSent.
func (s *Store) NotificationRetry(ctx context.Context, uid int64, owner string, dueAt int64, reason string, now int64) error {
	return s.execGuarded(ctx, "notification retry", uid, sqlNotificationRetry, dueAt, auditField(reason, lastErrorLen), now, uid, owner)
}

// NotificationFailed gives a notification up: sending ∧ claimed_by=owner → failed, with
// reason. runtime.ErrGuard as for NotificationSent.
func (s *Store) NotificationFailed(ctx context.Context, uid int64, owner string, reason string, now int64) error {
	return s.execGuarded(ctx, "notification failed", uid, sqlNotificationFailed, auditField(reason, lastErrorLen), now, uid, owner)
}

const sqlRunNotifications = `SELECT ` + outboxColumns + ` FROM tx_runsdesk_outbox
	WHERE run = ? ORDER BY uid LIMIT ?`

const sqlRecentNotifications = `SELECT ` + outboxColumns + ` FROM tx_runsdesk_outbox
	ORDER BY uid DESC LIMIT ?`

const sqlFailedNotifications = `SELECT ` + outboxColumns + ` FROM tx_runsdesk_outbox
	WHERE state = 'failed' ORDER BY crdate DESC, uid DESC LIMIT ?`

// RunNotifications returns up to limit of the run's notifications, oldest first.
func (s *Store) RunNotifications(ctx context.Context, runUID int64, limit int) ([]runtime.Notification, error) {
	out, err := queryAll(ctx, s.db, func(rows *sql.Rows) (runtime.Notification, error) { return scanNotification(rows) },
		sqlRunNotifications, runUID, limit)
	if err != nil {
		return nil, fmt.Errorf("db: notifications of run %d: %w", runUID, err)
	}
	return out, nil
}

// Notifications returns up to limit notifications, newest first; with failedOnly only those
// given up.
func (s *Store) Notifications(ctx context.Context, failedOnly bool, limit int) ([]runtime.Notification, error) {
	query := sqlRecentNotifications
	if failedOnly {
		query = sqlFailedNotifications
	}
	out, err := queryAll(ctx, s.db, func(rows *sql.Rows) (runtime.Notification, error) { return scanNotification(rows) },
		query, limit)
	if err != nil {
		return nil, fmt.Errorf("db: notifications: %w", err)
	}
	return out, nil
}

const sqlOldestUndelivered = `SELECT LEAST(
	COALESCE((SELECT MIN(crdate) FROM tx_runsdesk_outbox WHERE state = 'pending'), 4294967295),
	COALESCE((SELECT MIN(crdate) FROM tx_runsdesk_outbox WHERE state = 'sending'), 4294967295),
	COALESCE((SELECT MIN(crdate) FROM tx_runsdesk_outbox WHERE state = 'blocked'), 4294967295))`

// OldestUndelivered returns when the oldest notification not yet sent nor given up (pending,
// sending or blocked) was written (unix seconds), and false when there is none.
func (s *Store) OldestUndelivered(ctx context.Context) (int64, bool, error) {
	var at int64
	if err := s.db.QueryRowContext(ctx, sqlOldestUndelivered).Scan(&at); err != nil {
		return 0, false, fmt.Errorf("db: oldest undelivered notification: %w", err)
	}
	if at == 4294967295 {
		return 0, false, nil
	}
	return at, true, nil
}
