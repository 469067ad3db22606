package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"runsdesk/runtime/auditchain"
)

// chainBatch bounds the rows of each table one statement of a chain pass reads and appends.
const chainBatch = 500

// chainLeaseTTL is how long the chainer's lease lasts without renewal (renewed every quarter).
const chainLeaseTTL = time.Minute

// The source rows as the chain covers them: every column but the content, and content_digest
// (0045_audit_chain.sql); sqlChain*From reads a table's rows after a uid in uid order.
const (
	chainAuditColumns    = `uid, crdate, actor_uid, actor_name, ip, action, run_uuid, outcome, content_digest`
	chainDecisionColumns = `uid, crdate, run, idempotency_key, kind, approved, decided_by, decided_by_service, content_digest`
	sqlChainAuditFrom    = `SELECT ` + chainAuditColumns + ` FROM tx_runsdesk_audit WHERE uid > ? ORDER BY uid LIMIT ?`
	sqlChainDecisionFrom = `SELECT ` + chainDecisionColumns + ` FROM tx_runsdesk_decision WHERE uid > ? ORDER BY uid LIMIT ?`
)

const (
	sqlChainHead      = `SELECT seq, hash FROM tx_runsdesk_chain ORDER BY seq DESC LIMIT 1`
	sqlChainWatermark = `SELECT COALESCE(MAX(source_uid), 0) FROM tx_runsdesk_chain WHERE source = ?`
	sqlChainInsert    = `INSERT INTO tx_runsdesk_chain (seq, source, source_uid, hash, crdate) VALUES `
	sqlChainHash      = `SELECT hash FROM tx_runsdesk_chain WHERE seq = ?`
	// sqlChainEntries is a page of the chain joined to its rows as they are now (NULL when gone).
	sqlChainEntries = `SELECT c.seq, c.source, c.source_uid, c.hash,
		a.uid, a.crdate, a.actor_uid, a.actor_name, a.ip, a.action, a.run_uuid, a.outcome, a.content_digest,
		d.uid, d.crdate, d.run, d.idempotency_key, d.kind, d.approved, d.decided_by, d.decided_by_service, d.content_digest
		FROM tx_runsdesk_chain c
		LEFT JOIN tx_runsdesk_audit a ON c.source = 1 AND a.uid = c.source_uid
		LEFT JOIN tx_runsdesk_decision d ON c.source = 2 AND d.uid = c.source_uid
		WHERE c.seq > ? ORDER BY c.seq LIMIT ?`
	sqlCheckpointInsert = `INSERT INTO tx_runsdesk_chain_checkpoint (seq, hash, crdate, note) VALUES (?, ?, ?, ?)`
	sqlCheckpointLast   = `SELECT seq, hash, crdate, note FROM tx_runsdesk_chain_checkpoint ORDER BY seq DESC LIMIT 1`
	sqlCheckpointNotes  = `SELECT note FROM tx_runsdesk_chain_checkpoint ORDER BY seq`
)

// sqlChainInserted* find a table's first row below its watermark (its highest chained uid)
// that is not chained; sqlChainGap* its first row above it written at or before a cutoff.
const (
	sqlChainInsertedAudit = `SELECT a.uid, a.crdate FROM tx_runsdesk_audit a
		LEFT JOIN tx_runsdesk_chain c ON c.source = 1 AND c.source_uid = a.uid
		WHERE a.uid < ? AND c.seq IS NULL ORDER BY a.uid LIMIT 1`
	sqlChainGapAudit         = `SELECT uid, crdate FROM tx_runsdesk_audit WHERE uid > ? AND crdate <= ? ORDER BY uid LIMIT 1`
	sqlChainInsertedDecision = `SELECT d.uid, d.crdate FROM tx_runsdesk_decision d
		LEFT JOIN tx_runsdesk_chain c ON c.source = 2 AND c.source_uid = d.uid
		WHERE d.uid < ? AND c.seq IS NULL ORDER BY d.uid LIMIT 1`
	sqlChainGapDecision = `SELECT uid, crdate FROM tx_runsdesk_decision WHERE uid > ? AND crdate <= ? ORDER BY uid LIMIT 1`
)

