package db

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"runsdesk/runtime"
)

const standingApprovalColumns = `name, tool, configuration, when_schema, until_at, max_uses, allow_writes, author, uses, revoked, revoked_by`

const sqlStandingApprovals = `SELECT ` + standingApprovalColumns + `
	FROM tx_runsdesk_standing_approval ORDER BY name`

func scanStandingApproval(rows *sql.Rows) (runtime.StandingApproval, error) {
	var r runtime.StandingApproval
	var when string
	err := rows.Scan(&r.Name, &r.Tool, &r.Configuration, &when, &r.Until, &r.MaxUses, &r.AllowWrites, &r.Author, &r.Uses, &r.Revoked, &r.RevokedBy)
	r.When = []byte(when)
	return r, err
}

// StandingApprovals returns every stored standing approval, revoked ones included, by name.
func (s *Store) StandingApprovals(ctx context.Context) ([]runtime.StandingApproval, error) {
	rules, err := queryAll(ctx, s.db, scanStandingApproval, sqlStandingApprovals)
	if err != nil {
		return nil, fmt.Errorf("db: standing approvals: %w", err)
	}
	return rules, nil
}

// ActiveRules returns the standing approvals in force at now (not revoked, before until_at,
// below max_uses) for any of tools, by name (runtime.Rules).
func (s *Store) ActiveRules(ctx context.Context, tools []string, now int64) ([]runtime.StandingApproval, error) {
	if len(tools) == 0 {
		return nil, nil
	}
	args := make([]any, 0, len(tools)+1)
	for _, t := range tools {
		args = append(args, t)
	}
	args = append(args, now)
	rules, err := queryAll(ctx, s.db, scanStandingApproval, `SELECT `+standingApprovalColumns+`
		FROM tx_runsdesk_standing_approval
		WHERE tool IN (?`+strings.Repeat(", ?", len(tools)-1)+`) AND revoked = 0
		  AND (until_at = 0 OR until_at > ?) AND (max_uses = 0 OR uses < max_uses)
		ORDER BY name`, args...)
	if err != nil {
		return nil, fmt.Errorf("db: active standing approvals: %w", err)
	}
	return rules, nil
}

// sqlUseRule counts one use of a standing approval still in force at the claim's time: the
// guard that makes max_uses exact under concurrent claims.
const sqlUseRule = `UPDATE tx_runsdesk_standing_approval SET uses = uses + 1, tstamp = ?
	WHERE name = ? AND revoked = 0 AND (until_at = 0 OR until_at > ?) AND (max_uses = 0 OR uses < max_uses)`

// WriteStandingApprovals stores rules alone (UpsertDesk without tools or configurations).
func (s *Store) WriteStandingApprovals(ctx context.Context, write []runtime.StandingApproval, revoke []string, author int64) error {
	_, err := s.UpsertDesk(ctx, nil, nil, runtime.RuleChanges{Write: write, Revoke: revoke, Author: author})
	return err
}

// writeRules writes c in tx at now: each rule of c.Write created, or updated and put back in
// force, keyed by name (its uses kept), with c.Author as its author; each name of c.Revoke
// still in force revoked.
func writeRules(ctx context.Context, tx *sql.Tx, c runtime.RuleChanges, now int64) error {
	for _, r := range c.Write {
		if _, err := tx.ExecContext(ctx, `INSERT INTO tx_runsdesk_standing_approval
			(tstamp, crdate, name, tool, configuration, when_schema, until_at, max_uses, allow_writes, author)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON DUPLICATE KEY UPDATE tstamp = VALUES(tstamp), tool = VALUES(tool), configuration = VALUES(configuration),
			  when_schema = VALUES(when_schema), until_at = VALUES(until_at), max_uses = VALUES(max_uses),
			  allow_writes = VALUES(allow_writes), author = VALUES(author), revoked = 0, revoked_by = ''`,
			now, now, r.Name, r.Tool, r.Configuration, string(r.When), r.Until, r.MaxUses, r.AllowWrites, c.Author); err != nil {
			return fmt.Errorf("write standing approval %q: %w", r.Name, err)
		}
	}
	for _, name := range c.Revoke {
		if _, err := tx.ExecContext(ctx, `UPDATE tx_runsdesk_standing_approval SET revoked = ?, revoked_by = ?, tstamp = ?
			WHERE name = ? AND revoked = 0`, now, runtime.RevokedByApply, now, name); err != nil {
			return fmt.Errorf("revoke standing approval %q: %w", name, err)
		}
	}
	return nil
}

// RevokeStandingApproval revokes the rule name at now as the CLI (revoked_by 'cli'), with
// audit's row when not nil in the same transaction. runtime.ErrNotFound when no rule is named
// so or it is already revoked; then nothing is written.
func (s *Store) RevokeStandingApproval(ctx context.Context, name string, now int64, audit *runtime.AuditRecord) error {
	err := inTx(ctx, s.db, func(tx *sql.Tx) error {
		return updateOne(ctx, tx, `UPDATE tx_runsdesk_standing_approval SET revoked = ?, revoked_by = ?, tstamp = ?
			WHERE name = ? AND revoked = 0`, []any{now, runtime.RevokedByCLI, now, name}, audit, now)
	})
	if err != nil {
		return fmt.Errorf("db: revoke standing approval %q: %w", name, err)
	}
	return nil
}

// StandingApprovalUses returns the uses of every stored standing approval, revoked ones
// included, by name (the metrics' runsdesk_standing_approval_uses_total).
func (s *Store) StandingApprovalUses(ctx context.Context) (map[string]int64, error) {
	rules, err := s.StandingApprovals(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(rules))
	for _, r := range rules {
		out[r.Name] = r.Uses
	}
	return out, nil
}
