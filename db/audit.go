package db

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"runsdesk/runtime"
)

// Column widths of tx_runsdesk_audit (0008_audit.sql); longer values are cut to fit.
const (
	auditNameLen    = 100
	auditIPLen      = 45
	auditActionLen  = 32
	auditRunLen     = 36
	auditOutcomeLen = 32
	auditReasonLen  = 1000
)

// AuditEntry is one row of the audit trail. Time is unix seconds (UTC).
type AuditEntry struct {
	UID       int64
	Time      int64
	ActorUID  int64
	ActorName string
	IP        string
	Action    string
	RunUUID   string
	Outcome   string
	Reason    string
}

// Audit appends to the audit trail (tx_runsdesk_audit): sign-ins, sign-outs, access denials.
// Rows are never deleted; only a retention pass updates them, clearing the reason of a removed
// run's rows (SweepRetention). It is safe for concurrent use.
type Audit struct {
	db  *sql.DB
	now func() time.Time
}

// NewAudit returns Audit on sqlDB; now defaults to time.Now.
func NewAudit(sqlDB *sql.DB, now func() time.Time) *Audit {
	if now == nil {
		now = time.Now
	}
	return &Audit{db: sqlDB, now: now}
}

// Record appends one row: who (actor's uid and name; uid 0 for anonymous callers and service
// accounts), from where (ip), what (action, e.g. "login"), on which run (runUUID, may be
// empty), how it ended (outcome, e.g. "success", "denied") and why (reason). Callers pass
// no submitted values, passwords or tokens. Control characters are replaced and every field
// is cut to its column width.
func (a *Audit) Record(ctx context.Context, actor runtime.Actor, ip, action, runUUID, outcome, reason string) error {
	return insertAudit(ctx, retryingPool{a.db}, a.now().UTC().Unix(), actor, ip, action, runUUID, outcome, reason)
}

// sqlInsertAudit and sqlAuditRow insert one audit row (auditArgs).
const sqlInsertAudit = `INSERT INTO tx_runsdesk_audit
	(crdate, actor_uid, actor_name, ip, action, run_uuid, outcome, reason) VALUES `

const sqlAuditRow = `(?, ?, ?, ?, ?, ?, ?, ?)`

// auditArgs are the arguments of sqlAuditRow, fields cleaned and cut to their columns.
func auditArgs(at int64, actor runtime.Actor, ip, action, runUUID, outcome, reason string) []any {
	return []any{at, actor.UserUID, auditField(actor.Name, auditNameLen), auditField(ip, auditIPLen),
		auditField(action, auditActionLen), auditField(runUUID, auditRunLen), auditField(outcome, auditOutcomeLen),
		auditField(reason, auditReasonLen)}
}

// insertAudit is Record on q (the pool or a transaction) with the row's time given.
func insertAudit(ctx context.Context, q execer, at int64, actor runtime.Actor, ip, action, runUUID, outcome, reason string) error {
	_, err := q.ExecContext(ctx, sqlInsertAudit+sqlAuditRow, auditArgs(at, actor, ip, action, runUUID, outcome, reason)...)
	if err != nil {
		return fmt.Errorf("db: audit %s: %w", action, err)
	}
	return nil
}

// RecentAudit returns up to limit (1–1000) most recent audit rows, newest first.
func (a *Audit) RecentAudit(ctx context.Context, limit int) ([]AuditEntry, error) {
	limit = min(max(limit, 1), 1000)
	rows, err := a.db.QueryContext(ctx, `SELECT uid, crdate, actor_uid, actor_name, ip, action,
		run_uuid, outcome, reason FROM tx_runsdesk_audit ORDER BY uid DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("db: recent audit: %w", err)
	}
	defer rows.Close()
	var out []AuditEntry
	for rows.Next() {
		var e AuditEntry
		if err := rows.Scan(&e.UID, &e.Time, &e.ActorUID, &e.ActorName, &e.IP, &e.Action,
			&e.RunUUID, &e.Outcome, &e.Reason); err != nil {
			return nil, fmt.Errorf("db: recent audit: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: recent audit: %w", err)
	}
	return out, nil
}

// auditField replaces control characters and invalid UTF-8 with U+FFFD and cuts s to n runes.
func auditField(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '\uFFFD'
		}
		return r
	}, s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}
