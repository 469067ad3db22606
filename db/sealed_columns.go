package db

import (
	"context"
	"database/sql"
	"fmt"

	"runsdesk/seal"
)

// SealedColumn is one column whose values are sealed (package seal) while keys are set: the
// one place a sealed column is declared. Its writers and readers take their seal.Place from
// it, and keys rotate, --seal-clear and the key counts (SealedKeyCounts) cover every entry.
type SealedColumn struct {
	// Table and Column name the column; KeyColumn is its indexed key-id column (the key id of
	// an envelope, NULL for cleartext), generated from it (0033_sealed_key_ids.sql).
	Table, Column, KeyColumn string
	// run is the SQL column of a row's run uid (bound as the place's RunUUID; "" for a value
	// of no run, such as a person's TOTP secret); person the one bound as its Person ("" when
	// none).
	run, person string
}

// place is where c's value of run uuid (and person, for a column bound to one) is sealed.
func (c SealedColumn) place(uuid string, person int64) seal.Place {
	return seal.Place{Table: c.Table, Column: c.Column, RunUUID: uuid, Person: person}
}

// Name is c as table.column.
func (c SealedColumn) Name() string { return c.Table + "." + c.Column }

// sealedColumn declares column of table, its rows' run in run and person in person.
func sealedColumn(table, column, run, person string) SealedColumn {
	return SealedColumn{Table: table, Column: column, KeyColumn: column + "_key_id", run: run, person: person}
}

var (
	sealedSuspendedState = sealedColumn(runsTable, colSuspendedState, "uid", "")
	sealedQueuedRequest  = sealedColumn(runsTable, colQueuedRequest, "uid", "")
	sealedDecisionArgs   = sealedColumn("tx_runsdesk_decision", "arguments", "run", "")
	sealedDecisionReason = sealedColumn("tx_runsdesk_decision", "reason", "run", "")
	sealedCallProposed   = sealedColumn(callsTable, "proposed", "run", "")
	sealedCallApproved   = sealedColumn(callsTable, "approved", "run", "")
	sealedCallEffective  = sealedColumn(callsTable, "effective", "run", "")
	sealedDraftValues    = sealedColumn("tx_runsdesk_draft", "form_values", "run", "be_user")
	sealedRunOutput      = sealedColumn(outputTable, "output_text", "run", "")
	sealedEventContent   = sealedColumn(contentTable, "content", "run", "")
	sealedCommentBody    = sealedColumn(commentsTable, "body", "run", "")
)

// sealedCallColumns are tx_runsdesk_call's argument columns, in the order of callArguments.
var sealedCallColumns = [3]SealedColumn{sealedCallProposed, sealedCallApproved, sealedCallEffective}

// SealedColumns lists every sealed column, in the order keys rotate re-seals them.
func SealedColumns() []SealedColumn {
	return []SealedColumn{
		sealedSuspendedState, sealedQueuedRequest,
		sealedDecisionArgs, sealedDecisionReason,
		sealedCallProposed, sealedCallApproved, sealedCallEffective,
		sealedDraftValues,
		sealedRunOutput,
		sealedEventContent,
		sealedCommentBody,
		sealedTOTPSecret,
	}
}

// KeyCount is how many rows hold a value of Column sealed with key KeyID.
type KeyCount struct {
	Column SealedColumn
	KeyID  string
	Rows   int64
}

// SealedKeyCounts counts, per sealed column and key id, the rows sealed with that key, read
// from each column's indexed key-id column (never every row).
func (s *Store) SealedKeyCounts(ctx context.Context) ([]KeyCount, error) {
	var out []KeyCount
	for _, c := range SealedColumns() {
		query := `SELECT ` + c.KeyColumn + `, COUNT(*) FROM ` + c.Table + ` FORCE INDEX (` + c.KeyColumn + `)
			WHERE ` + c.KeyColumn + ` IS NOT NULL GROUP BY ` + c.KeyColumn + ` ORDER BY ` + c.KeyColumn
		counts, err := queryAll(ctx, s.db, func(r *sql.Rows) (KeyCount, error) {
			k := KeyCount{Column: c}
			return k, r.Scan(&k.KeyID, &k.Rows)
		}, query)
		if err != nil {
			return nil, fmt.Errorf("db: sealed key counts of %s: %w", c.Name(), err)
		}
		out = append(out, counts...)
	}
	return out, nil
}

// MissingKeys are the counts of counts whose key keys does not hold.
func MissingKeys(counts []KeyCount, keys *seal.Keyring) []KeyCount {
	var out []KeyCount
	for _, k := range counts {
		if !keys.Has(k.KeyID) {
			out = append(out, k)
		}
	}
	return out
}
