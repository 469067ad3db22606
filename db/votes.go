package db

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-sql-driver/mysql"

	"runsdesk/runtime"
)

const voteColumns = `uid, run, pause, voter, voter_name, decided_by, decided_by_service, idempotency_key,
	turn_digest, pin_digest, required, crdate`

const (
	sqlInsertVotes = `INSERT INTO tx_runsdesk_vote
	(run, pause, voter, voter_name, decided_by, decided_by_service, idempotency_key, turn_digest, pin_digest, required, crdate) VALUES `
	sqlVoteRow    = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	sqlPauseVotes = `SELECT ` + voteColumns + ` FROM tx_runsdesk_vote WHERE run = ? AND pause = ? ORDER BY uid`
	sqlFindVote   = `SELECT ` + voteColumns + ` FROM tx_runsdesk_vote WHERE run = ? AND idempotency_key = ?`
	// sqlDropPauseVotes removes the votes of one pause (an expiry or a cancel ends it).
	sqlDropPauseVotes = `DELETE FROM tx_runsdesk_vote WHERE run = ? AND pause = ?`
	// sqlDropWaitingVotes removes the votes of the pause run uid waits in, before a cancel
	// ends it (none when it does not wait: the votes of a pause that resumed stay).
	sqlDropWaitingVotes = `DELETE FROM tx_runsdesk_vote WHERE run = ? AND pause = (SELECT pause_number
	FROM tx_nrllm_agentrun WHERE uid = ? AND status IN ('waiting_for_approval', 'waiting_for_input'))`
)

// voterKey is the unique key a second vote of one voter on a pause hits.
const voterKey = "run_pause_voter"

// Votes returns the votes recorded on run's pause number pause, oldest first.
func (s *Store) Votes(ctx context.Context, runUID, pause int64) ([]runtime.Vote, error) {
	rows, err := s.db.QueryContext(ctx, sqlPauseVotes, runUID, pause)
	if err != nil {
		return nil, fmt.Errorf("db: votes of run %d: %w", runUID, err)
	}
	defer rows.Close()
	var out []runtime.Vote
	for rows.Next() {
		v, err := scanVote(rows)
		if err != nil {
			return nil, fmt.Errorf("db: votes of run %d: %w", runUID, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: votes of run %d: %w", runUID, err)
	}
	return out, nil
}

// FindVote returns the vote stored for (run, idempotency key), or runtime.ErrNotFound.
func (s *Store) FindVote(ctx context.Context, runUID int64, key string) (runtime.Vote, error) {
	v, err := scanVote(s.db.QueryRowContext(ctx, sqlFindVote, runUID, key))
	if err != nil {
		return runtime.Vote{}, fmt.Errorf("db: find vote of run %d: %w", runUID, notFound(err))
	}
	return v, nil
}

func scanVote(sc scanner) (runtime.Vote, error) {
	var v runtime.Vote
	err := sc.Scan(&v.UID, &v.Run, &v.Pause, &v.Voter, &v.VoterName, &v.DecidedBy, &v.DecidedByService,
		&v.IdempotencyKey, &v.TurnDigest, &v.PinDigest, &v.Required, &v.Crdate)
	return v, err
}

// voteWrite is the plan write of v on the pause read: refused ErrAlreadyVoted when its voter
// voted on the pause, ErrDuplicateDecision (a replay) when its key was used on the run.
func voteWrite(read runtime.Run, v runtime.Vote, now int64) planWrite {
	return planWrite{what: "vote", head: sqlInsertVotes, rows: []string{sqlVoteRow},
		args: []any{read.UID, read.PauseNumber, auditField(v.Voter, 128), auditField(v.VoterName, 255), v.DecidedBy,
			auditField(v.DecidedByService, decidedByServiceLen), v.IdempotencyKey, v.TurnDigest, v.PinDigest, v.Required, now},
		refused: func(err error) error {
			var me *mysql.MySQLError
			switch {
			case isDuplicateKey(err) && errors.As(err, &me) && strings.Contains(me.Message, voterKey):
				return fmt.Errorf("vote of %s: %w", v.Voter, runtime.ErrAlreadyVoted)
			case isDuplicateKey(err):
				return fmt.Errorf("vote %q: %w: %w", v.IdempotencyKey, ErrDuplicateDecision, runtime.ErrGuard)
			}
			return fmt.Errorf("vote: %w", err)
		}}
}
