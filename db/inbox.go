package db

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"runsdesk/runtime"
)

// Page size bounds of ListWaiting and ListRecent.
const (
	minPage = 1
	maxPage = 200
)

const sqlRecent = `SELECT ` + runColumns + `, ` + expiryColumn + ` FROM tx_nrllm_agentrun r WHERE finished_at > 0`

const sqlRecentAfter = ` AND (finished_at < ? OR (finished_at = ? AND uid < ?))`

const sqlRecentOrder = ` ORDER BY finished_at DESC, uid DESC LIMIT ?`

const sqlQueued = `SELECT uid FROM tx_nrllm_agentrun WHERE status = 'queued' AND retry_at <= ?
	ORDER BY crdate, uid LIMIT ?`

const sqlStale = `SELECT ` + runColumns + ` FROM tx_nrllm_agentrun
	WHERE status = 'running' AND lease_expires > 0 AND lease_expires < ?
	ORDER BY lease_expires, uid LIMIT ?`

func clampPage(n int) int {
	return min(max(n, minPage), maxPage)
}

// waitingFilter builds the WHERE clause shared by ListWaiting and CountWaiting over
// tx_nrllm_agentrun r (and, with q.Search, be_users u and tx_nrllm_configuration c, see
// waitingJoins): suspended_at > 0 plus q's filters (Status only when withStatus). Only fixed
// SQL text is concatenated; every value travels as a placeholder argument.
func waitingFilter(q runtime.WaitingQuery, withStatus bool) (string, []any) {
	return runFilter(` WHERE r.suspended_at > 0`, nil, q, withStatus)
}

// runFilter is waitingFilter's clause on another base (fixed SQL text with its arguments), so
// that every list of runs filters and searches as the inbox does.
func runFilter(base string, baseArgs []any, q runtime.WaitingQuery, withStatus bool) (string, []any) {
	var b strings.Builder
	args := make([]any, 0, 12+len(baseArgs))
	b.WriteString(base)
	args = append(args, baseArgs...)
	if withStatus && q.Status != "" {
		b.WriteString(` AND r.status = ?`)
		args = append(args, string(q.Status))
	}
	if q.ConfigurationUID > 0 {
		b.WriteString(` AND r.configuration_uid = ?`)
		args = append(args, q.ConfigurationUID)
	}
	if q.Tool != "" {
		b.WriteString(` AND FIND_IN_SET(?, r.pending_tools) > 0`)
		args = append(args, q.Tool)
	}
	if q.WaitingSince > 0 {
		b.WriteString(` AND r.suspended_at <= ?`)
		args = append(args, q.WaitingSince)
	}
	if q.UUIDPrefix != "" {
		b.WriteString(` AND r.uuid LIKE ? ESCAPE '!'`)
		args = append(args, likePrefix(q.UUIDPrefix))
	}
	if q.ExpiringBefore > 0 {
		b.WriteString(` AND r.expires_at > 0 AND r.expires_at <= ?`)
		args = append(args, q.ExpiringBefore)
	}
	if q.Escalated {
		b.WriteString(` AND r.escalated = 1`)
	}
	if q.Assignee > 0 || q.Unassigned {
		b.WriteString(` AND r.assignee = ?`)
		args = append(args, q.Assignee)
	}
	if q.ByExpiry {
		b.WriteString(` AND r.expires_at > 0`)
	}
	if q.Search != "" {
		b.WriteString(` AND (r.uuid LIKE ? ESCAPE '!' OR r.configuration_identifier LIKE ? ESCAPE '!'
			OR c.name LIKE ? ESCAPE '!' OR r.pending_tools LIKE ? ESCAPE '!' OR u.username COLLATE utf8mb4_unicode_ci LIKE ? ESCAPE '!'
			OR r.subject LIKE ? ESCAPE '!' OR r.started_by_service LIKE ? ESCAPE '!')`)
		within := likeWithin(q.Search)
		args = append(args, likePrefix(q.Search), within, within, within, within, within, within)
	}
	return b.String(), args
}

