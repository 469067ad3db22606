package db

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/retention"
)

// RetentionBatch bounds the rows one statement of a retention pass reads or removes.
const RetentionBatch = 1000

// retentionRuns is how many runs one batch of a pass handles: below MariaDB's
// in_predicate_conversion_threshold (1000), so the IN list of a batch's statements stays a
// range on their index instead of becoming a joined table.
const retentionRuns = RetentionBatch - 1

// retentionLeaseTTL is how long the pass's lease lasts without renewal (renewed every quarter).
const retentionLeaseTTL = time.Minute

// sqlRetentionGroups is every configuration uid runs carry, read by a loose scan of KEY
// retention (one row per configuration, whatever the table size).
const sqlRetentionGroups = `SELECT configuration_uid FROM tx_nrllm_agentrun GROUP BY configuration_uid`

// sqlRetentionPolicies are the live configurations' policies (as ConfigurationByUID reads
// them); the runs of a deleted or hidden one take the default.
const sqlRetentionPolicies = `SELECT uid, ` + retentionColumns + ` FROM tx_nrllm_configuration WHERE deleted = 0 AND hidden = 0`

const sqlRetentionMarks = `SELECT configuration_uid, class, swept_to FROM tx_runsdesk_retention_mark`

const sqlRetentionMark = `INSERT INTO tx_runsdesk_retention_mark (configuration_uid, class, swept_to) VALUES (?, ?, ?)
	ON DUPLICATE KEY UPDATE swept_to = GREATEST(swept_to, VALUES(swept_to))`

// sqlExpiredRuns is one batch of a configuration's terminal runs that finished in the window
// (after the mark, at or before the cutoff), after the last (finished_at, uid) of the batch
// before, on KEY retention (configuration_uid, finished_at): the range holds only the runs the
// pass handles.
const sqlExpiredRuns = `SELECT uid, uuid, finished_at FROM tx_nrllm_agentrun
	WHERE configuration_uid = ? AND finished_at <= ?
	  AND (finished_at > ? OR (finished_at = ? AND uid > ?))
	  AND status NOT IN ` + nonTerminal + `
	ORDER BY finished_at, uid LIMIT ?`

// retentionStep is one removing statement of a pass over a batch of runs, counted in count
// (nil: not reported); dry is its count in a dry run. It is sent again while it removed a full
// batch (a run has many events), unless it removes at most one row per run (onePerRun).
// byUUID steps take the runs' uuids, the others their uids.
type retentionStep struct {
	query, dry string
	byUUID     bool
	onePerRun  bool
	count      func(*retention.Report) *int64
}

// retentionSteps are each class's statements over one batch (the IN list is appended at %s),
// in order: a run's row goes last, so a pass cut short finds it again.
var retentionSteps = map[retention.Class][]retentionStep{
	retention.Outputs: {{
		query:     `UPDATE tx_runsdesk_run_output SET output_text = '' WHERE output_text <> '' AND run IN (%s) LIMIT ?`,
		onePerRun: true,
		dry:       `SELECT COUNT(*) FROM tx_runsdesk_run_output WHERE output_text <> '' AND run IN (%s)`,
		count:     func(r *retention.Report) *int64 { return &r.Outputs },
	}},
	retention.Transcripts: {{
		query: `DELETE FROM tx_runsdesk_event_content WHERE run IN (%s) LIMIT ?`,
		dry:   `SELECT COUNT(*) FROM tx_runsdesk_event_content WHERE run IN (%s)`,
		count: func(r *retention.Report) *int64 { return &r.Transcripts },
	}},
	retention.Runs: {
		{query: `DELETE FROM tx_nrllm_agentrun_event WHERE run IN (%s) LIMIT ?`,
			dry: `SELECT COUNT(*) FROM tx_nrllm_agentrun_event WHERE run IN (%s)`, count: func(r *retention.Report) *int64 { return &r.Events }},
		{query: `DELETE FROM tx_runsdesk_event_content WHERE run IN (%s) LIMIT ?`},
		{query: `DELETE FROM tx_runsdesk_run_output WHERE run IN (%s) LIMIT ?`, onePerRun: true},
		{query: `DELETE FROM tx_runsdesk_call WHERE run IN (%s) LIMIT ?`},
		{query: `DELETE FROM tx_runsdesk_draft WHERE run IN (%s) LIMIT ?`},
		{query: `DELETE FROM tx_runsdesk_outbox WHERE run IN (%s) LIMIT ?`},
		{query: `DELETE FROM tx_runsdesk_comment WHERE run IN (%s) LIMIT ?`},
		{query: `UPDATE tx_runsdesk_decision SET arguments = '', reason = '' WHERE (arguments <> '' OR reason <> '') AND run IN (%s) LIMIT ?`,
			dry:   `SELECT COUNT(*) FROM tx_runsdesk_decision WHERE (arguments <> '' OR reason <> '') AND run IN (%s)`,
			count: func(r *retention.Report) *int64 { return &r.Decisions }},
		{query: `UPDATE tx_runsdesk_audit SET reason = '' WHERE reason <> '' AND run_uuid IN (%s) LIMIT ?`, byUUID: true,
			dry:   `SELECT COUNT(*) FROM tx_runsdesk_audit WHERE reason <> '' AND run_uuid IN (%s)`,
			count: func(r *retention.Report) *int64 { return &r.Audits }},
		{query: `DELETE FROM tx_nrllm_agentrun WHERE status NOT IN ` + nonTerminal + ` AND uid IN (%s) LIMIT ?`,
			dry: `SELECT COUNT(*) FROM tx_nrllm_agentrun WHERE status NOT IN ` + nonTerminal + ` AND uid IN (%s)`, onePerRun: true,
			count: func(r *retention.Report) *int64 { return &r.Runs }},
	},
}

