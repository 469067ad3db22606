// Package typo3site checks the tables of a TYPO3 site that runsdesk reads when it runs beside
// the site (--typo3): the backend accounts and groups (be_users, be_groups), which must be
// there, and the nr-llm extension's runs (tx_nrllm_agentrun), created when the site lacks
// it. It reads information_schema and never adds, alters or drops a column or key of a TYPO3
// table.
package typo3site

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"slices"
	"strings"
)

//go:embed nrllm_agentrun.sql
var createAgentRun string

// AgentRunTable is the CREATE TABLE statement of tx_nrllm_agentrun as the nr-llm extension
// defines it (what Check makes when the site lacks it).
func AgentRunTable() string { return createAgentRun }

// Table is a TYPO3 table runsdesk reads and the columns it reads of it.
type Table struct {
	Name    string
	Columns []string
	// create makes the table as TYPO3 would when the site lacks it; "" means the site must
	// have it.
	create string
}

// Tables are the TYPO3 tables runsdesk reads beside a site, each with the columns it reads.
func Tables() []Table {
	return []Table{
		{Name: "be_users", Columns: []string{"uid", "username", "password", "admin", "disable", "deleted",
			"starttime", "endtime", "usergroup", "mfa", "realName", "email"}},
		{Name: "be_groups", Columns: []string{"uid", "title", "subgroup", "hidden", "deleted"}},
		{Name: "tx_nrllm_agentrun", Columns: []string{"uid", "uuid", "status", "configuration_uid",
			"configuration_identifier", "be_user", "suspended_state", "started_at", "finished_at",
			"tstamp", "crdate"}, create: createAgentRun},
	}
}

// Check makes sure the database behind pool (a pool that does not rename tables) has every
// table of Tables with the columns runsdesk reads: a table the site must have and lacks, or
// one without a column runsdesk reads, is an error naming them, and nothing is changed;
// otherwise tx_nrllm_agentrun is created as the extension defines it when it is missing.
// Nothing else is ever changed.
func Check(ctx context.Context, pool *sql.DB) error {
	have, err := columns(ctx, pool)
	if err != nil {
		return err
	}
	var problems []string
	var creates []Table
	for _, t := range Tables() {
		cols, ok := have[strings.ToLower(t.Name)]
		switch {
		case !ok && t.create != "":
			creates = append(creates, t)
		case !ok:
			problems = append(problems, fmt.Sprintf("table %s is missing", t.Name))
		default:
			var missing []string
			for _, c := range t.Columns {
				if !slices.Contains(cols, strings.ToLower(c)) {
					missing = append(missing, c)
				}
			}
			if len(missing) > 0 {
				problems = append(problems, fmt.Sprintf("table %s lacks column(s) %s", t.Name, strings.Join(missing, ", ")))
			}
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("typo3site: this database is not a TYPO3 site runsdesk can run beside (--typo3): %s", strings.Join(problems, "; "))
	}
	for _, t := range creates {
		if _, err := pool.ExecContext(ctx, t.create); err != nil {
			return fmt.Errorf("typo3site: create %s: %w", t.Name, err)
		}
	}
	return nil
}

// columns lists, lowercased, the columns of each table of Tables the database has.
func columns(ctx context.Context, pool *sql.DB) (map[string][]string, error) {
	names := make([]any, 0, 3)
	for _, t := range Tables() {
		names = append(names, t.Name)
	}
	rows, err := pool.QueryContext(ctx, `SELECT LOWER(table_name), LOWER(column_name) FROM information_schema.columns
		WHERE table_schema = DATABASE() AND table_name IN (`+strings.TrimSuffix(strings.Repeat("?, ", len(names)), ", ")+`)`, names...)
	if err != nil {
		return nil, fmt.Errorf("typo3site: read the site's columns: %w", err)
	}
	defer rows.Close()
	have := map[string][]string{}
	for rows.Next() {
		var table, column string
		if err := rows.Scan(&table, &column); err != nil {
			return nil, fmt.Errorf("typo3site: read the site's columns: %w", err)
		}
		have[table] = append(have[table], column)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("typo3site: read the site's columns: %w", err)
	}
	return have, nil
}
