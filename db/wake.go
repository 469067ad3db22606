package db

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Kinds of item Stamps reads (the same strings as package waiters' Kind constants).
const (
	wakeKindRun            = "run"
	wakeKindServiceAccount = "service_account"
)

// sqlWakeStamps are the stamp queries of Stamps by kind, each by a unique or primary-ordered
// key (KEY run_uuid, UNIQUE KEY name); "%s" is the list of placeholders. A run's stamp
// changes with its status and its pause (pause_sequence, suspended_at); a service account's
// when it is disabled, its token rotated or its scopes changed.
var sqlWakeStamps = map[string]string{
	wakeKindRun: `SELECT uuid, CONCAT_WS(':', status, pause_sequence, suspended_at)
		FROM tx_nrllm_agentrun WHERE uuid IN (%s)`,
	wakeKindServiceAccount: `SELECT name, CONCAT_WS(':', disabled, token_hash, scopes)
		FROM tx_runsdesk_service_account WHERE name IN (%s)`,
}

// Stamps returns the current stamp of each item of kind ("run" by uuid, "service_account"
// by name) with one of ids, for the shared poll of waiting requests; items that do not exist
// are left out. An unknown kind is an error.
func (s *Store) Stamps(ctx context.Context, kind string, ids []string) (map[string]string, error) {
	query, ok := sqlWakeStamps[kind]
	if !ok {
		return nil, fmt.Errorf("read stamps: unknown kind %q", kind)
	}
	out := make(map[string]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	marks := strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",")
	rows, err := queryAll(ctx, s.db, scanStamp, fmt.Sprintf(query, marks), args...)
	if err != nil {
		return nil, fmt.Errorf("read %s stamps: %w", kind, err)
	}
	for _, r := range rows {
		out[r[0]] = r[1]
	}
	return out, nil
}

func scanStamp(rows *sql.Rows) ([2]string, error) {
	var r [2]string
	err := rows.Scan(&r[0], &r[1])
	return r, err
}