// SweepRetention is one retention pass at now (docs/operations.md, retention): for each class
// (outputs, transcripts, runs) and each configuration its runs carry, under that
// configuration's policy (the default when it was deleted or hidden), the terminal runs that
// finished after the class's mark and at least the class's period before now lose, in batches of at
// most RetentionBatch rows per statement, their output text (outputs), their transcript rows
// (transcripts), or themselves with their events, transcript, output, calls, drafts,
// notifications and comments (runs), their decision rows' arguments and reasons and their audit rows'
// reasons cleared and those rows kept. A run that is not terminal is never touched. Then the
// marks move to the cutoffs and one audit row records the counts. The pass holds the desk-wide
// retention lease and answers retention.ErrBusy while another process holds it. A dry run
// takes no lease and writes nothing, and reports what the pass would remove.
func (s *Store) SweepRetention(ctx context.Context, now time.Time, dryRun bool) (retention.Report, error) {
	rep := retention.Report{DryRun: dryRun}
	if !dryRun {
		owner := newLockOwner()
		holder, _, err := takeLease(ctx, s.db, retentionLease, owner, retentionLeaseTTL)
		if err != nil {
			return rep, fmt.Errorf("db: retention: %w", err)
		}
		if holder != owner {
			return rep, retention.ErrBusy
		}
		defer renewLease(s.db, retentionLease, owner, retentionLeaseTTL)()
	}
	plan, err := s.retentionPlan(ctx)
	if err != nil {
		return rep, err
	}
	at := now.Unix()
	for _, class := range retention.Classes() {
		for _, g := range plan.groups {
			period := int64(plan.policy(g).Of(class) / time.Second)
			if period <= 0 {
				continue
			}
			from, cutoff := plan.marks[markKey{g, class}], at-period
			if cutoff <= from {
				continue
			}
			if err := s.sweepWindow(ctx, class, g, from, cutoff, &rep); err != nil {
				return rep, fmt.Errorf("db: retention: %s of configuration %d: %w", class, g, err)
			}
			if dryRun {
				continue
			}
			if _, err := execRetrying(ctx, s.db, sqlRetentionMark, g, string(class), cutoff); err != nil {
				return rep, fmt.Errorf("db: retention: mark %s of configuration %d: %w", class, g, err)
			}
		}
	}
	if dryRun {
		return rep, nil
	}
	reason := fmt.Sprintf("outputs=%d transcripts=%d runs=%d events=%d decisions=%d audits=%d",
		rep.Outputs, rep.Transcripts, rep.Runs, rep.Events, rep.Decisions, rep.Audits)
	if err := insertAudit(ctx, retryingPool{s.db}, at, runtime.Actor{Name: "retention"}, "", "retention", "", "success", reason); err != nil {
		return rep, err
	}
	return rep, nil
}

// markKey names a mark: a configuration and a class.
type markKey struct {
	configuration int64
	class         retention.Class
}

// retentionPlan is what a pass reads before it removes anything: the configurations runs
// carry, the stored policies and the marks.
type retentionPlan struct {
	groups   []int64
	policies map[int64]retention.Policy
	marks    map[markKey]int64
}

