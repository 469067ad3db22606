package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"runsdesk/seal"
)

// ResealBatch is what one Reseal call did.
type ResealBatch struct {
	// Next is the row uid to pass as after to continue; Done when no row is left past it.
	Next int64
	Done bool
	// Scanned rows held a value; Resealed of them were sealed again with the active key;
	// Current already were; Clear are cleartext left as they are (sealClear unset).
	Scanned, Resealed, Current, Clear int
	// Unopenable names the runs (or, for a person's value, "user N") whose stored values do not
	// open: left as stored, never guessed.
	Unopenable []string
}

// owner names whose value x is: its run's uuid, else the person ("user 7").
func (x resealRow) owner() string {
	if x.uuid == "" {
		return fmt.Sprintf("user %d", x.person)
	}
	return x.uuid
}

// resealAttempts bounds how often one row is re-read after a concurrent write changed it.
const resealAttempts = 3

// resealRow is one stored value of a sealed column as Reseal reads it.
type resealRow struct {
	uid, person int64
	uuid, value string
}

// resealScan selects, for column c, up to LIMIT rows with uid > ? holding a value: the row's
// uid, its run's uuid (” for a column of no run), the person bound into the place (0 for
// none) and the value.
func resealScan(c SealedColumn) string {
	person := "0"
	if c.person != "" {
		person = "t." + c.person
	}
	uuid, join := "r.uuid", ` JOIN tx_nrllm_agentrun r ON r.uid = t.`+c.run
	if c.run == "" {
		uuid, join = "''", ""
	}
	return `SELECT t.uid, ` + uuid + `, ` + person + `, t.` + c.Column + ` FROM ` + c.Table + ` t` + join + `
	WHERE t.uid > ? AND t.` + c.Column + ` <> '' ORDER BY t.uid LIMIT ?`
}

// resealUpdate rewrites column c of one row only while it still holds the value read (by its
// digest, so no collation blurs it); nothing else of the row changes (tstamp is kept: a
// re-seal is not a change of the run).
func resealUpdate(c SealedColumn) string {
	return `UPDATE ` + c.Table + ` SET ` + c.Column + ` = ? WHERE uid = ? AND SHA2(` + c.Column + `, 256) = ?`
}

// resealReread reads column c of one row again.
func resealReread(c SealedColumn) string {
	return `SELECT ` + c.Column + ` FROM ` + c.Table + ` WHERE uid = ?`
}

// Reseal seals, with the Store's active key, the stored values of column (one of
// SealedColumns) in up to limit rows with uid > after: values sealed with an older key, and
// with sealClear cleartext too (otherwise counted as Clear and left). Each row is rewritten by
// a guarded UPDATE that matches only the value it read, so a decision or segment writing the
// row meanwhile wins and the row is read again. Without keys it is refused.
func (s *Store) Reseal(ctx context.Context, column SealedColumn, after int64, limit int, sealClear bool) (ResealBatch, error) {
	if s.keys == nil {
		return ResealBatch{}, errors.New("db: reseal: no keys are configured")
	}
	rows, err := queryAll(ctx, s.db, func(r *sql.Rows) (resealRow, error) {
		var x resealRow
		return x, r.Scan(&x.uid, &x.uuid, &x.person, &x.value)
	}, resealScan(column), after, clampPage(limit))
	if err != nil {
		return ResealBatch{}, fmt.Errorf("db: reseal %s: %w", column.Name(), err)
	}
	b := ResealBatch{Next: after, Done: len(rows) < clampPage(limit), Scanned: len(rows)}
	for _, x := range rows {
		b.Next = x.uid
		if err := s.resealOne(ctx, column, x, sealClear, &b); err != nil {
			return b, fmt.Errorf("db: reseal %s of %s: %w", column.Name(), x.owner(), err)
		}
	}
	return b, nil
}

// resealOne seals row x of column again with the active key and counts what it did in b.
func (s *Store) resealOne(ctx context.Context, column SealedColumn, x resealRow, sealClear bool, b *ResealBatch) error {
	place := column.place(x.uuid, x.person)
	for attempt := 1; ; attempt++ {
		plain, err := s.keys.Open(x.value, place)
		switch {
		case errors.Is(err, seal.ErrSealed):
			b.Unopenable = append(b.Unopenable, x.owner())
			return nil
		case err != nil:
			return err
		case seal.KeyID(x.value) == "" && !sealClear:
			b.Clear++
			return nil
		case s.keys.Current(x.value):
			b.Current++
			return nil
		}
		sealed, err := s.keys.Seal(plain, place)
		if err != nil {
			return err
		}
		res, err := s.db.ExecContext(ctx, resealUpdate(column), sealed, x.uid, sha256Hex(x.value))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			if err == nil {
				b.Resealed++
			}
			return err
		}
		if attempt == resealAttempts {
			return fmt.Errorf("changed by %d concurrent writes in a row", attempt)
		}
		if err := s.db.QueryRowContext(ctx, resealReread(column), x.uid).Scan(&x.value); err != nil {
			return err
		}
		if x.value == "" {
			return nil
		}
	}
}

// ResealAll calls Reseal on column batch rows at a time from the first row until it is done,
// calling progress (when set) with each batch and the totals so far, and returns the totals.
func (s *Store) ResealAll(ctx context.Context, column SealedColumn, batch int, sealClear bool,
	progress func(b, total ResealBatch)) (ResealBatch, error) {
	var total ResealBatch
	for after := int64(0); ; {
		b, err := s.Reseal(ctx, column, after, batch, sealClear)
		if err != nil {
			return total, err
		}
		total.Next, total.Done = b.Next, b.Done
		total.Scanned += b.Scanned
		total.Resealed += b.Resealed
		total.Current += b.Current
		total.Clear += b.Clear
		total.Unopenable = append(total.Unopenable, b.Unopenable...)
		if progress != nil {
			progress(b, total)
		}
		if b.Done {
			return total, nil
		}
		after = b.Next
	}
}