// waitingJoins are the tables a waiting-run query joins to tx_nrllm_agentrun r, each by its
// primary key: be_users u (who started the run) when the list shows it (listing) or q.Search
// looks for it, tx_nrllm_configuration c (its name) when q.Search looks for it.
func waitingJoins(q runtime.WaitingQuery, listing bool) string {
	var out string
	if listing || q.Search != "" {
		out += ` LEFT JOIN be_users u ON u.uid = r.be_user`
	}
	if q.Search != "" {
		out += ` LEFT JOIN tx_nrllm_configuration c ON c.uid = r.configuration_uid`
	}
	return out
}

// maxSearch is the length of the longest column a search looks in (pending_tools): a longer
// text matches no run.
const maxSearch = 1024

// searchesNothing reports whether q.Search is too long to match any run.
func searchesNothing(q runtime.WaitingQuery) bool { return len(q.Search) > maxSearch }

var likeEscaper = strings.NewReplacer("!", "!!", "%", "!%", "_", "!_")

// likePrefix turns s into a LIKE pattern matching strings that start with s literally.
func likePrefix(s string) string {
	return likeEscaper.Replace(s) + "%"
}

// likeWithin turns s into a LIKE pattern matching strings that contain s literally.
func likeWithin(s string) string {
	return "%" + likeEscaper.Replace(s) + "%"
}

// ListWaiting returns one keyset page of paused runs (suspended_at > 0), longest-waiting
// first (suspended_at, uid ascending), strictly after (q.AfterSuspendedAt, q.AfterUID), with
// q's filters: Status, ConfigurationUID, Tool (one of the pause's tools), WaitingSince
// (paused at or before), UUIDPrefix (literal prefix), Search (see runtime.WaitingQuery),
// ExpiringBefore, Escalated, ByExpiry (only pauses with an expiry, soonest first). q.Limit
// is clamped to 1..200. A row with an unknown status is returned as stored. Each run carries
// StartedBy, read in the same statement. A store failure is an error, never an empty page.
func (s *Store) ListWaiting(ctx context.Context, q runtime.WaitingQuery) ([]runtime.Run, error) {
	if searchesNothing(q) {
		return []runtime.Run{}, nil
	}
	if q.ByExpiry && q.Status == "" && q.UUIDPrefix == "" {
		return s.listByExpiry(ctx, q)
	}
	where, args := waitingFilter(q, true)
	query := `SELECT ` + listedColumns + ` FROM tx_nrllm_agentrun r` + waitingIndex(q) + waitingJoins(q, true) + where
	switch {
	case q.ByExpiry:
		if q.AfterExpiresAt > 0 || q.AfterUID > 0 {
			query += ` AND (r.expires_at > ? OR (r.expires_at = ? AND r.uid > ?))`
			args = append(args, q.AfterExpiresAt, q.AfterExpiresAt, q.AfterUID)
		}
		query += ` ORDER BY r.expires_at, r.uid LIMIT ?`
	default:
		if q.AfterSuspendedAt > 0 || q.AfterUID > 0 {
			query += ` AND (r.suspended_at > ? OR (r.suspended_at = ? AND r.uid > ?))`
			args = append(args, q.AfterSuspendedAt, q.AfterSuspendedAt, q.AfterUID)
		}
		query += ` ORDER BY r.suspended_at, r.uid LIMIT ?`
	}
	args = append(args, clampPage(q.Limit))
	runs, err := queryPage(ctx, s.lists.on(nil), clampPage(q.Limit), newListedScanner(s.states).scan, query, args...)
	if err != nil {
		return nil, fmt.Errorf("db: list waiting runs: %w", err)
	}
	for i := range runs {
		s.openRun(&runs[i], false)
	}
	return runs, nil
}

