package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"runsdesk/runtime"
	"runsdesk/runtime/tool"
)

// upsertSQL are the statements of one catalog table: find (uid, deleted, then the compared
// columns) by key, insert (the insert prefix, the columns, crdate, tstamp), and update (the
// columns, tstamp, uid).
type upsertSQL struct {
	find, insert, update string
}

var (
	toolUpsert          = upsertSQL{sqlToolForUpsert, sqlInsertTool, sqlUpdateTool}
	configurationUpsert = upsertSQL{sqlConfigurationForUpsert, sqlInsertConfiguration, sqlUpdateConfiguration}
)

// UpsertCatalog creates or updates tools (keyed by name), then configurations (keyed by
// identifier), all in one transaction, and reports for each item, tools first, whether it was
// written: only what differs from the stored row is written, and a soft-deleted row is
// revived. On any error nothing is written; the error names the item that failed. An empty
// key, or tool JSON that is not JSON, is refused before the transaction.
func (s *Store) UpsertCatalog(ctx context.Context, tools []tool.Definition, configs []runtime.Configuration) ([]bool, error) {
	return s.UpsertDesk(ctx, tools, configs, runtime.RuleChanges{})
}

// UpsertDesk is UpsertCatalog followed, in the same transaction, by the standing approvals'
// rules (writeRules): an apply is written whole or not at all.
func (s *Store) UpsertDesk(ctx context.Context, tools []tool.Definition, configs []runtime.Configuration, rules runtime.RuleChanges) ([]bool, error) {
	toolRows := make([]toolRow, len(tools))
	for i, d := range tools {
		if d.Name == "" {
			return nil, errors.New("db: upsert tool: empty name")
		}
		r, err := toolToRow(d)
		if err != nil {
			return nil, fmt.Errorf("db: upsert tool %q: %w", d.Name, err)
		}
		toolRows[i] = r
	}
	configRows := make([]configurationRow, len(configs))
	for i, c := range configs {
		if c.Identifier == "" {
			return nil, errors.New("db: upsert configuration: empty identifier")
		}
		r, err := configurationToRow(c)
		if err != nil {
			return nil, fmt.Errorf("db: upsert configuration %q: %w", c.Identifier, err)
		}
		configRows[i] = r
	}
	now := s.now().Unix()
	wrote := make([]bool, len(tools)+len(configs))
	err := s.inTx(ctx, isDuplicateKey, func(tx *sql.Tx) error {
		for i, r := range toolRows {
			w, err := upsertRow(ctx, tx, toolUpsert, tools[i].Name, nil, r, toolRow.args, (*toolRow).dest, now)
			if err != nil {
				return fmt.Errorf("upsert tool %q: %w", tools[i].Name, err)
			}
			wrote[i] = w
		}
		for i, r := range configRows {
			id := configs[i].Identifier
			w, err := upsertRow(ctx, tx, configurationUpsert, id, []any{id}, r, configurationRow.columns, (*configurationRow).dest, now)
			if err != nil {
				return fmt.Errorf("upsert configuration %q: %w", id, err)
			}
			wrote[len(tools)+i] = w
		}
		return writeRules(ctx, tx, rules, now)
	})
	if err != nil {
		return nil, fmt.Errorf("db: %w", err)
	}
	return wrote, nil
}

// UpsertTool is UpsertCatalog of the one tool d.
func (s *Store) UpsertTool(ctx context.Context, d tool.Definition) (bool, error) {
	wrote, err := s.UpsertCatalog(ctx, []tool.Definition{d}, nil)
	if err != nil {
		return false, err
	}
	return wrote[0], nil
}

// UpsertConfiguration is UpsertCatalog of the one configuration c (c.UID is ignored; hidden
// is left as it is).
func (s *Store) UpsertConfiguration(ctx context.Context, c runtime.Configuration) (bool, error) {
	wrote, err := s.UpsertCatalog(ctx, nil, []runtime.Configuration{c})
	if err != nil {
		return false, err
	}
	return wrote[0], nil
}

// upsertRow creates or updates, in tx, the catalog row keyed by key, writing only when the
// stored columns differ from want or the row was soft-deleted (which revives it), and reports
// whether it wrote. columns lists want's values in statement order; dest the scan targets of a
// row.
func upsertRow[R comparable](ctx context.Context, tx *sql.Tx, q upsertSQL, key string, insertPrefix []any,
	want R, columns func(R) []any, dest func(*R) []any, now int64) (bool, error) {
	var uid int64
	var deleted bool
	var have R
	err := tx.QueryRowContext(ctx, q.find, key).Scan(append([]any{&uid, &deleted}, dest(&have)...)...)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		args := append(append(append([]any(nil), insertPrefix...), columns(want)...), now, now)
		_, err = tx.ExecContext(ctx, q.insert, args...)
		return err == nil, err
	case err != nil:
		return false, err
	case have == want && !deleted:
		return false, nil
	}
	_, err = tx.ExecContext(ctx, q.update, append(columns(want), now, uid)...)
	return err == nil, err
}