// LockChain takes the desk-wide chain lease for the length of a chainer's pass; it answers
// auditchain.ErrBusy while another process holds it.
func (s *Store) LockChain(ctx context.Context) (func(), error) {
	owner := newLockOwner()
	holder, _, err := takeLease(ctx, s.db, chainLease, owner, chainLeaseTTL)
	if err != nil {
		return nil, fmt.Errorf("db: audit chain: %w", err)
	}
	if holder != owner {
		return nil, auditchain.ErrBusy
	}
	return renewLease(s.db, chainLease, owner, chainLeaseTTL), nil
}

// AppendChain appends every unchained audit and decision row written at or before cutoff to
// the chain, each table in uid order (the caller holds LockChain); it returns the head.
func (s *Store) AppendChain(ctx context.Context, cutoff, now int64) (auditchain.Head, int, error) {
	// Each table's rows after its highest chained uid, up to the first written after cutoff,
	// the two merged by time, chainBatch rows of each per INSERT. A row another process
	// chained meanwhile fails the INSERT on a unique key (seq or source row): the pass ends.
	head, err := s.chainHead(ctx)
	if err != nil {
		return head, 0, err
	}
	total := 0
	for {
		rows, full, err := s.unchained(ctx, cutoff)
		if err != nil {
			return head, total, err
		}
		if len(rows) == 0 {
			return head, total, nil
		}
		next, err := s.appendRows(ctx, head, rows, now)
		if err != nil {
			return head, total, err
		}
		head, total = next, total+len(rows)
		if !full {
			return head, total, nil
		}
	}
}

// chainHead reads the chain's last row.
func (s *Store) chainHead(ctx context.Context) (auditchain.Head, error) {
	var h auditchain.Head
	var hash []byte
	err := s.db.QueryRowContext(ctx, sqlChainHead).Scan(&h.Seq, &hash)
	if errors.Is(err, sql.ErrNoRows) {
		return h, nil
	}
	if err != nil {
		return h, fmt.Errorf("db: audit chain head: %w", err)
	}
	copy(h.Hash[:], hash)
	return h, nil
}

// unchained reads the next batch of each table to chain (rows after its watermark written at
// or before cutoff, in uid order) and merges them by time; full reports whether a table's
// batch was cut by chainBatch (more may follow).
func (s *Store) unchained(ctx context.Context, cutoff int64) ([]auditchain.Row, bool, error) {
	var batches [][]auditchain.Row
	full := false
	for _, src := range auditchain.Sources() {
		var mark int64
		if err := s.db.QueryRowContext(ctx, sqlChainWatermark, int(src)).Scan(&mark); err != nil {
			return nil, false, fmt.Errorf("db: audit chain watermark of %s: %w", src.Table(), err)
		}
		query, scan := sqlChainAuditFrom, scanChainAudit
		if src == auditchain.SourceDecision {
			query, scan = sqlChainDecisionFrom, scanChainDecision
		}
		rows, err := queryAll(ctx, s.db, scan, query, mark, chainBatch)
		if err != nil {
			return nil, false, fmt.Errorf("db: audit chain rows of %s: %w", src.Table(), err)
		}
		young := len(rows)
		for i, r := range rows {
			if r.Crdate > cutoff {
				young = i
				break
			}
		}
		full = full || (young == chainBatch)
		batches = append(batches, rows[:young])
	}
	return mergeByTime(batches[0], batches[1]), full, nil
}