// listByExpiry is ListWaiting by expiry over both pause kinds: one page of each kind, each
// read in list order on KEY waiting_expires, merged (expires_at, uid) and cut to the page, so
// the page costs two index ranges however many runs wait.
func (s *Store) listByExpiry(ctx context.Context, q runtime.WaitingQuery) ([]runtime.Run, error) {
	var all []runtime.Run
	for _, st := range []runtime.Status{runtime.StatusWaitingApproval, runtime.StatusWaitingInput} {
		one := q
		one.Status = st
		runs, err := s.ListWaiting(ctx, one)
		if err != nil {
			return nil, err
		}
		all = append(all, runs...)
	}
	slices.SortFunc(all, func(a, b runtime.Run) int {
		return cmp.Or(cmp.Compare(a.ExpiresAt, b.ExpiresAt), cmp.Compare(a.UID, b.UID))
	})
	return all[:min(len(all), clampPage(q.Limit))], nil
}

// listedColumns are the columns of a waiting run a list row shows (runtime.Store.ListWaiting):
// what identifies the run, who owns it (their username, or the service account that started
// it), what it waits for (its tools and subject) and since when.
const listedColumns = `r.uid, r.uuid, r.status, r.configuration_uid, r.configuration_identifier, r.be_user,
	r.suspended_state, r.pending_tools, r.suspended_at, COALESCE(u.username, ''), r.expires_at, r.escalated,
	r.subject, r.started_by_service, r.assignee, r.assignee_name`

// listedScanner reads rows selected with listedColumns into one set of destinations reused
// for every row of a query; the status is taken verbatim and a run's state shared with the
// last read of the same text (Store.states).
type listedScanner struct {
	states *stateTexts
	run    runtime.Run
	status string
	state  sql.RawBytes
	dest   []any
}

func newListedScanner(states *stateTexts) *listedScanner {
	sc := &listedScanner{states: states}
	r := &sc.run
	sc.dest = []any{&r.UID, &r.UUID, &sc.status, &r.ConfigurationUID, &r.ConfigurationIdentifier,
		&r.BeUser, &sc.state, &r.PendingTools, &r.SuspendedAt, &r.StartedBy, &r.ExpiresAt, &r.Escalated,
		&r.Subject, &r.StartedByService, &r.Assignee, &r.AssigneeName}
	return sc
}

// scan reads the current row.
func (sc *listedScanner) scan(rows *sql.Rows) (runtime.Run, error) {
	if err := rows.Scan(sc.dest...); err != nil {
		return runtime.Run{}, err
	}
	r := sc.run
	r.Status = runtime.Status(sc.status)
	r.SuspendedState = sc.states.text(r.UID, sc.state)
	return r, nil
}

// waitingIndex is ListWaiting's index hint: a page of one pause kind (Status) reads KEY
// waiting_status in list order, so its cost is the rows read until the page is full whatever
// the table's size or statistics (left to itself, the optimizer sometimes filtered KEY waiting
// through a rowid filter built from thousands of KEY stale entries per page). A uuid prefix,
// selective on its own, is left to the optimizer (KEY run_uuid); a page of one assignee's
// (or the unassigned) runs reads KEY waiting_assignee in list order, of either kind.
func waitingIndex(q runtime.WaitingQuery) string {
	switch {
	case q.UUIDPrefix != "":
		return ""
	case (q.Assignee > 0 || q.Unassigned) && !q.ByExpiry:
		return ` FORCE INDEX (waiting_assignee)`
	case q.Status == "":
		return ""
	case q.ByExpiry:
		return ` FORCE INDEX (waiting_expires)`
	}
	return ` FORCE INDEX (waiting_status)`
}