// policy is configuration uid's policy; the default when it no longer exists.
func (p retentionPlan) policy(uid int64) retention.Policy {
	if pol, ok := p.policies[uid]; ok {
		return pol
	}
	return retention.Default()
}

func (s *Store) retentionPlan(ctx context.Context) (retentionPlan, error) {
	p := retentionPlan{policies: map[int64]retention.Policy{}, marks: map[markKey]int64{}}
	var err error
	p.groups, err = queryAll(ctx, s.db, func(rows *sql.Rows) (int64, error) {
		var uid int64
		return uid, rows.Scan(&uid)
	}, sqlRetentionGroups)
	if err != nil {
		return p, fmt.Errorf("db: retention: configurations of runs: %w", err)
	}
	type policyRow struct {
		uid  int64
		kept retentionRow
	}
	pols, err := queryAll(ctx, s.db, func(rows *sql.Rows) (policyRow, error) {
		var r policyRow
		return r, rows.Scan(&r.uid, &r.kept.outputs, &r.kept.transcripts, &r.kept.runs)
	}, sqlRetentionPolicies)
	if err != nil {
		return p, fmt.Errorf("db: retention: policies: %w", err)
	}
	for _, r := range pols {
		p.policies[r.uid] = r.kept.policy()
	}
	type markRow struct {
		key markKey
		to  int64
	}
	marks, err := queryAll(ctx, s.db, func(rows *sql.Rows) (markRow, error) {
		var r markRow
		var class string
		err := rows.Scan(&r.key.configuration, &class, &r.to)
		r.key.class = retention.Class(class)
		return r, err
	}, sqlRetentionMarks)
	if err != nil {
		return p, fmt.Errorf("db: retention: marks: %w", err)
	}
	for _, m := range marks {
		p.marks[m.key] = m.to
	}
	return p, nil
}

// expiredRun is a run a batch removes content of.
type expiredRun struct {
	uid, finished int64
	uuid          string
}

// sweepWindow removes class of configuration's terminal runs that finished in (from,
// cutoff], batch by batch.
func (s *Store) sweepWindow(ctx context.Context, class retention.Class, configuration, from, cutoff int64, rep *retention.Report) error {
	lastAt, lastUID := from, int64(0)
	for {
		batch, err := queryAll(ctx, s.db, func(rows *sql.Rows) (expiredRun, error) {
			var r expiredRun
			return r, rows.Scan(&r.uid, &r.uuid, &r.finished)
		}, sqlExpiredRuns, configuration, cutoff, lastAt, lastAt, lastUID, retentionRuns)
		if err != nil {
			return fmt.Errorf("read expired runs: %w", err)
		}
		if len(batch) == 0 {
			return nil
		}
		if err := s.sweepBatch(ctx, class, batch, rep); err != nil {
			return err
		}
		if len(batch) < retentionRuns {
			return nil
		}
		last := batch[len(batch)-1]
		lastAt, lastUID = last.finished, last.uid
	}
}

// sweepBatch sends class's steps over batch: each removing statement again while it removed a
// full RetentionBatch; in a dry run, each step's count instead.
func (s *Store) sweepBatch(ctx context.Context, class retention.Class, batch []expiredRun, rep *retention.Report) error {
	uids, uuids := make([]any, len(batch)), make([]any, len(batch))
	for i, r := range batch {
		uids[i], uuids[i] = r.uid, r.uuid
	}
	in := strings.TrimSuffix(strings.Repeat("?, ", len(batch)), ", ")
	for _, st := range retentionSteps[class] {
		args := uids
		if st.byUUID {
			args = uuids
		}
		var n *int64
		if st.count != nil {
			n = st.count(rep)
		}
		if rep.DryRun {
			if n == nil {
				continue
			}
			var c int64
			if err := s.db.QueryRowContext(ctx, fmt.Sprintf(st.dry, in), args...).Scan(&c); err != nil {
				return fmt.Errorf("count %s: %w", class, err)
			}
			*n += c
			continue
		}
		query := fmt.Sprintf(st.query, in)
		for {
			res, err := execRetrying(ctx, s.db, query, append(args[:len(args):len(args)], RetentionBatch)...)
			if err != nil {
				return fmt.Errorf("remove %s: %w", class, err)
			}
			affected, err := res.RowsAffected()
			if err != nil {
				return fmt.Errorf("remove %s: %w", class, err)
			}
			rep.Statements++
			rep.Largest = max(rep.Largest, affected)
			if n != nil {
				*n += affected
			}
			if st.onePerRun || affected < RetentionBatch {
				break
			}
		}
	}
	return nil
}
