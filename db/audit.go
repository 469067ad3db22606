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

// MaxAuditPage is the most rows one ListAudit call returns (runtime.MaxAuditPage).
const MaxAuditPage = runtime.MaxAuditPage

// sqlListAudit is a page of audit rows newest first with their chain sequence; the index
// hint (auditIndex) goes at %s and the filters after WHERE. Each equality filter is a range of
// its key in uid order (InnoDB appends the primary key to a secondary one;
// 0045_audit_chain.sql), the keyset cursor one of the primary key.
const sqlListAudit = `SELECT a.uid, a.crdate, a.actor_uid, a.actor_name, a.ip, a.action, a.run_uuid, a.outcome,
	a.reason, COALESCE(c.seq, 0) FROM tx_runsdesk_audit a %s
	LEFT JOIN tx_runsdesk_chain c ON c.source = 1 AND c.source_uid = a.uid
	WHERE `

// auditClockSlack bounds how far a row's time may run ahead of or behind the rows inserted
// around it (clocks of the nodes, a late commit): a time range is narrowed to a uid range
// through KEY crdate with this margin, so a page of an old range reads that range only.
const auditClockSlack = 3600

// sqlAuditUIDRange bounds a time range's uids: rows from Since on come after the last row
// written auditClockSlack before it; rows before Until come before the first row written
// auditClockSlack after it. Each bound is one row read from KEY crdate.
const sqlAuditUIDRange = `SELECT
	COALESCE((SELECT uid FROM tx_runsdesk_audit WHERE crdate < ? ORDER BY crdate DESC, uid DESC LIMIT 1), 0),
	COALESCE((SELECT uid FROM tx_runsdesk_audit WHERE crdate >= ? ORDER BY crdate, uid LIMIT 1), 4294967295)`

// auditUIDRange is the uid range holding every row of f's time range (sqlAuditUIDRange); an
// unset bound leaves its side open.
func (a *Audit) auditUIDRange(ctx context.Context, f runtime.AuditFilter) (low, high int64, err error) {
	since, until := f.Since-auditClockSlack, f.Until+auditClockSlack
	if f.Since <= 0 {
		since = 0
	}
	if f.Until <= 0 {
		until = 1 << 32 // after every row
	}
	if err := a.db.QueryRowContext(ctx, sqlAuditUIDRange, since, until).Scan(&low, &high); err != nil {
		return 0, 0, fmt.Errorf("db: list audit: time range: %w", err)
	}
	return low, high, nil
}

// auditIndex is the index hint of a filtered page: the key of its most selective equality
// filter (run, actor, action, outcome, in that order), so that the page is read in uid order
// from one key and never an intersection of two sorted afterwards; none without one.
func auditIndex(f runtime.AuditFilter) string {
	for _, k := range []struct{ value, key string }{{f.RunUUID, "run_uuid"}, {f.Actor, "actor_name"}, {f.Action, "action"}, {f.Outcome, "outcome"}} {
		if k.value != "" {
			return "FORCE INDEX (" + k.key + ")"
		}
	}
	return ""
}

// ListAudit returns one page of the audit rows f selects, newest first by uid, in one statement
// (two with a time range); the next page is the one Before the last row's uid.
func (a *Audit) ListAudit(ctx context.Context, f runtime.AuditFilter) ([]runtime.AuditEntry, error) {
	where, args := []string{"TRUE"}, []any{}
	for _, eq := range []struct {
		column, value string
	}{{"a.actor_name", f.Actor}, {"a.action", f.Action}, {"a.run_uuid", f.RunUUID}, {"a.outcome", f.Outcome}} {
		if eq.value != "" {
			where, args = append(where, eq.column+" = ?"), append(args, eq.value)
		}
	}
	if f.Since > 0 || f.Until > 0 {
		low, high, err := a.auditUIDRange(ctx, f)
		if err != nil {
			return nil, err
		}
		where, args = append(where, "a.uid BETWEEN ? AND ?"), append(args, low, high)
	}
	if f.Since > 0 {
		where, args = append(where, "a.crdate >= ?"), append(args, f.Since)
	}
	if f.Until > 0 {
		where, args = append(where, "a.crdate < ?"), append(args, f.Until)
	}
	if f.Before > 0 {
		where, args = append(where, "a.uid < ?"), append(args, f.Before)
	}
	limit := min(max(f.Limit, 1), MaxAuditPage)
	rows, err := queryPage(ctx, a.db, limit, scanAuditEntry,
		fmt.Sprintf(sqlListAudit, auditIndex(f))+strings.Join(where, " AND ")+` ORDER BY a.uid DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("db: list audit: %w", err)
	}
	return rows, nil
}

func scanAuditEntry(rows *sql.Rows) (runtime.AuditEntry, error) {
	var e runtime.AuditEntry
	err := rows.Scan(&e.UID, &e.Time, &e.ActorUID, &e.ActorName, &e.IP, &e.Action, &e.RunUUID, &e.Outcome, &e.Reason, &e.ChainSeq)
	return e, err
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

// AppendAudit appends rec as one row about run runUUID at now (runtime.Audits): the row of a
// decision attempt refused or replayed, its reason as given.
func (s *Store) AppendAudit(ctx context.Context, runUUID string, now int64, rec runtime.AuditRecord) error {
	return insertAudit(ctx, retryingPool{s.db}, now, rec.Actor, rec.IP, rec.Action, runUUID, rec.Outcome, rec.Reason)
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

// RecentAudit returns up to limit (1–1000) most recent audit rows, newest first (ListAudit
// without filters).
func (a *Audit) RecentAudit(ctx context.Context, limit int) ([]runtime.AuditEntry, error) {
	return a.ListAudit(ctx, runtime.AuditFilter{Limit: limit})
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
