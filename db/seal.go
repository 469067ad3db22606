package db

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"runsdesk/cache"
	"runsdesk/runtime"
	"runsdesk/seal"
)

// Columns a run's sealed payloads live in; each is bound into its envelope with the run's uuid.
const (
	runsTable         = "tx_nrllm_agentrun"
	colSuspendedState = "suspended_state"
	colQueuedRequest  = "queued_request"
)

// openedRemembered bounds how many opened envelopes the Store keeps, so list pages re-read
// every few seconds do not decrypt the same states again.
const openedRemembered = 1024

// Option configures a Store built by New.
type Option func(*Store)

// WithKeys seals suspended_state and queued_request with keys (AES-256-GCM, package seal);
// nil keeps them in clear. Either way every value is read through keys: legacy cleartext as
// is, envelopes only with their key.
func WithKeys(keys *seal.Keyring) Option {
	return func(s *Store) { s.keys = keys }
}

// sealing is the Store's view of the keyring: the uuid of each run it wrote or read (the
// envelopes' associated data; never changes) and the plaintext of envelopes it opened.
type sealing struct {
	keys   *seal.Keyring
	uuids  *cache.Cache[int64, string]
	opened *cache.Cache[string, string]
}

func newSealing() sealing {
	return sealing{
		uuids:  cache.New[int64, string](cache.Options{Max: maxSequenceHints}),
		opened: cache.New[string, string](cache.Options{Max: openedRemembered}),
	}
}

// sealFor seals plain for column of run uid (uuid when the caller knows it). With no keys
// it returns plain.
func (s *Store) sealFor(ctx context.Context, q execer, uid int64, uuid string, column SealedColumn, plain string) (string, error) {
	return s.sealAt(ctx, q, uid, column.place(uuid, 0), plain)
}

// sealAt seals plain for place, a place of run uid (its RunUUID read when empty). With no
// keys it returns plain.
func (s *Store) sealAt(ctx context.Context, q execer, uid int64, place seal.Place, plain string) (string, error) {
	if s.keys == nil || plain == "" {
		return plain, nil
	}
	if place.RunUUID == "" {
		var err error
		if place.RunUUID, err = s.runUUID(ctx, q, uid); err != nil {
			return "", err
		}
	}
	sealed, err := s.keys.Seal(plain, place)
	if err != nil {
		return "", fmt.Errorf("seal %s.%s: %w", place.Table, place.Column, err)
	}
	return sealed, nil
}

const sqlRunUUID = `SELECT uuid FROM tx_nrllm_agentrun WHERE uid = ?`

// runUUID is run uid's uuid, remembered once read.
func (s *Store) runUUID(ctx context.Context, q execer, uid int64) (string, error) {
	if u, ok := s.uuids.Get(uid); ok {
		return u, nil
	}
	var u string
	if err := q.QueryRowContext(ctx, sqlRunUUID, uid).Scan(&u); err != nil {
		return "", fmt.Errorf("uuid of run %d: %w", uid, notFound(err))
	}
	s.uuids.Put(uid, u)
	return u, nil
}

// openRun replaces r's stored payloads by their plaintext. A payload that does not open is
// left as stored: every decoder refuses an envelope as corrupt state (runtime.DecodeState),
// so it is never run. With stamp set, a sealed state's r.StateStamp records the envelope
// for the resume claim's guard (stampFor).
func (s *Store) openRun(r *runtime.Run, stamp bool) {
	if r.UID != 0 && r.UUID != "" {
		s.uuids.Put(r.UID, r.UUID)
	}
	stored := r.SuspendedState
	r.SuspendedState = s.open(stored, sealedSuspendedState, r.UUID)
	r.QueuedRequest = s.open(r.QueuedRequest, sealedQueuedRequest, r.UUID)
	if stamp && stored != r.SuspendedState {
		r.StateStamp = sha256Hex(stored) + "/" + sha256Hex(r.SuspendedState)
	}
}

// open returns stored's plaintext, or stored itself when it is cleartext or cannot be opened.
func (s *Store) open(stored string, column SealedColumn, uuid string) string {
	return s.openAt(stored, column.place(uuid, 0))
}

// openAt returns the plaintext of stored, sealed for place, or stored itself when it is
// cleartext or cannot be opened.
func (s *Store) openAt(stored string, place seal.Place) string {
	if len(stored) < len(seal.Prefix) || stored[:len(seal.Prefix)] != seal.Prefix {
		return stored
	}
	key := place.Table + "\x00" + place.Column + "\x00" + place.RunUUID + "\x00" + stored
	if plain, ok := s.opened.Get(key); ok {
		return plain
	}
	plain, err := s.keys.Open(stored, place)
	if err != nil {
		return stored
	}
	s.opened.Put(key, plain)
	return plain
}

// stateStamp is what the resume claim's guard compares with SHA2(suspended_state): for a
// state read sealed, the envelope's digest while r still holds the plaintext that opened from
// it; otherwise the digest of r's state as it is, which matches only cleartext stored so.
func stateStamp(r runtime.Run) string {
	plain := sha256Hex(r.SuspendedState)
	if envelope, opened, ok := strings.Cut(r.StateStamp, "/"); ok && opened == plain {
		return envelope
	}
	return plain
}

// sha256Hex is what MySQL's SHA2(s, 256) returns.
func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// sealDecision seals d's arguments and reason of run uuid for its row (as they are without
// keys).
func (s *Store) sealDecision(d runtime.Decision, uuid string) (arguments, reason string, err error) {
	if arguments, err = s.keys.Seal(d.Arguments, sealedDecisionArgs.place(uuid, 0)); err != nil {
		return "", "", err
	}
	if reason, err = s.keys.Seal(d.Reason, sealedDecisionReason.place(uuid, 0)); err != nil {
		return "", "", err
	}
	return arguments, reason, nil
}

// sealedReasonNote is what a decision's audit row says of its reason while states are sealed:
// the text is kept only in the decision row, sealed (sealDecision).
const sealedReasonNote = "a reason was given (sealed with the decision)"

// auditReason is what the audit row of a decision records of its reason: the text, or while
// states are sealed only that one was given, so the audit trail never holds it in clear.
func (s *Store) auditReason(reason string) string {
	if s.keys == nil || reason == "" {
		return reason
	}
	return sealedReasonNote
}

// errResealed marks a resume claim whose guard missed only because the state was re-sealed
// (keys rotate) since it was read: the claim is retried against the new envelope.
var errResealed = errors.New("suspended state re-sealed since it was read")

const sqlStoredPause = `SELECT status, suspended_at, suspended_state FROM tx_nrllm_agentrun WHERE uid = ?`

// resealedOnly reports whether read's pause is still stored as read but for its sealing (same
// status, suspended_at and plaintext under a new envelope), and the new envelope's stamp.
func (s *Store) resealedOnly(ctx context.Context, q execer, read runtime.Run, stamp string) (string, bool) {
	if s.keys == nil {
		return "", false
	}
	var status, stored string
	var at int64
	if err := q.QueryRowContext(ctx, sqlStoredPause, read.UID).Scan(&status, &at, &stored); err != nil {
		return "", false
	}
	now := runtime.Run{UID: read.UID, UUID: read.UUID, SuspendedState: stored}
	s.openRun(&now, true)
	fresh := stateStamp(now)
	if status != string(read.Status) || at != read.SuspendedAt || fresh == stamp ||
		now.SuspendedState != read.SuspendedState {
		return "", false
	}
	return fresh, true
}