// mergeByTime merges two uid-ordered batches by time, keeping each batch's order (a decision
// before an audit row of the same second).
func mergeByTime(audit, decision []auditchain.Row) []auditchain.Row {
	out := make([]auditchain.Row, 0, len(audit)+len(decision))
	for len(audit) > 0 && len(decision) > 0 {
		if decision[0].Crdate <= audit[0].Crdate {
			out, decision = append(out, decision[0]), decision[1:]
		} else {
			out, audit = append(out, audit[0]), audit[1:]
		}
	}
	return append(append(out, audit...), decision...)
}

// appendRows links rows after head and inserts them in one statement; it returns the new head.
func (s *Store) appendRows(ctx context.Context, head auditchain.Head, rows []auditchain.Row, now int64) (auditchain.Head, error) {
	values := make([]string, len(rows))
	args := make([]any, 0, 5*len(rows))
	for i, r := range rows {
		head.Seq++
		head.Hash = auditchain.Link(head.Hash, head.Seq, r)
		values[i] = "(?, ?, ?, ?, ?)"
		hash := head.Hash // a copy: head.Hash changes with the next row
		args = append(args, head.Seq, int(r.Source), r.UID, hash[:], now)
	}
	if _, err := execRetrying(ctx, s.db, sqlChainInsert+strings.Join(values, ", "), args...); err != nil {
		return head, fmt.Errorf("db: audit chain append through seq %d: %w", head.Seq, err)
	}
	return head, nil
}

// scanChainAudit scans chainAuditColumns.
func scanChainAudit(rows *sql.Rows) (auditchain.Row, error) {
	var uid, crdate, actor int64
	var name, ip, action, run, outcome string
	var digest []byte
	if err := rows.Scan(&uid, &crdate, &actor, &name, &ip, &action, &run, &outcome, &digest); err != nil {
		return auditchain.Row{}, err
	}
	return auditchain.AuditRow(uid, crdate, actor, name, ip, action, run, outcome, toHash(digest)), nil
}

// scanChainDecision scans chainDecisionColumns.
func scanChainDecision(rows *sql.Rows) (auditchain.Row, error) {
	var uid, crdate, run, by int64
	var key, kind, service string
	var approved bool
	var digest []byte
	if err := rows.Scan(&uid, &crdate, &run, &key, &kind, &approved, &by, &service, &digest); err != nil {
		return auditchain.Row{}, err
	}
	return auditchain.DecisionRow(uid, crdate, run, key, kind, approved, by, service, toHash(digest)), nil
}

func toHash(b []byte) auditchain.Hash {
	var h auditchain.Hash
	copy(h[:], b)
	return h
}

// LastCheckpoint reads the checkpoint of the highest sequence.
func (s *Store) LastCheckpoint(ctx context.Context) (auditchain.Checkpoint, bool, error) {
	var c auditchain.Checkpoint
	var hash []byte
	err := s.db.QueryRowContext(ctx, sqlCheckpointLast).Scan(&c.Seq, &hash, &c.Time, &c.Note)
	if errors.Is(err, sql.ErrNoRows) {
		return c, false, nil
	}
	if err != nil {
		return c, false, fmt.Errorf("db: last audit checkpoint: %w", err)
	}
	c.Hash = toHash(hash)
	return c, true, nil
}

// AddCheckpoint stores a signed checkpoint.
func (s *Store) AddCheckpoint(ctx context.Context, c auditchain.Checkpoint) error {
	if _, err := execRetrying(ctx, s.db, sqlCheckpointInsert, c.Seq, c.Hash[:], c.Time, c.Note); err != nil {
		return fmt.Errorf("db: audit checkpoint %d: %w", c.Seq, err)
	}
	return nil
}

// CheckpointNotes reads the signed notes of every stored checkpoint, by sequence.
func (s *Store) CheckpointNotes(ctx context.Context) ([]string, error) {
	notes, err := queryAll(ctx, s.db, scanString, sqlCheckpointNotes)
	if err != nil {
		return nil, fmt.Errorf("db: audit checkpoints: %w", err)
	}
	return notes, nil
}

