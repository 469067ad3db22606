package main

import (
	"context"
	"fmt"

	"runsdesk/bench/benchapp"
	"runsdesk/bench/benchenv"
	"runsdesk/runtime"
)

// pageSize is what the inbox page asks the store for: its default 25 runs plus one to know
// whether there is a next page.
const pageSize = 26

// runtimeScenarios call what the inbox page calls before rendering: one page of waiting runs
// with their pauses, and the counts per kind (Runtime.Inbox and Runtime.Counts); with
// storeOnly, only the Store queries beneath them (ListWaiting and CountWaiting).
func runtimeScenarios(app *benchapp.App, desk *benchenv.Desk, deep cursor, storeOnly bool) []scenario {
	actor := runtime.Actor{UserUID: 1, Name: benchenv.Users[0].Name, Role: runtime.RoleAdmin}
	filtered := runtime.WaitingQuery{Status: runtime.StatusWaitingInput,
		ConfigurationUID: desk.Configurations["refunds"], Limit: pageSize}
	page := func(q runtime.WaitingQuery) func(context.Context, int) error {
		counts := q
		counts.AfterSuspendedAt, counts.AfterUID = 0, 0
		if storeOnly {
			return func(ctx context.Context, _ int) error {
				runs, err := app.Store.ListWaiting(ctx, q)
				if err != nil {
					return err
				}
				if len(runs) == 0 {
					return fmt.Errorf("empty page")
				}
				_, err = app.Store.CountWaiting(ctx, counts)
				return err
			}
		}
		return func(ctx context.Context, _ int) error {
			views, err := app.Runtime.Inbox(ctx, actor, q, nil)
			if err != nil {
				return err
			}
			if len(views) == 0 {
				return fmt.Errorf("empty page")
			}
			for _, v := range views {
				if v.Unreadable != "" {
					return fmt.Errorf("run %s unreadable: %s", v.Run.UUID, v.Unreadable)
				}
			}
			_, err = app.Runtime.Counts(ctx, actor, counts)
			return err
		}
	}
	return []scenario{
		{name: "first", op: page(runtime.WaitingQuery{Limit: pageSize})},
		{name: "filtered", op: page(filtered)},
		{name: "deep", op: page(runtime.WaitingQuery{AfterSuspendedAt: deep.at, AfterUID: deep.uid, Limit: pageSize})},
	}
}

// cursor is a keyset position in the inbox.
type cursor struct{ at, uid int64 }

// deepCursor returns the position of the middle waiting run: the deep page starts there.
func deepCursor(ctx context.Context, app *benchapp.App, desk *benchenv.Desk) (cursor, error) {
	var c cursor
	waiting := desk.Seed.Approval + desk.Seed.Input
	err := app.Pool.QueryRowContext(ctx, `SELECT suspended_at, uid FROM tx_nrllm_agentrun
		WHERE suspended_at > 0 ORDER BY suspended_at, uid LIMIT 1 OFFSET ?`, waiting/2).Scan(&c.at, &c.uid)
	if err != nil {
		return c, fmt.Errorf("deep page cursor: %w", err)
	}
	return c, nil
}
