package db

import (
	"context"
	"database/sql"
	"fmt"

	"runsdesk/runtime"
)

// commentsTable keeps the comments people wrote on waiting runs (migration 0044).
const commentsTable = "tx_runsdesk_comment"

const (
	commentColumns    = `uid, run, sequence, author, idempotency_key, body, crdate`
	sqlInsertComments = `INSERT INTO ` + commentsTable + ` (run, sequence, author, idempotency_key, body, crdate) VALUES `
	sqlCommentRow     = `(?, ?, ?, ?, ?, ?)`
	sqlRunComments    = `SELECT ` + commentColumns + ` FROM ` + commentsTable + ` WHERE run = ? ORDER BY sequence, uid`
	sqlFindComment    = `SELECT ` + commentColumns + ` FROM ` + commentsTable + ` WHERE run = ? AND idempotency_key = ?`
)

// commentWrite is the plan write of c on run read at event sequence seq, its body sealed as
// body, which sets c.UID: refused runtime.ErrDuplicateComment when its idempotency key was used
// on the run.
func commentWrite(read runtime.Run, c *runtime.Comment, seq int, body string, now int64) planWrite {
	return planWrite{what: "comment", head: sqlInsertComments, rows: []string{sqlCommentRow}, id: &c.UID,
		args: []any{read.UID, seq, c.Author, c.IdempotencyKey, body, now},
		refused: func(err error) error {
			if isDuplicateKey(err) {
				return fmt.Errorf("comment %q: %w", c.IdempotencyKey, runtime.ErrDuplicateComment)
			}
			return fmt.Errorf("comment: %w", err)
		}}
}

// Comments returns the comments of run runUID (uuid its uuid) in timeline order, each body
// opened; one sealed with a key the store lacks has SealedWith set and no Body.
func (s *Store) Comments(ctx context.Context, runUID int64, uuid string) ([]runtime.Comment, error) {
	out, err := queryAll(ctx, s.db, func(r *sql.Rows) (runtime.Comment, error) { return scanComment(r) }, sqlRunComments, runUID)
	if err != nil {
		return nil, fmt.Errorf("db: comments of run %d: %w", runUID, err)
	}
	for i := range out {
		s.openComment(&out[i], uuid)
	}
	return out, nil
}

// FindComment returns the comment stored on run runUID (uuid) under key, body opened, or an
// error wrapping runtime.ErrNotFound.
func (s *Store) FindComment(ctx context.Context, runUID int64, uuid, key string) (runtime.Comment, error) {
	c, err := scanComment(s.db.QueryRowContext(ctx, sqlFindComment, runUID, key))
	if err != nil {
		return runtime.Comment{}, fmt.Errorf("db: find comment of run %d: %w", runUID, notFound(err))
	}
	s.openComment(&c, uuid)
	return c, nil
}

// openComment opens c's body in place, or names the missing key it is sealed with.
func (s *Store) openComment(c *runtime.Comment, uuid string) {
	c.Body = s.openAt(c.Body, sealedCommentBody.place(uuid, 0))
	if id := runtime.UnopenedKey(c.Body); id != "" {
		c.SealedWith, c.Body = id, ""
	}
}

func scanComment(sc scanner) (runtime.Comment, error) {
	var c runtime.Comment
	err := sc.Scan(&c.UID, &c.Run, &c.Sequence, &c.Author, &c.IdempotencyKey, &c.Body, &c.Crdate)
	return c, err
}