func scanString(rows *sql.Rows) (string, error) {
	var v string
	err := rows.Scan(&v)
	return v, err
}

// ChainHash reads the stored hash at seq.
func (s *Store) ChainHash(ctx context.Context, seq int64) (auditchain.Hash, bool, error) {
	var hash []byte
	err := s.db.QueryRowContext(ctx, sqlChainHash, seq).Scan(&hash)
	if errors.Is(err, sql.ErrNoRows) {
		return auditchain.Hash{}, false, nil
	}
	if err != nil {
		return auditchain.Hash{}, false, fmt.Errorf("db: audit chain hash %d: %w", seq, err)
	}
	return toHash(hash), true, nil
}

// ChainEntries reads up to limit chain rows after seq after, each with its source row as it
// is now (nil when the row is gone).
func (s *Store) ChainEntries(ctx context.Context, after int64, limit int) ([]auditchain.Entry, error) {
	entries, err := queryAll(ctx, s.db, scanChainEntry, sqlChainEntries, after, limit)
	if err != nil {
		return nil, fmt.Errorf("db: audit chain after seq %d: %w", after, err)
	}
	return entries, nil
}

// scanChainEntry scans a row of sqlChainEntries.
func scanChainEntry(rows *sql.Rows) (auditchain.Entry, error) {
	var e auditchain.Entry
	var src int
	var hash []byte
	var aUID, aCrdate, aActor sql.NullInt64
	var aName, aIP, aAction, aRun, aOutcome sql.NullString
	var aDigest, dDigest []byte
	var dUID, dCrdate, dRun, dBy sql.NullInt64
	var dKey, dKind, dService sql.NullString
	var dApproved sql.NullBool
	if err := rows.Scan(&e.Seq, &src, &e.SourceUID, &hash,
		&aUID, &aCrdate, &aActor, &aName, &aIP, &aAction, &aRun, &aOutcome, &aDigest,
		&dUID, &dCrdate, &dRun, &dKey, &dKind, &dApproved, &dBy, &dService, &dDigest); err != nil {
		return e, err
	}
	e.Source, e.Hash = auditchain.Source(src), toHash(hash)
	switch {
	case aUID.Valid:
		r := auditchain.AuditRow(aUID.Int64, aCrdate.Int64, aActor.Int64, aName.String, aIP.String, aAction.String, aRun.String, aOutcome.String, toHash(aDigest))
		e.Row = &r
	case dUID.Valid:
		r := auditchain.DecisionRow(dUID.Int64, dCrdate.Int64, dRun.Int64, dKey.String, dKind.String, dApproved.Bool, dBy.Int64, dService.String, toHash(dDigest))
		e.Row = &r
	}
	return e, nil
}

// Strays finds, per chained table, the first unchained row below its highest chained uid
// (inserted) and the first above it written at or before gapCutoff (a gap).
func (s *Store) Strays(ctx context.Context, gapCutoff int64) ([]auditchain.Stray, error) {
	var out []auditchain.Stray
	for _, src := range auditchain.Sources() {
		var mark int64
		if err := s.db.QueryRowContext(ctx, sqlChainWatermark, int(src)).Scan(&mark); err != nil {
			return nil, fmt.Errorf("db: audit chain watermark of %s: %w", src.Table(), err)
		}
		queries := [2]string{sqlChainInsertedAudit, sqlChainGapAudit}
		if src == auditchain.SourceDecision {
			queries = [2]string{sqlChainInsertedDecision, sqlChainGapDecision}
		}
		for i, args := range [][]any{{mark}, {mark, gapCutoff}} {
			st := auditchain.Stray{Source: src, Inserted: i == 0}
			err := s.db.QueryRowContext(ctx, queries[i], args...).Scan(&st.UID, &st.Crdate)
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("db: audit chain strays of %s: %w", src.Table(), err)
			}
			out = append(out, st)
		}
	}
	return out, nil
}
