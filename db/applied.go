package db

import (
	"context"
	"database/sql"
	"fmt"

	"runsdesk/runtime"
)

const sqlSentNotifications = `SELECT ` + outboxColumns + ` FROM tx_runsdesk_outbox
	WHERE state = 'sent' ORDER BY crdate DESC, uid DESC LIMIT ?`

// AppliedDesk reads back what `apply -f` stored (runtime.AppliedReads): the configurations,
// the tools and the standing approvals (each table whole: one row per item applied) and the
// latest sent and given-up notifications (two index ranges), in five statements.
func (s *Store) AppliedDesk(ctx context.Context) (runtime.AppliedDesk, error) {
	var d runtime.AppliedDesk
	var err error
	if d.Configurations, err = s.Configurations(ctx); err != nil {
		return d, err
	}
	if d.Tools, err = s.ToolDefinitions(ctx); err != nil {
		return d, err
	}
	if d.StandingApprovals, err = s.StandingApprovals(ctx); err != nil {
		return d, err
	}
	if d.Failed, err = s.Notifications(ctx, true, runtime.AppliedNotifications); err != nil {
		return d, err
	}
	d.Sent, err = queryAll(ctx, s.db, func(rows *sql.Rows) (runtime.Notification, error) { return scanNotification(rows) },
		sqlSentNotifications, runtime.AppliedNotifications)
	if err != nil {
		return d, fmt.Errorf("db: sent notifications: %w", err)
	}
	return d, nil
}
