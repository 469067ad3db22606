package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"runsdesk/runtime"
	"runsdesk/seal"
)

const sqlDraftPauseHeld = `SELECT has_drafts FROM tx_nrllm_agentrun
	WHERE uid = ? AND status = 'waiting_for_input' AND suspended_at = ? FOR UPDATE`

const sqlPauseHasDrafts = updateRunByUID + ` SET has_drafts = 1 WHERE uid = ?`

const sqlSaveDraft = `INSERT INTO tx_runsdesk_draft (run, be_user, pause_digest, form_values, updated_at)
	VALUES (?, ?, ?, ?, ?)
	ON DUPLICATE KEY UPDATE pause_digest = VALUES(pause_digest), form_values = VALUES(form_values), updated_at = VALUES(updated_at)`

const sqlLoadDraft = `SELECT form_values, updated_at FROM tx_runsdesk_draft
	WHERE run = ? AND be_user = ? AND pause_digest = ?`

// errDraftUndecodable is a stored draft whose values do not decode; the parser's error is
// dropped, as it quotes the values.
var errDraftUndecodable = errors.New("stored draft values do not decode")

const sqlDeleteRunDrafts = `DELETE FROM tx_runsdesk_draft WHERE run = ?`

// SaveDraft stores d as the one draft of d.User for run d.Run, replacing an earlier one, while
// that run still waits for input in the pause d.SuspendedAt names; otherwise it writes nothing
// and returns runtime.ErrGuard. The pause row is read under its lock, so a draft saved as the
// pause ends is either refused or removed with the pause's drafts (deleteRunDrafts); the first
// draft of a pause marks its row (has_drafts), so its claim knows to remove them. With
// LoadDraft it is the only code that writes or reads a draft's values: protecting them at rest
// belongs here.
func (s *Store) SaveDraft(ctx context.Context, d runtime.Draft) error {
	return s.inTx(ctx, nil, func(tx *sql.Tx) error {
		var marked bool
		err := tx.QueryRowContext(ctx, sqlDraftPauseHeld, d.Run, d.SuspendedAt).Scan(&marked)
		if errors.Is(err, sql.ErrNoRows) {
			return guardErr("save draft", d.Run)
		}
		if err != nil {
			return fmt.Errorf("db: save draft run %d: %w", d.Run, err)
		}
		if !marked {
			if _, err := tx.ExecContext(ctx, sqlPauseHasDrafts, d.Run); err != nil {
				return fmt.Errorf("db: save draft run %d: %w", d.Run, err)
			}
		}
		values := d.Values.Encode()
		if s.keys != nil {
			uuid, err := s.runUUID(ctx, tx, d.Run)
			if err != nil {
				return fmt.Errorf("db: save draft run %d: %w", d.Run, err)
			}
			if values, err = s.keys.Seal(values, sealedDraftValues.place(uuid, d.User)); err != nil {
				return fmt.Errorf("db: save draft run %d: %w", d.Run, err)
			}
		}
		if _, err := tx.ExecContext(ctx, sqlSaveDraft, d.Run, d.User, d.Digest, []byte(values), d.UpdatedAt); err != nil {
			return fmt.Errorf("db: save draft run %d: %w", d.Run, err)
		}
		return nil
	})
}

// LoadDraft returns the draft user saved for run's pause digest; runtime.ErrNotFound when
// there is none (or only one of another pause). Values that do not decode are an error, never
// guessed.
func (s *Store) LoadDraft(ctx context.Context, run, user int64, digest string) (runtime.Draft, error) {
	var raw []byte
	d := runtime.Draft{Run: run, User: user, Digest: digest}
	err := s.db.QueryRowContext(ctx, sqlLoadDraft, run, user, digest).Scan(&raw, &d.UpdatedAt)
	if err != nil {
		return d, fmt.Errorf("db: load draft run %d: %w", run, notFound(err))
	}
	stored := string(raw)
	if strings.HasPrefix(stored, seal.Prefix) {
		uuid, err := s.runUUID(ctx, s.db, run)
		if err != nil {
			return runtime.Draft{}, fmt.Errorf("db: load draft run %d: %w", run, err)
		}
		opened, err := s.keys.Open(stored, sealedDraftValues.place(uuid, user))
		if id := seal.KeyID(stored); err != nil && id != "" {
			return runtime.Draft{}, fmt.Errorf("db: load draft run %d: %w: %w", run, runtime.SealingKeyMissing(uuid, id), err)
		}
		if err != nil {
			return runtime.Draft{}, fmt.Errorf("db: load draft run %d: %w: %w", run, errDraftUndecodable, err)
		}
		stored = opened
	}
	if d.Values, err = url.ParseQuery(stored); err != nil {
		return runtime.Draft{}, fmt.Errorf("db: load draft run %d: %w", run, errDraftUndecodable)
	}
	return d, nil
}

// deleteRunDrafts removes every draft of run uid, on q (a transaction that ends the pause:
// an input claim, Cancel; expiry calls it the same way).
func deleteRunDrafts(ctx context.Context, q execer, uid int64) error {
	if _, err := q.ExecContext(ctx, sqlDeleteRunDrafts, uid); err != nil {
		return fmt.Errorf("db: delete drafts of run %d: %w", uid, err)
	}
	return nil
}
