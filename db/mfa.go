package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"runsdesk/mfa"
	"runsdesk/runtime"
	"runsdesk/seal"
)

// ErrNoKeys is returned by Factors.Begin when no sealing keys are set: a TOTP secret is never
// stored in clear.
var ErrNoKeys = errors.New("no sealing keys are set (RUNSDESK_KEYS or RUNSDESK_KEYS_FILE)")

// ErrEnrolled is returned by Factors.Begin for a person whose factor is already confirmed.
var ErrEnrolled = errors.New("a confirmed second factor exists")

// ErrStepUsed is returned by Factors.UseStep for a time step at or before the last one
// accepted (a replayed code, or the loser of two uses at once). It wraps runtime.ErrNotFound.
var ErrStepUsed = fmt.Errorf("the code's time step was already used: %w", runtime.ErrNotFound)

// Factors keeps people's second factors (tx_runsdesk_totp, tx_runsdesk_recovery_code): TOTP
// secrets sealed with the keys, the last step used, and recovery codes by hash. Every use is
// a guarded UPDATE, so a code or step used twice at once is accepted once. It is safe for
// concurrent use.
type Factors struct {
	db   *sql.DB
	keys *seal.Keyring
	now  func() time.Time
}

// NewFactors returns Factors on pool sealing secrets with keys (nil: enrolment is refused);
// now defaults to time.Now.
func NewFactors(pool *sql.DB, keys *seal.Keyring, now func() time.Time) *Factors {
	if now == nil {
		now = time.Now
	}
	return &Factors{db: pool, keys: keys, now: now}
}

// Sealing reports whether keys are set, without which Begin refuses.
func (f *Factors) Sealing() bool { return f.keys != nil }

var sealedTOTPSecret = sealedColumn(totpTable, "secret", "", "be_user")

const (
	totpTable     = "tx_runsdesk_totp"
	recoveryTable = "tx_runsdesk_recovery_code"
)

// Factor returns person uid's factor, or an error wrapping runtime.ErrNotFound when they have
// none. A secret that does not open (its key is gone) is an error.
func (f *Factors) Factor(ctx context.Context, uid int64) (mfa.Factor, error) {
	var x mfa.Factor
	var stored string
	err := f.db.QueryRowContext(ctx, `SELECT t.secret, t.confirmed, t.last_step,
		(SELECT COUNT(*) FROM tx_runsdesk_recovery_code r WHERE r.be_user = t.be_user AND r.used_at = 0)
		FROM tx_runsdesk_totp t WHERE t.be_user = ?`, uid).Scan(&stored, &x.Confirmed, &x.LastStep, &x.RecoveryLeft)
	if err != nil {
		return mfa.Factor{}, fmt.Errorf("db: factor of user %d: %w", uid, notFound(err))
	}
	if x.Secret, err = f.keys.Open(stored, sealedTOTPSecret.place("", uid)); err != nil {
		return mfa.Factor{}, fmt.Errorf("db: factor of user %d: %w", uid, err)
	}
	return x, nil
}