// CountWaiting counts paused runs per pause kind, with q's filters (ByExpiry's among them: only
// pauses with an expiry) except Status and paging,
// reading at most runtime.MaxCounted+1 rows so its cost does not grow with the table: beyond
// that, Capped is set and the counts are lower bounds. Rows with another status are not
// counted.
func (s *Store) CountWaiting(ctx context.Context, q runtime.WaitingQuery) (runtime.WaitingCounts, error) {
	if searchesNothing(q) {
		return runtime.WaitingCounts{}, nil
	}
	where, args := waitingFilter(q, false)
	args = append([]any{string(runtime.StatusWaitingApproval), string(runtime.StatusWaitingInput)}, args...)
	args = append(args, runtime.MaxCounted+1)
	var approval, input, total int
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(SUM(status = ?), 0), COALESCE(SUM(status = ?), 0), COUNT(*)
		FROM (SELECT r.status FROM tx_nrllm_agentrun r FORCE INDEX (waiting_counts)`+waitingJoins(q, false)+where+` LIMIT ?) capped`, args...).
		Scan(&approval, &input, &total)
	if err != nil {
		return runtime.WaitingCounts{}, fmt.Errorf("db: count waiting runs: %w", err)
	}
	return runtime.WaitingCounts{Approval: approval, Input: input, Capped: total > runtime.MaxCounted}, nil
}

// ListRecent returns one keyset page of finished runs (finished_at > 0), newest first
// (finished_at, uid descending), strictly before (q.BeforeFinishedAt, q.BeforeUID) when
// either is set, each with what its latest expiry did (Run.Expiry). q.Limit is clamped to 1..200.
func (s *Store) ListRecent(ctx context.Context, q runtime.RecentQuery) ([]runtime.Run, error) {
	query := sqlRecent
	args := make([]any, 0, 4)
	if q.BeforeFinishedAt > 0 || q.BeforeUID > 0 {
		query += sqlRecentAfter
		args = append(args, q.BeforeFinishedAt, q.BeforeFinishedAt, q.BeforeUID)
	}
	query += sqlRecentOrder
	args = append(args, clampPage(q.Limit))
	runs, err := s.queryRunsWithExpiry(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("db: list recent runs: %w", err)
	}
	return runs, nil
}

// queryRunsWithExpiry reads whole runs selected with runColumns followed by expiryColumn.
func (s *Store) queryRunsWithExpiry(ctx context.Context, query string, args ...any) ([]runtime.Run, error) {
	return queryAll(ctx, s.db, func(rows *sql.Rows) (runtime.Run, error) {
		var expiry string
		r, err := scanRun(scanFunc(func(dest ...any) error { return rows.Scan(append(dest, &expiry)...) }))
		r.Expiry = expiry
		s.openRun(&r, true)
		return r, err
	}, query, args...)
}

// ListQueued returns up to limit (clamped to 1..200) uids of queued runs that may be claimed
// at now (retry_at <= now), oldest first.
func (s *Store) ListQueued(ctx context.Context, now int64, limit int) ([]int64, error) {
	uids, err := queryAll(ctx, s.prep.on(nil), scanInt64, sqlQueued, now, clampPage(limit))
	if err != nil {
		return nil, fmt.Errorf("db: list queued runs: %w", err)
	}
	return uids, nil
}

// FindStale returns up to limit (clamped to 1..200) running runs whose lease lapsed before
// now (0 < lease_expires < now), oldest lease first. Waiting runs have no lease and never
// appear.
func (s *Store) FindStale(ctx context.Context, now int64, limit int) ([]runtime.Run, error) {
	runs, err := s.queryRuns(ctx, sqlStale, now, clampPage(limit))
	if err != nil {
		return nil, fmt.Errorf("db: find stale runs: %w", err)
	}
	return runs, nil
}

func (s *Store) queryRuns(ctx context.Context, query string, args ...any) ([]runtime.Run, error) {
	return queryAll(ctx, s.db, func(rows *sql.Rows) (runtime.Run, error) {
		r, err := scanRun(rows)
		s.openRun(&r, true)
		return r, err
	}, query, args...)
}