// Enrolled reports whether person uid has a confirmed factor.
func (f *Factors) Enrolled(ctx context.Context, uid int64) (bool, error) {
	var n int
	if err := f.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM tx_runsdesk_totp WHERE be_user = ? AND confirmed = 1`, uid).Scan(&n); err != nil {
		return false, fmt.Errorf("db: factor of user %d: %w", uid, err)
	}
	return n == 1, nil
}

// Begin stores secret (base32), sealed, as person uid's factor awaiting its first code,
// replacing one that waits; ErrEnrolled when their factor is confirmed, ErrNoKeys without keys.
func (f *Factors) Begin(ctx context.Context, uid int64, secret string) error {
	if f.keys == nil {
		return fmt.Errorf("db: begin enrolment of user %d: %w", uid, ErrNoKeys)
	}
	sealed, err := f.keys.Seal(secret, sealedTOTPSecret.place("", uid))
	if err != nil {
		return fmt.Errorf("db: begin enrolment of user %d: %w", uid, err)
	}
	err = inTx(ctx, f.db, func(tx *sql.Tx) error {
		now := f.now().Unix()
		var confirmed bool
		err := tx.QueryRowContext(ctx, `SELECT confirmed FROM tx_runsdesk_totp WHERE be_user = ? FOR UPDATE`, uid).Scan(&confirmed)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			_, err = tx.ExecContext(ctx, `INSERT INTO tx_runsdesk_totp (be_user, secret, confirmed, last_step, crdate, tstamp)
				VALUES (?, ?, 0, 0, ?, ?)`, uid, sealed, now, now)
			return err
		case err != nil:
			return err
		case confirmed:
			return ErrEnrolled
		}
		_, err = tx.ExecContext(ctx, `UPDATE tx_runsdesk_totp SET secret = ?, last_step = 0, tstamp = ? WHERE be_user = ? AND confirmed = 0`,
			sealed, now, uid)
		return err
	})
	if err != nil {
		return fmt.Errorf("db: begin enrolment of user %d: %w", uid, err)
	}
	return nil
}

// Confirm makes person uid's waiting factor their factor, step the last step used, and
// hashes their recovery codes (replacing any), with audit's row, in one transaction. No
// waiting factor (none, or confirmed meanwhile) is an error wrapping runtime.ErrNotFound.
func (f *Factors) Confirm(ctx context.Context, uid, step int64, hashes []string, audit *runtime.AuditRecord) error {
	err := inTx(ctx, f.db, func(tx *sql.Tx) error {
		now := f.now().Unix()
		if err := updateOne(ctx, tx, `UPDATE tx_runsdesk_totp SET confirmed = 1, last_step = ?, tstamp = ?
			WHERE be_user = ? AND confirmed = 0`, []any{step, now, uid}, audit, now); err != nil {
			return err
		}
		return replaceCodes(ctx, tx, uid, hashes, now)
	})
	if err != nil {
		return fmt.Errorf("db: confirm the factor of user %d: %w", uid, err)
	}
	return nil
}

// UseStep records that a code of step was accepted for person uid's confirmed factor. A step
// at or before the last one accepted is ErrStepUsed: of two uses of one step at once,
// exactly one succeeds.
func (f *Factors) UseStep(ctx context.Context, uid, step int64) error {
	res, err := execRetrying(ctx, f.db, `UPDATE tx_runsdesk_totp SET last_step = ?, tstamp = ?
		WHERE be_user = ? AND confirmed = 1 AND last_step < ?`, step, f.now().Unix(), uid, step)
	if err != nil {
		return fmt.Errorf("db: use a code of user %d: %w", uid, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("db: use a code of user %d: %w", uid, errors.Join(err, ErrStepUsed))
	}
	return nil
}

// UseRecoveryCode marks person uid's unused recovery code of hash used, with audit's row, and
// returns how many unused ones remain. No such unused code (wrong, or used already, or used
// at the same moment by another request) is an error wrapping runtime.ErrNotFound.
func (f *Factors) UseRecoveryCode(ctx context.Context, uid int64, hash string, audit *runtime.AuditRecord) (int, error) {
	left := 0
	err := inTx(ctx, f.db, func(tx *sql.Tx) error {
		now := f.now().Unix()
		if err := updateOne(ctx, tx, `UPDATE tx_runsdesk_recovery_code SET used_at = ?
			WHERE be_user = ? AND code_hash = ? AND used_at = 0`, []any{now, uid, hash}, audit, now); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM tx_runsdesk_recovery_code WHERE be_user = ? AND used_at = 0`, uid).Scan(&left)
	})
	if err != nil {
		return 0, fmt.Errorf("db: use a recovery code of user %d: %w", uid, err)
	}
	return left, nil
}

// ReplaceRecoveryCodes voids every recovery code of person uid and stores hashes instead, with
// audit's row; a person without a confirmed factor is an error wrapping runtime.ErrNotFound.
func (f *Factors) ReplaceRecoveryCodes(ctx context.Context, uid int64, hashes []string, audit *runtime.AuditRecord) error {
	err := inTx(ctx, f.db, func(tx *sql.Tx) error {
		now := f.now().Unix()
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM tx_runsdesk_totp WHERE be_user = ? AND confirmed = 1 FOR UPDATE`, uid).Scan(&n); err != nil {
			return err
		}
		if n != 1 {
			return runtime.ErrNotFound
		}
		if audit != nil {
			if err := insertAudit(ctx, tx, now, audit.Actor, audit.IP, audit.Action, "", audit.Outcome, audit.Reason); err != nil {
				return err
			}
		}
		return replaceCodes(ctx, tx, uid, hashes, now)
	})
	if err != nil {
		return fmt.Errorf("db: replace the recovery codes of user %d: %w", uid, err)
	}
	return nil
}

// Reset removes person uid's factor and recovery codes and ends their sessions, with audit's
// row; a person without a factor is an error wrapping runtime.ErrNotFound.
func (f *Factors) Reset(ctx context.Context, uid int64, audit *runtime.AuditRecord) error {
	err := inTx(ctx, f.db, func(tx *sql.Tx) error {
		now := f.now().Unix()
		if err := updateOne(ctx, tx, `DELETE FROM tx_runsdesk_totp WHERE be_user = ?`, []any{uid}, audit, now); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM tx_runsdesk_recovery_code WHERE be_user = ?`, uid); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE be_users SET session_epoch = session_epoch + 1, tstamp = ? WHERE uid = ?`, now, uid)
		return err
	})
	if err != nil {
		return fmt.Errorf("db: reset the factor of user %d: %w", uid, err)
	}
	return nil
}

// replaceCodes deletes uid's recovery codes and inserts hashes.
func replaceCodes(ctx context.Context, tx *sql.Tx, uid int64, hashes []string, now int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM tx_runsdesk_recovery_code WHERE be_user = ?`, uid); err != nil {
		return err
	}
	for _, h := range hashes {
		if _, err := tx.ExecContext(ctx, `INSERT INTO tx_runsdesk_recovery_code (be_user, code_hash, used_at, crdate)
			VALUES (?, ?, 0, ?)`, uid, h, now); err != nil {
			return err
		}
	}
	return nil
}
